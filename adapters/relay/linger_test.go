package relay_test

import (
	"context"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/kafka/kafkatest"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/relay"
	"github.com/pitboss/pitboss/internal/eventually"
)

// At a light load the relay gathers: single-event commits written one
// after the other within its linger go out in one batch (two if the
// relay's gap-safe read held some back behind another test's open
// transaction); after a batch of LingerBelow events or more it reads at
// once. Every event is published, in order, either way.
func TestLingerGathersLightLoad(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDatabase(t)
	brokers := kafkatest.Brokers(t)
	topic := kafkatest.NewTopic(t, brokers, 2)
	streams := streamsNamed("acct-linger", 3)
	// A generous linger, so the test does not race the writes below; a
	// poll longer than it, so reads follow notifications.
	r := startRelay(t, pool, newPublisher(t, brokers), relay.Config{Topic: topic, Linger: time.Second, LingerBelow: 4,
		PollInterval: 3 * time.Second})
	eventually.True(t, 60*time.Second, "the relay's first read", func() bool { return r.Stats().Polls > 0 })

	// Light: five commits of one event, 20 ms apart (a relay without a
	// linger publishes each, or two, on their own).
	for range 5 {
		if err := writeBatch(ctx, pool, streams, 1); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond) // the load's pace, not a wait for the relay
	}
	waitCaughtUp(t, pool, r, 60*time.Second)
	st := r.Stats()
	if st.Lingers < 1 || st.Batches > 2 || st.Published != 5 {
		t.Fatalf("five single-event commits within the linger: %d lingers, %d batches of %d events; want a linger and one or two batches",
			st.Lingers, st.Batches, st.Published)
	}

	// Busy: a commit of ten is read as one batch (≥ LingerBelow), so the
	// next notification is read at once.
	if err := writeBatch(ctx, pool, streams, 10); err != nil {
		t.Fatal(err)
	}
	waitCaughtUp(t, pool, r, 60*time.Second)
	lingers := r.Stats().Lingers
	if err := writeBatch(ctx, pool, streams, 1); err != nil {
		t.Fatal(err)
	}
	waitCaughtUp(t, pool, r, 60*time.Second)
	if st := r.Stats(); st.Lingers != lingers {
		t.Fatalf("after a batch of ten: %d lingers, had %d; want no new linger", st.Lingers, lingers)
	}
	want := storedEvents(t, pool)
	checkRecords(t, readTopic(t, brokers, topic, want), want)
}

// Linger 0, the package's default, never waits.
func TestNoLingerByDefault(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDatabase(t)
	brokers := kafkatest.Brokers(t)
	topic := kafkatest.NewTopic(t, brokers, 2)
	r := startRelay(t, pool, newPublisher(t, brokers), relay.Config{Topic: topic})
	for range 3 {
		if err := writeBatch(ctx, pool, streamsNamed("acct-nolinger", 2), 1); err != nil {
			t.Fatal(err)
		}
		waitCaughtUp(t, pool, r, 60*time.Second)
	}
	if st := r.Stats(); st.Lingers != 0 || st.Published != 3 {
		t.Fatalf("no linger configured: %d lingers, %d published; want 0, 3", st.Lingers, st.Published)
	}
}
