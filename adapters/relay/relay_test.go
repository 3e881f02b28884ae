package relay_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/kafka"
	"github.com/pitboss/pitboss/adapters/kafka/kafkatest"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/relay"
	"github.com/pitboss/pitboss/internal/eventually"
)

// Position 1 is allocated before position 2 but commits after it. The relay
// must hold position 2 back while 1 is in flight, then publish 1 before 2.
// If the first transaction rolls back, 2 goes out alone.
func TestGapSafeCommitOrder(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		commitA bool
		want    []int64
	}{
		{name: "older transaction commits last", commitA: true, want: []int64{1, 2}},
		{name: "older transaction rolls back", commitA: false, want: []int64{2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			pool, _ := pgtest.NewDatabase(t)
			brokers := kafkatest.Brokers(t)
			topic := kafkatest.NewTopic(t, brokers, 3)

			txA, err := pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer txA.Rollback(ctx)
			e1, b1 := newEvent("acct-gap", 1, 1)
			insertRaw(t, ctx, txA, e1, b1) // takes its xid and position 1, stays open

			txB, err := pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			e2, b2 := newEvent("acct-gap", 2, 2)
			insertRaw(t, ctx, txB, e2, b2)
			if err := txB.Commit(ctx); err != nil {
				t.Fatal(err)
			}

			r := startRelay(t, pool, newPublisher(t, brokers), relay.Config{Topic: topic, PollInterval: 20 * time.Millisecond})
			eventually.True(t, 10*time.Second, "the relay to lead and poll", func() bool {
				s := r.Stats()
				return s.Leader && s.Polls >= 10
			})
			if n, err := kafkatest.Count(ctx, brokers, topic); err != nil || n != 0 {
				t.Fatalf("with position 1 in flight the topic holds %d records (err %v), want 0", n, err)
			}
			if s := r.Stats(); s.Published != 0 || s.Position != 0 {
				t.Fatalf("relay published while position 1 was in flight: %+v", s)
			}

			if tc.commitA {
				err = txA.Commit(ctx)
			} else {
				err = txA.Rollback(ctx)
			}
			if err != nil {
				t.Fatal(err)
			}

			want := storedEvents(t, pool)
			recs := readTopic(t, brokers, topic, want)
			checkRecords(t, recs, want)
			var got []int64
			for _, rec := range recs {
				p, _ := strconv.ParseInt(rec.Headers[kafka.HeaderPosition], 10, 64)
				got = append(got, p)
			}
			if !equal(got, tc.want) {
				t.Errorf("positions on the topic = %v, want %v", got, tc.want)
			}
		})
	}
}

// The relay is cancelled again and again while 2,000 events stream in from
// two writers. Every event reaches Kafka, in per-stream order, and the
// distinct event ids on the topic are exactly those in the table.
func TestKillAndRestart(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	brokers := kafkatest.Brokers(t)
	topic := kafkatest.NewTopic(t, brokers, 4)
	pub := newPublisher(t, brokers)
	cfg := relay.Config{Topic: topic, BatchSize: 100, PollInterval: 20 * time.Millisecond, StandbyRetry: 50 * time.Millisecond}

	const total, writers = 2000, 2
	streams := streamsNamed("acct-kill", 8)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 42))
			for left := total / writers; left > 0; {
				n := min(left, 1+rng.IntN(40))
				if err := writeBatch(ctx, pool, streams, n); err != nil {
					errs <- err
					return
				}
				left -= n
				// Paced, so the writing lasts about a second however fast
				// the machine: the relay is killed mid-stream several times.
				time.Sleep(time.Duration(10+rng.IntN(20)) * time.Millisecond)
			}
		})
	}
	writing := make(chan struct{})
	go func() { wg.Wait(); close(writing) }()

	restarts := 0
	r := startRelay(t, pool, pub, cfg)
	for done := false; !done; {
		select {
		case <-writing:
			done = true
		case <-time.After(time.Duration(30+rand.IntN(120)) * time.Millisecond):
			if restarts%2 == 0 {
				// A stop: Run returns, a new instance starts.
				r.stop(t)
				r = startRelay(t, pool, pub, cfg)
			} else {
				// A crash as the database sees it: the session dies,
				// maybe between a publish and its checkpoint.
				terminateLeader(t, pool)
			}
			restarts++
		}
	}
	close(errs)
	for err := range errs {
		t.Fatalf("writer: %v", err)
	}
	eventually.True(t, 60*time.Second, "the relay to catch up", func() bool { return caughtUp(t, pool, relay.DefaultName) })

	want := storedEvents(t, pool)
	if len(want) != total {
		t.Fatalf("table holds %d events, want %d", len(want), total)
	}
	recs := readTopic(t, brokers, topic, want)
	dups := checkRecords(t, recs, want)
	t.Logf("%d events, %d relay stops and session kills, %d leader terms of the last instance, %d records on the topic (%d republished)",
		total, restarts, r.Stats().Terms, len(recs), dups)
	if restarts < 3 {
		t.Errorf("only %d restarts while writing: the test did not kill the relay mid-stream", restarts)
	}
}

