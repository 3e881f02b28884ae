package kafka

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"sync"
	"time"

	wmkafka "github.com/ThreeDotsLabs/watermill-kafka/v3/pkg/kafka"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/twmb/franz-go/pkg/kgo"
)

// DefaultTransactionalIDPrefix starts the transactional id of every
// BatchPublisher producer; the topic completes it.
const DefaultTransactionalIDPrefix = "pitboss-relay/"

// publishTimeout bounds the produce of one Publish, as far as franz-go
// allows: records not yet sent fail at it, but an idempotent producer
// cannot fail a record already sent until the broker answers, so a
// Publish in flight when the broker went away waits for its return. The
// relay retries a failed Publish with backoff.
const publishTimeout = 30 * time.Second

// endTimeout bounds the end of the transaction (commit or abort), with a
// deadline of its own: a produce that finished only when the broker came
// back is committed at once, rather than failed for the time its produce
// took. Before, its spent context failed the commit and the abort, the
// producer was closed with its transaction open, and the next one began
// by having the broker abort it (docs/reliability.md).
const endTimeout = 10 * time.Second

// metadataMinAge is the shortest time between two metadata refreshes of
// the relay's producer (franz-go: 5 s).
const metadataMinAge = 250 * time.Millisecond

// BatchPublisher is the relay's message.Publisher: it publishes all the
// messages of one Publish call as one Kafka transaction, with one round trip
// for the batch instead of one per message as watermill-kafka's Publisher
// does. Records, keys, headers and partitions are exactly those of
// NewPublisher (same Marshaler, sarama's FNV-1a hash partitioning).
//
// # All or nothing, in order
//
// A Publish either commits every message or aborts the transaction, so a
// consumer reading committed records only (SaramaSubscriberConfig sets
// read_committed) never sees part of a failed batch. This is what keeps a
// stream in order on its partition when the broker fails part of a batch.
// Before, with sarama's non-transactional SendMessages, the broker could
// take v63 of a stream while v51 of the same batch failed; the relay then
// published v51..v63 again, and the partition read v50, v63, v51, ..., v63
// (found by the broker-outage chaos fault, docs/reliability.md). Now the
// failed attempt's records are aborted and invisible, and a read_committed
// consumer reads v50, v51, ..., v63. The producer is also gapless within an
// attempt: when a record fails, every later record of its partition fails
// with it.
//
// A Publish that fails may still have committed (the commit's answer was
// lost): the caller publishes the batch again, and consumers see its
// messages twice, in order (at least once, never out of order).
//
// # Why franz-go here
//
// The producer is github.com/twmb/franz-go's kgo client, not sarama's:
// sarama's transactional producer (v1.61.1) has a data race between its
// error path and the partition registration of a transaction
// (IBM/sarama#2913, closed without a fix), which our partial-failure test
// hits at once under -race. Consumers stay on watermill-kafka and sarama.
//
// # Fencing
//
// The producer is created on the first Publish to a topic, not before, with
// the transactional id prefix+topic. Its first transaction fences every
// older producer with the same id: a standby relay that becomes the leader
// fences a deposed leader that may still be sending, so the zombie's
// transaction fails instead of interleaving with the new leader's. A
// producer that hits an error it cannot recover from (fenced, among others)
// is closed and replaced on the next Publish.
type BatchPublisher struct {
	brokers   []string
	prefix    string
	marshaler wmkafka.Marshaler
	logger    *slog.Logger

	mu      sync.Mutex
	clients map[string]*kgo.Client // by topic
	closed  bool
}

var _ message.Publisher = (*BatchPublisher)(nil)

// BatchPublisherOption configures a BatchPublisher.
type BatchPublisherOption func(*BatchPublisher)

// WithTransactionalIDPrefix replaces DefaultTransactionalIDPrefix. Two
// installations that share a broker and a topic name must use different
// prefixes, or their relays fence each other.
func WithTransactionalIDPrefix(prefix string) BatchPublisherOption {
	return func(p *BatchPublisher) { p.prefix = prefix }
}

