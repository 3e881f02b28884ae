package relay_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/kafka"
	"github.com/pitboss/pitboss/adapters/kafka/kafkatest"
	"github.com/pitboss/pitboss/adapters/relay"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/internal/eventually"
)

// writerLockKey stands in for the ledger writer's batch lock.
const writerLockKey int64 = 0x5049_5442_4f53_5301

// newEvent builds an event and its canonical body.
func newEvent(stream string, version, position int64) (domain.Event, []byte) {
	e := domain.Event{
		ID: uuid.NewString(), Type: domain.EventDeposited, StreamID: domain.AccountID(stream),
		Version: version, Position: position, OccurredAt: time.Now().UTC(),
		Data: domain.EventData{ClientID: "c1", Currency: "EUR", Amount: "1.00",
			Postings: []domain.Posting{{Account: domain.AccountID(stream), Amount: "1.00"}, {Account: "house", Amount: "-1.00"}}},
		Meta: domain.Metadata{RequestID: "req-" + strconv.FormatInt(position, 10), CorrelationID: "corr-" + stream},
	}
	body, err := domain.EncodeBody(e)
	if err != nil {
		panic(err)
	}
	return e, body
}

var eventColumns = []string{"position", "event_id", "stream_id", "stream_version", "event_type", "occurred_at", "body", "prev_hash", "hash"}

func eventRow(e domain.Event, body []byte) []any {
	h := sha256.Sum256(body)
	return []any{e.Position, e.ID, string(e.StreamID), e.Version, string(e.Type), e.OccurredAt, json.RawMessage(body), domain.GenesisHash, h[:]}
}

// insertRaw inserts one event in tx, with tx's id as tx_id.
func insertRaw(t testing.TB, ctx context.Context, tx pgx.Tx, e domain.Event, body []byte) {
	t.Helper()
	_, err := tx.Exec(ctx, `INSERT INTO events (position, event_id, stream_id, stream_version, event_type, occurred_at, body, prev_hash, hash)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, eventRow(e, body)...)
	if err != nil {
		t.Fatalf("insert event %d: %v", e.Position, err)
	}
}

// writeBatch appends n events spread over streams the way the ledger
// writer does: batch lock first, then positions and versions, one commit,
// one notification.
func writeBatch(ctx context.Context, pool *pgxpool.Pool, streams []string, n int) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, writerLockKey); err != nil {
		return err
	}
	var pos int64
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(position), 0) FROM events`).Scan(&pos); err != nil {
		return err
	}
	versions := map[string]int64{}
	rows, _ := tx.Query(ctx, `SELECT stream_id, max(stream_version) FROM events GROUP BY stream_id`)
	var s string
	var v int64
	if _, err := pgx.ForEachRow(rows, []any{&s, &v}, func() error { versions[s] = v; return nil }); err != nil {
		return err
	}
	batch := make([][]any, 0, n)
	for i := range n {
		stream := streams[(int(pos)+i)%len(streams)]
		versions[stream]++
		e, body := newEvent(stream, versions[stream], pos+int64(i)+1)
		batch = append(batch, eventRow(e, body))
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"events"}, eventColumns, pgx.CopyFromRows(batch)); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `SELECT pg_notify($1, '')`, relay.NotifyChannel); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

func streamsNamed(prefix string, n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return s
}

// running is a relay started by startRelay.
type running struct {
	*relay.Relay
	cancel context.CancelFunc
	done   chan error
}

// stop cancels the relay and waits for Run to return.
func (r *running) stop(t testing.TB) {
	t.Helper()
	r.cancel()
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		r.done <- nil // a second stop returns at once
	case <-time.After(30 * time.Second):
		t.Fatal("relay did not stop within 30s of its cancel")
	}
}

