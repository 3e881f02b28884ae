// Package kafka configures the Kafka side of the ledger: the watermill-kafka
// publisher and subscriber on top of IBM/sarama, the topic, and the names of
// the headers every ledger message carries.
//
// Every ledger message is keyed by its stream id, so all events of one
// wallet account land on one partition, in the order the relay sent them.
// Delivery is at least once: consumers deduplicate by the event_id header (or
// by stream_id + stream_version, which is unique in the event store).
//
// The relay publishes each batch as one Kafka transaction (BatchPublisher),
// and every consumer built here reads committed records only
// (read_committed): a batch the broker failed half-way is aborted and never
// seen, so a stream's versions arrive in order, possibly repeated, never
// reordered. Consumers outside Pitboss must set isolation.level to
// read_committed too (docs/kafka-events.md).
package kafka

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/IBM/sarama"
	"github.com/ThreeDotsLabs/watermill"
	wmkafka "github.com/ThreeDotsLabs/watermill-kafka/v3/pkg/kafka"
	"github.com/ThreeDotsLabs/watermill/message"
)

// DefaultTopic is the topic of ledger events. The ".v1" is part of the
// contract with consumers: a breaking change of the message shape gets a new
// topic, never a rename.
const DefaultTopic = "pitboss.ledger.events.v1"

// Metadata (Kafka header) names on every ledger message. The message UUID
// (watermill's "_watermill_message_uuid" header) is the event id as well.
const (
	HeaderEventID       = "event_id"
	HeaderEventType     = "event_type"
	HeaderStreamID      = "stream_id" // also the Kafka message key
	HeaderStreamVersion = "stream_version"
	HeaderPosition      = "position"
	HeaderRequestID     = "request_id"
	HeaderCorrelationID = "correlation_id"
	HeaderHash          = "hash" // hex of the event's chain hash
)

// KafkaVersion is the broker generation we run (Kafka 4, KRaft); every
// sarama config built here declares it, so sarama uses current request
// versions rather than those of watermill-kafka's default, V1_0_0_0 (which
// still happens to work against Kafka 4.3 because sarama negotiates up).
var KafkaVersion = sarama.V4_0_0_0

// clientID names our connections in the broker's logs and quotas.
const clientID = "pitboss"

// transactionTimeout is how long the broker lets a relay transaction stay
// open before it aborts it. A relay that dies mid-transaction blocks
// read_committed consumers of the partitions it wrote to until this passes
// or until the next leader's producer starts (which aborts it at once).
const transactionTimeout = 15 * time.Second

// ErrMissingStreamID is returned when a message to be published has no
// stream_id metadata: without a key it would land on a random partition and
// lose its per-stream order.
var ErrMissingStreamID = errors.New("message has no " + HeaderStreamID + " metadata: it is the partition key")

// Marshaler turns watermill messages into Kafka records keyed by the
// stream_id metadata, with every metadata entry as a header.
func Marshaler() wmkafka.MarshalerUnmarshaler {
	return wmkafka.NewWithPartitioningMarshaler(func(_ string, msg *message.Message) (string, error) {
		key := msg.Metadata.Get(HeaderStreamID)
		if key == "" {
			return "", ErrMissingStreamID
		}
		return key, nil
	})
}

// SaramaPublisherConfig is the producer configuration for ledger events:
// idempotent, acknowledged by all in-sync replicas, one request in flight
// per broker (so a retry can never reorder a partition), bounded retries,
// and the hash partitioner on the key.
func SaramaPublisherConfig() *sarama.Config {
	c := sarama.NewConfig()
	c.ClientID = clientID
	c.Version = KafkaVersion
	c.Producer.Idempotent = true
	c.Producer.RequiredAcks = sarama.WaitForAll
	c.Net.MaxOpenRequests = 1
	c.Producer.Retry.Max = 10
	c.Producer.Retry.Backoff = 100 * time.Millisecond
	c.Producer.Return.Successes = true
	c.Producer.Return.Errors = true
	// sarama's hash partitioner (FNV-1a) is not the Java client's murmur2:
	// fine while the relay is the topic's only producer, which it is.
	c.Producer.Partitioner = sarama.NewHashPartitioner
	return c
}