// NewBatchPublisher returns a transactional batching publisher to brokers.
// It checks that a broker answers; the producer itself starts on the first
// Publish.
func NewBatchPublisher(brokers []string, logger *slog.Logger, opts ...BatchPublisherOption) (*BatchPublisher, error) {
	if len(brokers) == 0 {
		return nil, errors.New("kafka batch publisher: no brokers")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	p := &BatchPublisher{brokers: brokers, prefix: DefaultTransactionalIDPrefix, marshaler: Marshaler(),
		logger: logger, clients: map[string]*kgo.Client{}}
	for _, o := range opts {
		o(p)
	}
	if p.prefix == "" {
		return nil, errors.New("kafka batch publisher: empty transactional id prefix")
	}
	probe, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ClientID(clientID))
	if err != nil {
		return nil, fmt.Errorf("kafka batch publisher %v: %w", brokers, err)
	}
	defer probe.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := probe.Ping(ctx); err != nil {
		return nil, fmt.Errorf("kafka batch publisher %v: %w", brokers, err)
	}
	return p, nil
}

// TransactionalID is the transactional id of the producer for topic.
func (p *BatchPublisher) TransactionalID(topic string) string { return p.prefix + topic }

// Partitioner is sarama's hash partitioner (FNV-1a of the key, as
// SaramaPublisherConfig), so both publishers put a stream on one partition.
func Partitioner() kgo.Partitioner {
	return kgo.StickyKeyPartitioner(kgo.SaramaCompatHasher(func(b []byte) uint32 {
		h := fnv.New32a()
		_, _ = h.Write(b)
		return h.Sum32()
	}))
}

// client returns the topic's producer, creating it when needed.
func (p *BatchPublisher) client(topic string) (*kgo.Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errors.New("kafka batch publisher is closed")
	}
	if cl := p.clients[topic]; cl != nil {
		return cl, nil
	}
	cl, err := kgo.NewClient(p.producerOpts(topic)...)
	if err != nil {
		return nil, fmt.Errorf("transactional producer %s: %w", p.TransactionalID(topic), err)
	}
	p.clients[topic] = cl
	return cl, nil
}

