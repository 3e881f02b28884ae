package kafka

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/IBM/sarama"
	wmkafka "github.com/ThreeDotsLabs/watermill-kafka/v3/pkg/kafka"
	"github.com/ThreeDotsLabs/watermill/message"
)

// BatchPublisher is a message.Publisher that hands all the messages of one
// Publish call to sarama at once (SyncProducer.SendMessages) and waits for
// all of their acknowledgements, instead of one round trip per message as
// watermill-kafka's Publisher does. Records, keys and headers are exactly
// those of NewPublisher (same Marshaler, same sarama config).
//
// Order: sarama keeps the order of the slice within each partition, and the
// idempotent producer with one request in flight keeps it across retries,
// so the per-stream order of a batch is the order of msgs.
//
// A failed Publish may have delivered some of the messages: the caller
// publishes the whole batch again (at-least-once).
type BatchPublisher struct {
	producer  sarama.SyncProducer
	marshaler wmkafka.Marshaler
	logger    *slog.Logger

	closeOnce sync.Once
	closeErr  error
}

var _ message.Publisher = (*BatchPublisher)(nil)

// NewBatchPublisher connects a batching publisher to brokers.
func NewBatchPublisher(brokers []string, logger *slog.Logger) (*BatchPublisher, error) {
	if len(brokers) == 0 {
		return nil, errors.New("kafka batch publisher: no brokers")
	}
	p, err := sarama.NewSyncProducer(brokers, SaramaPublisherConfig())
	if err != nil {
		return nil, fmt.Errorf("kafka batch publisher %v: %w", brokers, err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &BatchPublisher{producer: p, marshaler: Marshaler(), logger: logger}, nil
}

// Publish sends msgs to topic and returns once every one of them is
// acknowledged by all in-sync replicas, or with an error if any is not.
func (p *BatchPublisher) Publish(topic string, msgs ...*message.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	records := make([]*sarama.ProducerMessage, len(msgs))
	for i, m := range msgs {
		r, err := p.marshaler.Marshal(topic, m)
		if err != nil {
			return fmt.Errorf("marshal message %s: %w", m.UUID, err)
		}
		records[i] = r
	}
	if err := p.producer.SendMessages(records); err != nil {
		var perrs sarama.ProducerErrors
		if errors.As(err, &perrs) && len(perrs) > 0 {
			return fmt.Errorf("publish %d messages to %s: %d failed, first: %w", len(msgs), topic, len(perrs), perrs[0].Err)
		}
		return fmt.Errorf("publish %d messages to %s: %w", len(msgs), topic, err)
	}
	return nil
}

// Close flushes and closes the producer. It is safe to call more than once.
func (p *BatchPublisher) Close() error {
	p.closeOnce.Do(func() {
		if err := p.producer.Close(); err != nil {
			p.closeErr = fmt.Errorf("close kafka producer: %w", err)
		}
	})
	return p.closeErr
}