func startRelay(t testing.TB, pool *pgxpool.Pool, pub message.Publisher, cfg relay.Config) *running {
	t.Helper()
	r, err := relay.New(pool, pub, cfg, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rr := &running{Relay: r, cancel: cancel, done: make(chan error, 1)}
	go func() { rr.done <- r.Run(ctx) }()
	t.Cleanup(func() { rr.stop(t) })
	return rr
}

func testLogger() *slog.Logger {
	if os.Getenv("PITBOSS_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

func newPublisher(t testing.TB, brokers []string) message.Publisher {
	t.Helper()
	p, err := kafka.NewBatchPublisher(brokers, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// caughtUp reports whether the checkpoint named name is at the last event.
func caughtUp(t testing.TB, pool *pgxpool.Pool, name string) bool {
	t.Helper()
	var ok bool
	err := pool.QueryRow(context.Background(), `
		SELECT coalesce((SELECT (c.tx_id, c.position) = (e.tx_id, e.position)
		  FROM relay_checkpoints c,
		       (SELECT tx_id, position FROM events ORDER BY tx_id DESC, position DESC LIMIT 1) e
		  WHERE c.name = $1), false)`, name).Scan(&ok)
	if err != nil {
		t.Fatalf("checkpoint: %v", err)
	}
	return ok
}

// waitCaughtUp waits until r has stored the checkpoint of the last event
// and counted it in its stats.
func waitCaughtUp(t testing.TB, pool *pgxpool.Pool, r *running, timeout time.Duration) {
	t.Helper()
	var last int64
	eventually.True(t, timeout, "the relay to catch up", func() bool {
		if !caughtUp(t, pool, relay.DefaultName) {
			return false
		}
		if last == 0 {
			if err := pool.QueryRow(context.Background(), `SELECT position FROM relay_checkpoints WHERE name = $1`, relay.DefaultName).Scan(&last); err != nil {
				t.Fatal(err)
			}
		}
		return r.Stats().Position == last
	})
}

// terminateLeader ends the leader's database session, as a crash or a
// network cut would, and returns how many sessions it ended.
func terminateLeader(t testing.TB, pool *pgxpool.Pool) int {
	t.Helper()
	var killed int
	err := pool.QueryRow(context.Background(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = 'pitboss-relay:'||$1`, relay.DefaultName).Scan(&killed)
	if err != nil {
		t.Fatalf("terminate leader: %v", err)
	}
	return killed
}

// stored is an event as the table has it.
type stored struct {
	id, stream string
	version    int64
	position   int64
	body       string
	hash       []byte
}

func storedEvents(t testing.TB, pool *pgxpool.Pool) map[string]stored {
	t.Helper()
	rows, _ := pool.Query(context.Background(),
		`SELECT event_id::text, stream_id, stream_version, position, body::text, hash FROM events`)
	out := map[string]stored{}
	var s stored
	_, err := pgx.ForEachRow(rows, []any{&s.id, &s.stream, &s.version, &s.position, &s.body, &s.hash}, func() error {
		out[s.id] = s
		return nil
	})
	if err != nil {
		t.Fatalf("read events: %v", err)
	}
	return out
}

// readTopic reads topic until it holds every event of want (by event id).
func readTopic(t testing.TB, brokers []string, topic string, want map[string]stored) []kafkatest.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	seen := map[string]bool{}
	recs, err := kafkatest.ReadUntil(ctx, brokers, topic, func(r []kafkatest.Record) bool {
		seen[r[len(r)-1].Headers[kafka.HeaderEventID]] = true
		return len(seen) >= len(want)
	})
	if err != nil {
		t.Fatalf("read %s: %v (%d records, %d distinct, want %d)", topic, err, len(recs), len(seen), len(want))
	}
	return recs
}

// checkRecords checks that the records are exactly the events of want, at
// least once each, with the right key, headers and payload, and that no
// stream skips ahead: a record of version v comes only after every version
// below v of its stream (in its partition's order).
func checkRecords(t testing.TB, recs []kafkatest.Record, want map[string]stored) (duplicates int) {
	t.Helper()
	seen := map[string]bool{}
	// A stream starts at its lowest stored version (raw test inserts may
	// leave a rolled-back hole below it).
	maxVersion := map[string]int64{}
	for _, e := range want {
		if v, ok := maxVersion[e.stream]; !ok || e.version-1 < v {
			maxVersion[e.stream] = e.version - 1
		}
	}
	partition := map[string]int32{}
	for _, r := range recs {
		id := r.Headers[kafka.HeaderEventID]
		e, ok := want[id]
		if !ok {
			t.Errorf("record %d/%d: event %q is not in the table", r.Partition, r.Offset, id)
			continue
		}
		if seen[id] {
			duplicates++
		}
		seen[id] = true
		if r.Key != e.stream {
			t.Errorf("event %s: key %q, want stream %q", id, r.Key, e.stream)
		}
		if p, ok := partition[e.stream]; ok && p != r.Partition {
			t.Errorf("stream %s on partitions %d and %d", e.stream, p, r.Partition)
		}
		partition[e.stream] = r.Partition
		if e.version > maxVersion[e.stream]+1 {
			t.Errorf("stream %s: version %d published before version %d", e.stream, e.version, maxVersion[e.stream]+1)
		}
		maxVersion[e.stream] = max(maxVersion[e.stream], e.version)
		if string(r.Value) != e.body {
			t.Errorf("event %s: payload differs from the stored body", id)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("%d distinct events on the topic, %d in the table", len(seen), len(want))
	}
	return duplicates
}

// flakyPublisher fails its first failures calls, then delegates.
type flakyPublisher struct {
	message.Publisher
	mu       sync.Mutex
	failures int
	calls    int
}

func (p *flakyPublisher) Publish(topic string, msgs ...*message.Message) error {
	p.mu.Lock()
	p.calls++
	fail := p.calls <= p.failures
	p.mu.Unlock()
	if fail {
		return fmt.Errorf("injected failure %d", p.calls)
	}
	return p.Publisher.Publish(topic, msgs...)
}

func hexOf(b []byte) string { return hex.EncodeToString(b) }
