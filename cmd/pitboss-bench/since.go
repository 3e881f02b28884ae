package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres/auditstore"
	"github.com/pitboss/pitboss/adapters/postgres/logstore"
	"github.com/pitboss/pitboss/adapters/secretbox"
	"github.com/pitboss/pitboss/ledgerlog"
)

// The read side's incremental verification (docs/audit.md, "Incremental
// verification"): the verifiable log built over the generated ledger in
// builder passes, a checkpoint signed when it held all but the last day
// of events (the last sinceDay events, or a tenth of a smaller ledger),
// the rest built, then `pitboss verify --since` that checkpoint: the
// day's events checked, whatever the ledger's size.

// benchLogOrigin is the read service's log origin (PITBOSS_LOG_ORIGIN).
const benchLogOrigin = "bench.pitboss.local/ledger"

// sinceDay is the events of "the day" after the checkpoint.
const sinceDay = 100_000

// SinceTiming is the log's build and `pitboss verify --since` on the day.
type SinceTiming struct {
	BuildSeconds      float64 `json:"build_seconds"`           // every builder pass over the ledger
	BuildEventsPerSec float64 `json:"build_events_per_second"` // the log's build rate
	DayEvents         int64   `json:"day_events"`
	Seconds           float64 `json:"seconds"`
	EventsPerSec      float64 `json:"events_per_second"` // the day's events / Seconds: the whole command
	PeakRSSMB         float64 `json:"peak_rss_mb"`
	OK                bool    `json:"ok"`
	Summary           string  `json:"summary"`
}

// timeSince builds the log, signs the checkpoint before the day and runs
// `pitboss verify --since` on it. A ledger that does not verify fails the
// benchmark.
func timeSince(ctx context.Context, pool *pgxpool.Pool, svc *service, events int64, logf func(string, ...any)) (SinceTiming, error) {
	var st SinceTiming
	st.DayEvents = min(sinceDay, max(events/10, 1))
	box, err := secretbox.New([]byte(randomHex(16)))
	if err != nil {
		return st, err
	}
	cps := auditstore.NewCheckpoints(pool, box)
	if _, err := cps.RotateKey(ctx); err != nil {
		return st, err
	}
	store := logstore.New(pool)
	logf("read: building the verifiable log over %d events", events)
	t0 := time.Now()
	if err := buildLogTo(ctx, pool, store, events-st.DayEvents); err != nil {
		return st, err
	}
	if _, err := store.SignDue(ctx, benchLogOrigin, cps, 0, time.Now()); err != nil {
		return st, err
	}
	if err := buildLogTo(ctx, pool, store, events); err != nil {
		return st, err
	}
	st.BuildSeconds = time.Since(t0).Seconds()
	st.BuildEventsPerSec = float64(events) / st.BuildSeconds
	logf("read: log built in %.1fs (%.0f events/s)", st.BuildSeconds, st.BuildEventsPerSec)
	// The log was built in one go, not as the ledger grew: vacuumed as
	// autovacuum keeps a log that grows, so that its vacuum of the bulk
	// does not run under the command measured next.
	t0 = time.Now()
	if err := vacuum(ctx, pool, "log_leaves", "log_tiles", "log_trees", "log_checkpoints"); err != nil {
		return st, err
	}
	logf("read: log tables vacuumed in %s", time.Since(t0).Round(time.Second))
	cp, err := store.CheckpointOfSize(ctx, ledgerlog.PlatformLog, events-st.DayEvents)
	if err != nil {
		return st, err
	}
	file := filepath.Join(svc.dataDir, "since.checkpoint")
	if err := os.WriteFile(file, cp.Note, 0o600); err != nil {
		return st, err
	}
	logf("read: pitboss verify --since (the last %d events)", st.DayEvents)
	t0 = time.Now()
	out, err := svc.command(ctx, "verify", "--since", file, "--quiet", "--batch", "4096")
	st.Seconds = time.Since(t0).Seconds()
	st.Summary = lastLines(out, 12)
	st.PeakRSSMB = svc.lastPeakRSSMB
	if err != nil {
		return st, err
	}
	st.OK = true
	st.EventsPerSec = float64(st.DayEvents) / st.Seconds
	logf("read: verify --since took %.2fs (%.0f events/s over the whole command); peak RSS %.0f MB",
		st.Seconds, st.EventsPerSec, st.PeakRSSMB)
	return st, nil
}

// buildLogTo runs builder passes until the platform log holds size
// events, none beyond.
func buildLogTo(ctx context.Context, pool *pgxpool.Pool, store *logstore.Store, size int64) error {
	for {
		tree, err := store.Tree(ctx, ledgerlog.PlatformLog)
		if err != nil {
			return err
		}
		left := size - tree.Size
		if left <= 0 {
			return nil
		}
		n, err := logstore.NewBuilder(pool, int(min(left, 20_000)), nil).Pass(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("log builder: no progress at %d of %d events", tree.Size, size)
		}
	}
}
