package relay_test

import (
	"context"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/kafka"
	"github.com/pitboss/pitboss/adapters/kafka/kafkatest"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/relay"
)

// BenchmarkRelay measures how fast a relay drains a backlog of b.N events
// to Kafka, with each publisher. One op is one event:
//
//	go test -run '^$' -bench Relay -benchtime 20000x ./adapters/relay/
func BenchmarkRelay(b *testing.B) {
	brokers := kafkatest.Brokers(b)
	publishers := []struct {
		name string
		new  func() (message.Publisher, error)
	}{
		{"batch", func() (message.Publisher, error) { return kafka.NewBatchPublisher(brokers, nil) }},
		{"watermill", func() (message.Publisher, error) { return kafka.NewPublisher(brokers, nil) }},
	}
	for _, p := range publishers {
		b.Run(p.name, func(b *testing.B) {
			pub, err := p.new()
			if err != nil {
				b.Fatal(err)
			}
			defer pub.Close()
			rate := drain(b, pub, b.N)
			b.ReportMetric(rate, "events/s")
		})
	}
}

// TestThroughput logs the relay's rate on a 10,000-event backlog and fails
// below a floor far under the measured rate (about 20,000 events/s on
// loopback without the race detector, a few thousand with it), so that a
// change back to one round trip per message shows: that runs at about
// 1,100 events/s. It does not run in parallel with the other tests, which
// would only measure the machine's load.
func TestThroughput(t *testing.T) {
	brokers := kafkatest.Brokers(t)
	rate := drain(t, newPublisher(t, brokers), 10000)
	t.Logf("relay throughput: %.0f events/s (race detector: %v)", rate, raceEnabled)
	floor := 4000.0
	if raceEnabled {
		floor = 1500
	}
	if rate < floor {
		t.Errorf("relay throughput %.0f events/s, want at least %.0f", rate, floor)
	}
}

// drain fills a fresh store with n events, then times a relay publishing
// all of them, and returns events per second.
func drain(tb testing.TB, pub message.Publisher, n int) float64 {
	tb.Helper()
	if b, ok := tb.(*testing.B); ok {
		b.StopTimer()
	}
	pool, _ := pgtest.NewDatabase(tb)
	brokers := kafkatest.Brokers(tb)
	topic := kafkatest.NewTopic(tb, brokers, 6)
	fill(tb, pool, n)

	if b, ok := tb.(*testing.B); ok {
		b.StartTimer()
	}
	start := time.Now()
	r := startRelay(tb, pool, pub, relay.Config{Topic: topic})
	waitCaughtUp(tb, pool, r, 10*time.Minute)
	elapsed := time.Since(start)
	if b, ok := tb.(*testing.B); ok {
		b.StopTimer()
	}
	if s := r.Stats(); s.Published != uint64(n) {
		tb.Fatalf("published %d events, want %d", s.Published, n)
	}
	return float64(n) / elapsed.Seconds()
}

func fill(tb testing.TB, pool *pgxpool.Pool, n int) {
	tb.Helper()
	streams := streamsNamed("acct-bench", 64)
	for left := n; left > 0; {
		k := min(left, 1000)
		if err := writeBatch(context.Background(), pool, streams, k); err != nil {
			tb.Fatal(err)
		}
		left -= k
	}
}