// PublisherConfig is the watermill-kafka publisher configuration for
// brokers: SaramaPublisherConfig with the stream-keyed Marshaler.
func PublisherConfig(brokers []string) wmkafka.PublisherConfig {
	return wmkafka.PublisherConfig{
		Brokers:               brokers,
		Marshaler:             Marshaler(),
		OverwriteSaramaConfig: SaramaPublisherConfig(),
	}
}

// NewPublisher returns watermill-kafka's publisher. Its Publish sends the
// messages one at a time and waits for each acknowledgement: about 1,100
// messages a second through the relay on loopback, against about 20,000
// with NewBatchPublisher, which the relay therefore uses.
func NewPublisher(brokers []string, logger *slog.Logger) (message.Publisher, error) {
	p, err := wmkafka.NewPublisher(PublisherConfig(brokers), wmLogger(logger))
	if err != nil {
		return nil, fmt.Errorf("kafka publisher: %w", err)
	}
	return p, nil
}

// SaramaSubscriberConfig is the consumer configuration: committed records
// only (read_committed; see the package doc), starting at the oldest offset
// when the group has none yet (fromOldest) or at the newest.
func SaramaSubscriberConfig(fromOldest bool) *sarama.Config {
	c := sarama.NewConfig()
	c.ClientID = clientID
	c.Version = KafkaVersion
	c.Consumer.IsolationLevel = sarama.ReadCommitted
	c.Consumer.Return.Errors = true
	// Recovery after a broker outage (docs/reliability.md): the broker's
	// lowest session timeout (group.min.session.timeout.ms, 6 s) instead of
	// sarama's 10 s, so a member that died is replaced sooner, with a
	// heartbeat every 2 s (a third of it, as Kafka advises); a coordinator
	// still loading its groups is asked again every 250 ms (sarama: every
	// 2 s, four times) for up to 10 s; a partition whose leader was lost is
	// fetched again after 250 ms (sarama: 2 s).
	c.Consumer.Group.Session.Timeout = 6 * time.Second
	c.Consumer.Group.Heartbeat.Interval = 2 * time.Second
	c.Consumer.Group.Rebalance.Retry.Backoff = 250 * time.Millisecond
	c.Consumer.Group.Rebalance.Retry.Max = 40
	c.Consumer.Retry.Backoff = 250 * time.Millisecond
	// A failed join starts with a metadata refresh: three tries 100 ms
	// apart (sarama: 250 ms), so a consumer waiting for a broker asks
	// again about every half second.
	c.Metadata.Retry.Backoff = 100 * time.Millisecond
	c.Consumer.Offsets.Initial = sarama.OffsetNewest
	if fromOldest {
		c.Consumer.Offsets.Initial = sarama.OffsetOldest
	}
	return c
}

// NewSubscriber returns a watermill-kafka subscriber in consumerGroup (an
// empty group reads every partition without committing offsets). Group
// names are frozen: a renamed group consumes the topic again from the
// start (or the end, by fromOldest).
func NewSubscriber(brokers []string, consumerGroup string, logger *slog.Logger, fromOldest bool) (message.Subscriber, error) {
	s, err := wmkafka.NewSubscriber(wmkafka.SubscriberConfig{
		Brokers:               brokers,
		Unmarshaler:           Marshaler(),
		OverwriteSaramaConfig: SaramaSubscriberConfig(fromOldest),
		ConsumerGroup:         consumerGroup,
	}, wmLogger(logger))
	if err != nil {
		return nil, fmt.Errorf("kafka subscriber: %w", err)
	}
	return s, nil
}

func wmLogger(logger *slog.Logger) watermill.LoggerAdapter {
	if logger == nil {
		return watermill.NopLogger{}
	}
	return watermill.NewSlogLogger(logger)
}
