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
//
// Throughput is measured here and not asserted in a test: a floor in a
// test measures the machine's load as much as the relay (one failed on a
// loaded machine, 1,454 events/s against 1,500 under -race). For scale: on
// loopback the batching publisher drains about 20,000 events/s without the
// race detector; one round trip per message, the shape to avoid, about
// 1,100.
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

// drain fills a fresh store with n events, then times a relay publishing
// all of them, and returns events per second. Only the publishing is timed.
func drain(b *testing.B, pub message.Publisher, n int) float64 {
	b.Helper()
	b.StopTimer()
	pool, _ := pgtest.NewDatabase(b)
	brokers := kafkatest.Brokers(b)
	topic := kafkatest.NewTopic(b, brokers, 6)
	fill(b, pool, n)

	b.StartTimer()
	start := time.Now()
	r := startRelay(b, pool, pub, relay.Config{Topic: topic})
	waitCaughtUp(b, pool, r, 10*time.Minute)
	elapsed := time.Since(start)
	b.StopTimer()
	if s := r.Stats(); s.Published != uint64(n) {
		b.Fatalf("published %d events, want %d", s.Published, n)
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
