// Package storetest holds what the tests of the Postgres stores share: a
// running ledger writer with its command handler, random ids, the stored
// events, and the read models fed the way the projector feeds them.
package storetest

import (
	"context"
	"errors"
	"hash/fnv"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/readstore"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/commands/ledgertest"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/projections"
)

// NewUUID returns a random version 4 UUID in its canonical text.
func NewUUID() string { return ledgertest.UUIDs{}.NewID() }

// UID returns prefix and a random suffix: an id no other test uses.
func UID(prefix string) string { return prefix + "-" + NewUUID()[:8] }

// Logger logs warnings and errors to the test's output.
func Logger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// RunLedger starts l.Run until the test ends.
func RunLedger(t testing.TB, l *eventstore.Ledger) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ledger run: %v", err)
		}
	})
}

// StartLedger runs a ledger writer on pool until the test ends and returns
// it with a command handler over it (wall clock, random UUIDs).
func StartLedger(t testing.TB, pool *pgxpool.Pool, cfg eventstore.LedgerConfig) (*eventstore.Ledger, *commands.Handler) {
	t.Helper()
	l, err := eventstore.NewLedger(pool, cfg, Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	RunLedger(t, l)
	return l, commands.NewHandler(l, ledgertest.WallClock{}, ledgertest.UUIDs{})
}

// EventCount is the number of events in the store.
func EventCount(t testing.TB, pool *pgxpool.Pool) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM events`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// StoredEvents reads the event store in position order.
func StoredEvents(t testing.TB, pool *pgxpool.Pool, after int64) []domain.Event {
	t.Helper()
	rows, _ := pool.Query(context.Background(), `SELECT body FROM events WHERE position > $1 ORDER BY position`, after)
	evs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (domain.Event, error) {
		var b []byte
		if err := r.Scan(&b); err != nil {
			return domain.Event{}, err
		}
		return domain.DecodeBody(b)
	})
	if err != nil {
		t.Fatalf("read events: %v", err)
	}
	return evs
}

// ApplyLive applies events to every projection the way the projector does:
// streams spread over partitions, each partition in its own goroutine in
// stream order, so streams interleave differently from position order.
func ApplyLive(t testing.TB, rm *readstore.ReadModels, evs []domain.Event, partitions int) {
	t.Helper()
	parts := make([][]domain.Event, partitions)
	for _, e := range evs {
		h := fnv.New32a()
		h.Write([]byte(e.StreamID))
		i := int(h.Sum32()) % partitions
		parts[i] = append(parts[i], e)
	}
	var wg sync.WaitGroup
	errs := make(chan error, partitions*len(projections.All))
	for _, n := range projections.All {
		p, err := projections.ByName(n)
		if err != nil {
			t.Fatal(err)
		}
		for _, part := range parts {
			wg.Go(func() {
				for _, e := range part {
					if err := ApplyOne(rm, p, e); err != nil {
						errs <- err
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, n := range projections.All {
		if _, err := rm.Advance(context.Background(), n); err != nil {
			t.Fatalf("advance %s: %v", n, err)
		}
	}
}

// ApplyOne applies e to p, retrying what the projector retries (row-lock
// deadlocks between partitions) and nothing else.
func ApplyOne(rm *readstore.ReadModels, p projections.Projection, e domain.Event) error {
	for attempt := 0; ; attempt++ {
		_, err := rm.Apply(context.Background(), p, e)
		if err == nil || attempt == 20 || errors.Is(err, projections.ErrInvalidEvent) {
			return err
		}
		var gap *projections.GapError
		if errors.As(err, &gap) {
			return err
		}
		time.Sleep(time.Duration(attempt+1) * time.Millisecond)
	}
}