// Two relays at once: one leads, the other stands by and publishes nothing;
// when the leader stops, the standby takes over from the checkpoint.
func TestStandbyTakesOver(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	brokers := kafkatest.Brokers(t)
	topic := kafkatest.NewTopic(t, brokers, 4)
	cfg := relay.Config{Topic: topic, PollInterval: 20 * time.Millisecond, StandbyRetry: 100 * time.Millisecond}
	ctx := context.Background()
	streams := streamsNamed("acct-standby", 5)

	first := startRelay(t, pool, newPublisher(t, brokers), cfg)
	eventually.True(t, 10*time.Second, "the first relay to lead", func() bool { return first.Stats().Leader })
	second := startRelay(t, pool, newPublisher(t, brokers), cfg)

	for range 6 {
		if err := writeBatch(ctx, pool, streams, 50); err != nil {
			t.Fatal(err)
		}
	}
	waitCaughtUp(t, pool, first, 30*time.Second)
	// Give a wrongly eager standby its chance: three more tries of the lock
	// (or its first term, which the check below reports).
	tries := second.Stats().LockTries
	eventually.True(t, 30*time.Second, "the standby to try the lock three more times", func() bool {
		s := second.Stats()
		return s.LockTries >= tries+3 || s.Terms != 0
	})
	s1, s2 := first.Stats(), second.Stats()
	if !s1.Leader || s2.Leader || s2.Terms != 0 || s2.Published != 0 || s1.Published != 300 {
		t.Fatalf("want the first relay alone to publish 300:\nfirst  %+v\nsecond %+v", s1, s2)
	}

	first.stop(t)
	eventually.True(t, 10*time.Second, "the standby to lead", func() bool { return second.Stats().Leader })
	for range 4 {
		if err := writeBatch(ctx, pool, streams, 50); err != nil {
			t.Fatal(err)
		}
	}
	waitCaughtUp(t, pool, second, 30*time.Second)
	if s := second.Stats(); s.Published != 200 {
		t.Errorf("the standby published %d events, want the 200 after the checkpoint", s.Published)
	}

	want := storedEvents(t, pool)
	recs := readTopic(t, brokers, topic, want)
	if dups := checkRecords(t, recs, want); dups != 0 || len(recs) != 500 {
		t.Errorf("%d records, %d republished; want 500 and 0 after a clean handover", len(recs), dups)
	}
}

