// Package forwarder is the Kafka side of the forwarder role: it consumes the
// ledger topic in consumer group ConsumerGroup and enqueues, for each event,
// the deliveries it causes — the client's forwarded callback and its
// subscribed webhook endpoints — in Postgres. It never sends anything
// itself: package delivery's Worker does, so a slow receiver never holds up
// the topic, and the request path never waits for a receiver.
//
// Enqueueing is idempotent (one delivery per event and endpoint), so a
// redelivered record is a no-op; a record's offset is committed only after
// its deliveries are, so none is lost. Records are taken in batches per
// partition (kafka.ConsumeBatches) and each batch is enqueued in one
// transaction and one round trip: the forwarder used to spend one
// transaction (about six round trips) per event, even for clients with
// nothing to deliver.
//
// Events of clients without targets cost nothing: the store reports which
// (client, kind) pairs of a batch have no target, and the forwarder skips
// their events (builds no bodies, sends no statement) for Config.NoTargetsFor
// after that answer; see untargeted for why no event of a client with a
// target is skipped, and the bound on a newly registered one.
package forwarder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"

	"github.com/pitboss/pitboss/adapters/kafka"
	"github.com/pitboss/pitboss/adapters/system"
	"github.com/pitboss/pitboss/gateway"
)

// ConsumerGroup is the forwarder's Kafka consumer group. Frozen: a renamed
// group consumes the topic again (and enqueueing is idempotent only while
// the deliveries table still holds the old rows).
const ConsumerGroup = "pitboss.forwarder.v1"

// Defaults of Config.
const (
	DefaultMaxBatch = 256
	// DefaultNoTargetsFor is how long the store's answer "this client has
	// no target for this kind" is used. A target registered at T receives
	// every event that occurs from T+DefaultNoTargetsFor on.
	DefaultNoTargetsFor = 2 * time.Second
	retryFirstBackoff   = 100 * time.Millisecond
	retryMaxBackoff     = 5 * time.Second
)

// Config configures a Forwarder.
type Config struct {
	Brokers []string
	// Topic is the ledger topic; kafka.DefaultTopic when empty.
	Topic string
	// Group is the consumer group; ConsumerGroup when empty.
	Group string
	// MaxBatch bounds the records of one partition enqueued in one
	// transaction; DefaultMaxBatch when zero.
	MaxBatch int
	// NoTargetsFor is how long the events of a (client, kind) pair the
	// store said has no target are skipped without asking it again: a
	// target registered at T receives every event that occurs from
	// T+NoTargetsFor on (and those before it may be skipped).
	// DefaultNoTargetsFor when zero; negative asks the store every time.
	NoTargetsFor time.Duration
	Logger       *slog.Logger
	// FetchWait lets the broker gather a fetch for up to this long at a
	// light load (kafka.BatchConsumerConfig.FetchWait); zero: it answers
	// at once.
	FetchWait time.Duration
}

// Stats counts what a forwarder did.
type Stats struct {
	Events   int64 // records read that make deliveries
	Enqueued int64 // deliveries added
	Skipped  int64 // records that make none: unknown types and undecodable ones
	// Untargeted counts the records skipped because their client had no
	// target for their kind (no statement sent for them).
	Untargeted int64
	Retries    int64 // failed enqueue transactions, retried
}

// Forwarder consumes the ledger topic and enqueues deliveries.
type Forwarder struct {
	store      gateway.DeliveryEnqueuer
	cfg        Config
	log        *slog.Logger
	untargeted *untargeted

	events, enqueued, skipped, untargetedN, retries atomic.Int64
}