// producerOpts is the configuration of the topic's transactional producer.
func (p *BatchPublisher) producerOpts(topic string) []kgo.Opt {
	return []kgo.Opt{
		kgo.SeedBrokers(p.brokers...),
		kgo.ClientID(clientID),
		kgo.DefaultProduceTopic(topic),
		kgo.TransactionalID(p.TransactionalID(topic)),
		// A batch is acknowledged once every in-sync replica has it
		// (min.insync.replicas of them at least: 2 on the cluster), and
		// retries never duplicate or reorder it. franz-go's defaults, and
		// required by transactions, stated here so no one turns them off.
		kgo.RequiredAcks(kgo.AllISRAcks()),
		// Bound the time a broken transaction can block read_committed
		// consumers of its partitions (the broker aborts it after this).
		kgo.TransactionTimeout(transactionTimeout),
		kgo.RecordPartitioner(Partitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.RecordDeliveryTimeout(publishTimeout - 5*time.Second),
		kgo.RetryBackoffFn(retryBackoff),
		// A producer whose broker went away finds it again by a metadata
		// refresh, and franz-go refreshes at most every 5 s by default: the
		// relay caught up 4.6 s after the broker's return while a fresh
		// producer committed 0.4 s after it (the chaos suite's probe).
		kgo.MetadataMinAge(metadataMinAge),
		// ProducerBatchMaxBytes stays at franz-go's default (about 1 MB,
		// the broker's default message.max.bytes): a larger record batch
		// would be refused whole by a broker with default settings.
	}
}

// drop closes and forgets the topic's producer.
func (p *BatchPublisher) drop(topic string, cl *kgo.Client) {
	p.mu.Lock()
	if p.clients[topic] == cl {
		delete(p.clients, topic)
	}
	p.mu.Unlock()
	cl.Close()
}

// Publish sends msgs to topic in one transaction and returns once it is
// committed, or with an error once it is aborted (or the producer broke).
func (p *BatchPublisher) Publish(topic string, msgs ...*message.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	records := make([]*kgo.Record, len(msgs))
	for i, m := range msgs {
		r, err := p.record(topic, m)
		if err != nil {
			return err
		}
		records[i] = r
	}
	cl, err := p.client(topic)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
	defer cancel()
	if err := p.publishTxn(ctx, cl, records); err != nil {
		// Start afresh on the next Publish: a new producer recovers from
		// every state (fenced, unknown producer id, a transaction whose end
		// is unknown), and its first transaction aborts whatever this one
		// left open.
		p.logger.Warn("transactional publish failed; the next publish starts a new producer",
			"transactional_id", p.TransactionalID(topic), "err", err)
		p.drop(topic, cl)
		return fmt.Errorf("publish %d messages to %s: %w", len(msgs), topic, err)
	}
	return nil
}

func (p *BatchPublisher) publishTxn(ctx context.Context, cl *kgo.Client, records []*kgo.Record) error {
	if err := cl.BeginTransaction(); err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	produced := cl.ProduceSync(ctx, records...).FirstErr()
	ectx, cancel := context.WithTimeout(context.Background(), endTimeout)
	defer cancel()
	if produced != nil {
		return errors.Join(fmt.Errorf("produce: %w", produced), abort(ectx, cl))
	}
	if err := cl.EndTransaction(ectx, kgo.TryCommit); err != nil {
		return errors.Join(fmt.Errorf("commit transaction: %w", err), abort(ectx, cl))
	}
	return nil
}

// abort ends the open transaction with an abort, after failing whatever is
// still buffered.
func abort(ctx context.Context, cl *kgo.Client) error {
	if err := cl.AbortBufferedRecords(ctx); err != nil {
		return fmt.Errorf("abort buffered records: %w", err)
	}
	if err := cl.EndTransaction(ctx, kgo.TryAbort); err != nil {
		return fmt.Errorf("abort transaction: %w", err)
	}
	return nil
}

// record is msg as the Kafka record NewPublisher would send.
func (p *BatchPublisher) record(topic string, msg *message.Message) (*kgo.Record, error) {
	pm, err := p.marshaler.Marshal(topic, msg)
	if err != nil {
		return nil, fmt.Errorf("marshal message %s: %w", msg.UUID, err)
	}
	r := &kgo.Record{Topic: topic, Headers: make([]kgo.RecordHeader, len(pm.Headers))}
	if pm.Key != nil {
		if r.Key, err = pm.Key.Encode(); err != nil {
			return nil, fmt.Errorf("encode key of %s: %w", msg.UUID, err)
		}
	}
	if pm.Value != nil {
		if r.Value, err = pm.Value.Encode(); err != nil {
			return nil, fmt.Errorf("encode value of %s: %w", msg.UUID, err)
		}
	}
	for i, h := range pm.Headers {
		r.Headers[i] = kgo.RecordHeader{Key: string(h.Key), Value: h.Value}
	}
	return r, nil
}

// Close closes every producer. It is safe to call more than once.
func (p *BatchPublisher) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for topic, cl := range p.clients {
		cl.Close()
		delete(p.clients, topic)
	}
	return nil
}

// retryBackoff is the pause before franz-go's retry number fails of a
// request: 100 ms doubling to 500 ms. franz-go's own (250 ms doubling to
// 5 s) had the relay sleeping for up to 4 s after a broker's return, with
// every consumer of the ledger waiting for it (`make chaos`, Kafka fault);
// asking a broker that is away twice a second costs nothing.
func retryBackoff(fails int) time.Duration {
	const first, most = 100 * time.Millisecond, 500 * time.Millisecond
	if fails <= 1 {
		return first
	}
	if fails > 4 {
		return most
	}
	return min(first<<(fails-1), most)
}