// When the leader's connection dies, the lock goes with it: the relay must
// notice, step down, and (alone here) become the leader again and go on.
func TestLeaderConnectionDies(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	brokers := kafkatest.Brokers(t)
	topic := kafkatest.NewTopic(t, brokers, 2)
	ctx := context.Background()
	streams := streamsNamed("acct-die", 3)
	r := startRelay(t, pool, newPublisher(t, brokers),
		relay.Config{Topic: topic, PollInterval: time.Second, StandbyRetry: 100 * time.Millisecond})

	if err := writeBatch(ctx, pool, streams, 30); err != nil {
		t.Fatal(err)
	}
	eventually.True(t, 30*time.Second, "the relay to catch up", func() bool { return caughtUp(t, pool, relay.DefaultName) })

	if killed := terminateLeader(t, pool); killed != 1 {
		t.Fatalf("terminated %d leader sessions, want 1", killed)
	}
	// The relay waits for a notification with a 1s poll: a dead connection
	// must end that wait at once, not after the poll interval.
	eventually.True(t, 5*time.Second, "a new leader term", func() bool { s := r.Stats(); return s.Terms == 2 && s.Leader })

	if err := writeBatch(ctx, pool, streams, 30); err != nil {
		t.Fatal(err)
	}
	eventually.True(t, 30*time.Second, "the relay to catch up again", func() bool { return caughtUp(t, pool, relay.DefaultName) })
	want := storedEvents(t, pool)
	checkRecords(t, readTopic(t, brokers, topic, want), want)
}

// Every record carries the event's id, type, stream, version, position,
// request and correlation ids and hash as headers, the stream id as key and
// the stored body verbatim as value.
func TestMessageHeaders(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	brokers := kafkatest.Brokers(t)
	topic := kafkatest.NewTopic(t, brokers, 2)
	if err := writeBatch(context.Background(), pool, streamsNamed("acct-hdr", 2), 4); err != nil {
		t.Fatal(err)
	}
	startRelay(t, pool, newPublisher(t, brokers), relay.Config{Topic: topic})
	want := storedEvents(t, pool)
	recs := readTopic(t, brokers, topic, want)
	checkRecords(t, recs, want)
	for _, r := range recs {
		e := want[r.Headers[kafka.HeaderEventID]]
		wantHeaders := map[string]string{
			kafka.HeaderEventID:       e.id,
			"_watermill_message_uuid": e.id,
			kafka.HeaderEventType:     "wallet.deposited.v1",
			kafka.HeaderStreamID:      e.stream,
			kafka.HeaderStreamVersion: strconv.FormatInt(e.version, 10),
			kafka.HeaderPosition:      strconv.FormatInt(e.position, 10),
			kafka.HeaderRequestID:     "req-" + strconv.FormatInt(e.position, 10),
			kafka.HeaderCorrelationID: "corr-" + e.stream,
			kafka.HeaderHash:          hexOf(e.hash),
		}
		for k, v := range wantHeaders {
			if got, ok := r.Headers[k]; !ok || got != v {
				t.Errorf("event %d: header %s = %q, want %q", e.position, k, got, v)
			}
		}
		if r.Key != e.stream {
			t.Errorf("event %d: key %q, want %q", e.position, r.Key, e.stream)
		}
	}
}

// A failing publish is retried, and the checkpoint does not move until the
// batch is on Kafka.
func TestPublishRetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDatabase(t)
	brokers := kafkatest.Brokers(t)
	topic := kafkatest.NewTopic(t, brokers, 2)
	if err := writeBatch(ctx, pool, streamsNamed("acct-retry", 2), 10); err != nil {
		t.Fatal(err)
	}
	pub := &flakyPublisher{Publisher: newPublisher(t, brokers), failures: 4}
	// Three tries per term: the first term fails and steps down, the second
	// fails once more and then succeeds.
	r := startRelay(t, pool, pub, relay.Config{Topic: topic, MaxPublishAttempts: 3,
		PublishBackoff: 20 * time.Millisecond, MaxPublishBackoff: 40 * time.Millisecond, StandbyRetry: 50 * time.Millisecond})

	eventually.True(t, 10*time.Second, "the first failures", func() bool { return r.Stats().PublishErrors >= 2 })
	var rows int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM relay_checkpoints`).Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("a checkpoint was stored before any publish succeeded (rows %d, err %v)", rows, err)
	}
	waitCaughtUp(t, pool, r, 30*time.Second)
	s := r.Stats()
	if s.PublishErrors != 4 || s.Terms != 2 || s.Published != 10 {
		t.Errorf("stats %+v: want 4 publish errors over 2 terms and 10 events published", s)
	}
	want := storedEvents(t, pool)
	checkRecords(t, readTopic(t, brokers, topic, want), want)
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
