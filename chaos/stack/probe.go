package stack

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/pitboss/pitboss/adapters/kafka"
)

// ProbeTopic is the topic TxnProbe writes to; no Pitboss role reads it.
const ProbeTopic = "chaos.probe.v1"

// EnsureProbeTopic makes ProbeTopic (one partition), so a probe after a
// fault does not wait for a topic to be created.
func EnsureProbeTopic(ctx context.Context, brokers []string) error {
	return kafka.EnsureTopic(ctx, brokers, ProbeTopic, 1, 1)
}

// TxnProbe measures how long after its start the brokers commit a
// transaction again — the relay's path (a transactional producer, one
// record, acks from every in-sync replica), with a producer of its own.
// It tries every 100 ms, each try with a fresh producer and at most one
// second, until one commits or ctx ends.
func TxnProbe(ctx context.Context, brokers []string) (time.Duration, error) {
	start := time.Now()
	for {
		if err := probeOnce(ctx, brokers); err == nil {
			return time.Since(start), nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("no transaction committed in %s: %w", time.Since(start).Round(time.Millisecond), ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func probeOnce(ctx context.Context, brokers []string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.TransactionalID("chaos-probe"),
		kgo.DefaultProduceTopic(ProbeTopic), kgo.RecordDeliveryTimeout(time.Second))
	if err != nil {
		return err
	}
	defer cl.Close()
	tctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := cl.BeginTransaction(); err != nil {
		return err
	}
	if err := cl.ProduceSync(tctx, &kgo.Record{Value: []byte("probe")}).FirstErr(); err != nil {
		_ = cl.AbortBufferedRecords(tctx)
		return err
	}
	return cl.EndTransaction(tctx, kgo.TryCommit)
}
