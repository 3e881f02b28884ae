package checkpointjob_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/checkpointjob"
	"github.com/pitboss/pitboss/adapters/kafka"
	"github.com/pitboss/pitboss/adapters/kafka/kafkatest"
	"github.com/pitboss/pitboss/adapters/postgres/auditstore"
	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/secretbox"
	"github.com/pitboss/pitboss/audit"
)

// The job makes one checkpoint a day and puts every checkpoint on the
// checkpoint topic once, keyed by its scope, as a record that verifies.
func TestJob(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool, _ := pgtest.NewDatabase(t)
	if _, err := eventstore.SeedEvents(ctx, pool, eventstore.SeedOptions{Events: 50, Clients: 2, PlayersPerClient: 3, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	key := make([]byte, secretbox.KeySize)
	_, _ = rand.Read(key)
	box, err := secretbox.New(key)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 26, 9, 30, 0, 0, time.UTC)
	store := auditstore.NewCheckpoints(pool, box).WithClock(func() time.Time { return now })
	brokers := kafkatest.Brokers(t)
	topic := kafkatest.NewTopic(t, brokers, 3)
	pub, err := kafka.NewBatchPublisher(brokers, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pub.Close() })
	job, err := checkpointjob.New(store, pub, checkpointjob.Config{Topic: topic, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}

	// the first tick of the day makes and publishes; later ticks that day do not
	steps := []struct {
		at        time.Time
		made      bool
		published int
	}{
		{now, true, 3},                     // the platform's and two clients'
		{now.Add(time.Hour), false, 0},     // the same day
		{now.Add(24 * time.Hour), true, 3}, // the next day
	}
	for i, s := range steps {
		now = s.at
		d, err := job.Tick(ctx)
		if err != nil || !d.Ran || d.Made != s.made || d.Published != s.published {
			t.Fatalf("tick %d at %s: %+v %v; want made %v, %d published", i, s.at, d, err, s.made, s.published)
		}
	}

	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	recs, err := kafkatest.ReadUntil(rctx, brokers, topic, func(r []kafkatest.Record) bool { return len(r) >= 6 })
	if err != nil || len(recs) != 6 {
		t.Fatalf("read %d records: %v", len(recs), err)
	}
	keys := map[string]int{}
	for _, r := range recs {
		var rec audit.CheckpointRecord
		if err := json.Unmarshal(r.Value, &rec); err != nil {
			t.Fatal(err)
		}
		payload, sig, pub, err := rec.Decode()
		if err != nil {
			t.Fatal(err)
		}
		p, err := audit.VerifyCheckpointSignature(payload, sig, pub)
		if err != nil {
			t.Fatalf("record %s: %v", r.Value, err)
		}
		want := "platform"
		if p.ClientID != "" {
			want = "client:" + p.ClientID
		}
		if r.Key != want || r.Headers[checkpointjob.HeaderKeyID] != rec.KeyID {
			t.Fatalf("record keyed %q (headers %v) for %s", r.Key, r.Headers, rec.Payload)
		}
		keys[r.Key]++
	}
	got := make([]int, 0, len(keys))
	for _, n := range keys {
		got = append(got, n)
	}
	if len(keys) != 3 || !slices.Equal(got, []int{2, 2, 2}) {
		t.Fatalf("records per key %v", keys)
	}
}
