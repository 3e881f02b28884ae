package kafka

import (
	"testing"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The relay's producer on a cluster (docs/operations.md, "Local cluster"):
// a batch counts as published once every in-sync replica has it, with
// idempotent writes, in a transaction, and nothing reads it before the
// commit. NewClient does not dial, so no broker is needed.
func TestProducerAndConsumerDurability(t *testing.T) {
	p := &BatchPublisher{brokers: []string{"127.0.0.1:1"}, prefix: DefaultTransactionalIDPrefix}
	cl, err := kgo.NewClient(p.producerOpts("ledger")...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if got := cl.OptValue(kgo.RequiredAcks); got != kgo.AllISRAcks() {
		t.Errorf("producer acks = %v, want all in-sync replicas", got)
	}
	if cl.OptValue(kgo.DisableIdempotentWrite) != false {
		t.Error("producer idempotence is disabled")
	}
	if got := cl.OptValue(kgo.TransactionalID); got != p.TransactionalID("ledger") {
		t.Errorf("transactional id = %v, want %s", got, p.TransactionalID("ledger"))
	}
	for _, fromOldest := range []bool{false, true} {
		if c := SaramaSubscriberConfig(fromOldest); c.Consumer.IsolationLevel != sarama.ReadCommitted {
			t.Errorf("SaramaSubscriberConfig(%v): isolation level %v, want read_committed", fromOldest, c.Consumer.IsolationLevel)
		}
	}
}