// New returns a forwarder.
func New(store gateway.DeliveryEnqueuer, cfg Config) (*Forwarder, error) {
	if cfg.Topic == "" {
		cfg.Topic = kafka.DefaultTopic
	}
	if cfg.Group == "" {
		cfg.Group = ConsumerGroup
	}
	if cfg.MaxBatch == 0 {
		cfg.MaxBatch = DefaultMaxBatch
	}
	if cfg.NoTargetsFor == 0 {
		cfg.NoTargetsFor = DefaultNoTargetsFor
	}
	if cfg.MaxBatch < 1 {
		return nil, fmt.Errorf("forwarder: max batch %d < 1", cfg.MaxBatch)
	}
	if len(cfg.Brokers) == 0 || store == nil {
		return nil, errors.New("forwarder: brokers and a store are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Forwarder{store: store, cfg: cfg, untargeted: newUntargeted(cfg.NoTargetsFor),
		log: cfg.Logger.With("component", "forwarder", "topic", cfg.Topic, "group", cfg.Group)}, nil
}

// Stats returns the forwarder's counters.
func (f *Forwarder) Stats() Stats {
	return Stats{Events: f.events.Load(), Enqueued: f.enqueued.Load(), Skipped: f.skipped.Load(),
		Untargeted: f.untargetedN.Load(), Retries: f.retries.Load()}
}

// Run consumes until ctx ends, then returns nil. It keeps trying when Kafka
// is unreachable.
func (f *Forwarder) Run(ctx context.Context) error {
	for {
		// FromOldest: a new group starts at the oldest offset; enqueueing
		// is idempotent, so nothing is delivered twice.
		err := kafka.ConsumeBatches(ctx, kafka.BatchConsumerConfig{Brokers: f.cfg.Brokers, Group: f.cfg.Group,
			Topic: f.cfg.Topic, MaxBatch: f.cfg.MaxBatch, FromOldest: true, FetchWait: f.cfg.FetchWait, Logger: f.log}, f.handleBatch)
		if ctx.Err() != nil {
			return nil
		}
		f.log.WarnContext(ctx, "forwarder lost its subscription, reconnecting", "err", err)
		if !system.Sleep(ctx, time.Second) {
			return nil
		}
	}
}

// handleBatch enqueues the deliveries of one partition's batch of records
// in one transaction and reports whether it did (false: ctx ended first,
// and the batch is consumed again). Records of (client, kind) pairs known
// to have no target are skipped (see untargeted); when every record is,
// nothing is sent. A record that cannot be decoded is
// logged and skipped: holding the partition on it would stop every later
// event of its streams. A failing store is retried until it works or ctx
// ends.
func (f *Forwarder) handleBatch(ctx context.Context, batch []*sarama.ConsumerMessage) bool {
	outs := make([]gateway.Outgoing, 0, len(batch))
	for _, m := range batch {
		e, out, ok, err := decodeRecord(m.Value)
		if ok && f.untargeted.skips(&out) {
			f.untargetedN.Add(1)
			continue
		}
		if ok {
			if err = buildBodies(e, m.Value, &out); err != nil {
				ok = false
			}
		}
		if err != nil {
			f.log.ErrorContext(ctx, "ledger record skipped: it does not make deliveries", "event_id",
				header(m, kafka.HeaderEventID), "event_type", header(m, kafka.HeaderEventType),
				"partition", m.Partition, "offset", m.Offset, "err", err)
		}
		if !ok {
			f.skipped.Add(1)
			continue
		}
		outs = append(outs, out)
	}
	if len(outs) == 0 {
		return true
	}
	backoff := retryFirstBackoff
	for {
		r, err := f.store.EnqueueBatch(ctx, outs)
		if err == nil {
			f.untargeted.learn(outs, r)
			f.events.Add(int64(len(outs)))
			f.enqueued.Add(int64(r.Added))
			f.log.DebugContext(ctx, "deliveries enqueued", "events", len(outs), "deliveries", r.Added)
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		f.retries.Add(1)
		f.log.WarnContext(ctx, "enqueue deliveries, will retry", "events", len(outs), "backoff", backoff, "err", err)
		if !system.Sleep(ctx, backoff) {
			return false
		}
		backoff = min(2*backoff, retryMaxBackoff)
	}
}

// header is the value of m's header named key, or "".
func header(m *sarama.ConsumerMessage, key string) string {
	for _, h := range m.Headers {
		if h != nil && string(h.Key) == key {
			return string(h.Value)
		}
	}
	return ""
}
