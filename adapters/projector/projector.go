// Package projector is the projector role: one Kafka consumer group per
// projection reads the ledger topic and applies each event to the read
// models.
//
// # Exactly once, in effect
//
// Delivery is at least once (the relay may publish an event twice, a
// consumer may see it again after a crash or a rebalance). The store
// applies an event and moves the stream's checkpoint in one Postgres
// transaction, and skips an event at or below the checkpoint; the message is
// acknowledged (its offset committed) only after that transaction commits.
// So every event has exactly one effect, whatever is redelivered.
//
// # Batches
//
// The subscriber has one message in flight per partition. A collector takes
// the messages waiting (one per partition) and applies them in one
// transaction; whatever the batch cannot settle is retried on its own,
// holding back only its partition.
//
// # Order and gaps
//
// The relay keys messages by stream, so a stream's events arrive on one
// partition in version order. An event whose stream is missing an earlier
// version is never applied out of order: it is retried (the partition
// waits) for Config.GapTimeout, then dead-lettered, so a partition is never
// blocked for ever.
//
// # Poison events
//
// An event whose body does not decode goes to the dead-letter topic at
// once; one that fails the projection's validation goes after
// Config.MaxInvalidAttempts tries. Its reason travels in the dead-letter
// message's metadata, it is recorded in projection_dead_letters, and its
// stream's checkpoint moves past it so the stream's later events apply.
// Database errors are not the event's fault: they are retried with backoff
// for as long as it takes.
package projector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	wmkafka "github.com/ThreeDotsLabs/watermill-kafka/v3/pkg/kafka"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/pitboss/pitboss/adapters/kafka"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/projections"
)

// Metadata of a dead-letter message, besides the original's.
const (
	HeaderDLQReason     = "dlq_reason"
	HeaderDLQProjection = "dlq_projection"
	HeaderDLQGroup      = "dlq_consumer_group"
	HeaderDLQTopic      = "dlq_original_topic"
	HeaderDLQPartition  = "dlq_original_partition"
	HeaderDLQOffset     = "dlq_original_offset"
	HeaderDLQFailedAt   = "dlq_failed_at"
)

// Store applies events to the read models (adapters/postgres.ReadModels).
type Store interface {
	Apply(ctx context.Context, p projections.Projection, e domain.Event) (applied bool, err error)
	ApplyBatch(ctx context.Context, p projections.Projection, events []domain.Event) ([]projections.ApplyResult, error)
	RecordDeadLetter(ctx context.Context, d projections.DeadLetter) error
	Advance(ctx context.Context, p projections.Name) (int64, error)
}

// Stats counts what a worker did.
type Stats struct {
	Applied      int64 // events applied
	Skipped      int64 // redeliveries: at or below the checkpoint
	DeadLettered int64
	Retries      int64
	Position     int64 // the watermark last seen
}

// Worker runs one projection.
type Worker struct {
	cfg   Config
	store Store
	proj  projections.Projection
	log   *slog.Logger

	kick                                       chan struct{}
	running                                    atomic.Bool
	applied, skipped, deadLettered, retries, w atomic.Int64
}

// New checks cfg (after its defaults) and returns a worker.
func New(store Store, cfg Config, logger *slog.Logger) (*Worker, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("projector config: %w", err)
	}
	if store == nil {
		return nil, errors.New("projector: nil store")
	}
	p, err := projections.ByName(cfg.Projection)
	if err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Worker{cfg: cfg, store: store, proj: p, kick: make(chan struct{}, 1),
		log: logger.With("component", "projector", "projection", string(cfg.Projection), "group", cfg.ConsumerGroup)}, nil
}

// Stats returns the worker's counters.
func (w *Worker) Stats() Stats {
	return Stats{Applied: w.applied.Load(), Skipped: w.skipped.Load(), DeadLettered: w.deadLettered.Load(),
		Retries: w.retries.Load(), Position: w.w.Load()}
}

// Run consumes until ctx ends, then returns nil once every message in hand
// is either committed or left for redelivery. It keeps trying when Kafka is
// unreachable.
func (w *Worker) Run(ctx context.Context) error {
	if !w.running.CompareAndSwap(false, true) {
		return errors.New("projector: Run is already running")
	}
	defer w.running.Store(false)
	for {
		err := w.consume(ctx)
		if ctx.Err() != nil {
			w.log.InfoContext(ctx, "projector stopped")
			return nil
		}
		w.log.WarnContext(ctx, "projector lost its subscription, reconnecting", "err", err)
		if !sleep(ctx, time.Second) {
			return nil
		}
	}
}

func (w *Worker) consume(ctx context.Context) error {
	dlq, err := newDeadLetterPublisher(w.cfg.Brokers)
	if err != nil {
		return err
	}
	defer dlq.Close()
	// fromOldest: a new group starts at the oldest offset, so a new
	// projection sees every event the topic still holds.
	sub, err := kafka.NewSubscriber(w.cfg.Brokers, w.cfg.ConsumerGroup, nil, true)
	if err != nil {
		return err
	}
	defer sub.Close()
	msgs, err := sub.Subscribe(ctx, w.cfg.Topic)
	if err != nil {
		return fmt.Errorf("subscribe to %s: %w", w.cfg.Topic, err)
	}
	w.log.InfoContext(ctx, "projector consuming", "topic", w.cfg.Topic)
	actx, stopAdvance := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { w.advance(actx, w.kick) })
	// One collector takes whatever messages are waiting (at most one per
	// partition: the subscriber sends a partition's next message only after
	// the last one is acknowledged) and applies them in one transaction.
	// A message the batch cannot settle (a gap, an invalid event, a
	// database error) goes to a handler of its own that retries it, and
	// holds only its own partition back.
	var singles sync.WaitGroup
	for {
		msg, ok := <-msgs
		if !ok {
			break
		}
		batch := []*message.Message{msg}
	drain:
		for len(batch) < w.cfg.MaxBatch {
			select {
			case m, ok := <-msgs:
				if !ok {
					break drain
				}
				batch = append(batch, m)
			default:
				break drain
			}
		}
		w.handleBatch(ctx, dlq, batch, &singles)
		w.kickAdvance()
	}
	singles.Wait()
	stopAdvance()
	wg.Wait()
	return errors.New("subscription closed")
}

// handleBatch applies the batch's events in one transaction and
// acknowledges those it settled; the others (undecodable, a second event of
// a stream, a gap, invalid, or all of them when the transaction failed) are
// handled one by one.
func (w *Worker) handleBatch(ctx context.Context, dlq message.Publisher, batch []*message.Message, singles *sync.WaitGroup) {
	single := func(msg *message.Message) {
		singles.Go(func() {
			w.handle(ctx, dlq, msg)
			w.kickAdvance()
		})
	}
	var (
		msgs   []*message.Message
		events []domain.Event
		seen   = map[domain.AccountID]bool{}
	)
	for _, msg := range batch {
		e, err := domain.DecodeBody(msg.Payload)
		if err != nil || seen[e.StreamID] {
			single(msg)
			continue
		}
		seen[e.StreamID] = true
		msgs, events = append(msgs, msg), append(events, e)
	}
	if len(events) == 0 {
		return
	}
	results, err := w.store.ApplyBatch(ctx, w.proj, events)
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		w.log.WarnContext(ctx, "applying a batch failed; applying its events one by one", "events", len(events), "err", err)
		for _, msg := range msgs {
			single(msg)
		}
		return
	}
	for i, r := range results {
		switch {
		case r.Err != nil:
			single(msgs[i])
		case r.Applied:
			w.applied.Add(1)
			msgs[i].Ack()
		default:
			w.skipped.Add(1)
			msgs[i].Ack()
		}
	}
}

// handle applies one message and acknowledges it, or dead-letters it, or
// (when ctx ends first) leaves it unacknowledged for redelivery.
func (w *Worker) handle(ctx context.Context, dlq message.Publisher, msg *message.Message) {
	e, err := domain.DecodeBody(msg.Payload)
	if err != nil {
		w.deadLetter(ctx, dlq, msg, nil, fmt.Sprintf("undecodable event body: %v", err))
		return
	}
	var (
		invalid  int
		gapSince time.Time
		backoff  = w.cfg.RetryBackoff
	)
	for {
		applied, err := w.store.Apply(ctx, w.proj, e)
		if err == nil {
			if applied {
				w.applied.Add(1)
			} else {
				w.skipped.Add(1)
			}
			msg.Ack()
			return
		}
		if ctx.Err() != nil {
			return
		}
		var gap *projections.GapError
		switch {
		case errors.As(err, &gap):
			if gapSince.IsZero() {
				gapSince = time.Now()
			}
			if time.Since(gapSince) >= w.cfg.GapTimeout {
				w.deadLetter(ctx, dlq, msg, &e, err.Error())
				return
			}
			w.log.WarnContext(ctx, "event arrived before an earlier one of its stream; waiting", "err", err,
				"position", e.Position)
		case errors.Is(err, projections.ErrInvalidEvent):
			if invalid++; invalid >= w.cfg.MaxInvalidAttempts {
				w.deadLetter(ctx, dlq, msg, &e, err.Error())
				return
			}
		default:
			w.log.WarnContext(ctx, "applying an event failed; will retry", "err", err, "position", e.Position)
		}
		w.retries.Add(1)
		if !sleep(ctx, backoff) {
			return
		}
		backoff = min(2*backoff, w.cfg.MaxRetryBackoff)
	}
}

// deadLetter publishes msg to the dead-letter topic with the reason, records
// it and moves its stream's checkpoint past it, then acknowledges it. Each
// step is retried until it succeeds or ctx ends (then the message is
// redelivered and dead-lettered again: the dead-letter topic is at least
// once too).
func (w *Worker) deadLetter(ctx context.Context, dlq message.Publisher, msg *message.Message, e *domain.Event, reason string) {
	partition, _ := wmkafka.MessagePartitionFromCtx(msg.Context())
	offset, _ := wmkafka.MessagePartitionOffsetFromCtx(msg.Context())
	d := projections.DeadLetter{Projection: w.cfg.Projection, EventID: msg.Metadata.Get(kafka.HeaderEventID),
		StreamID: msg.Metadata.Get(kafka.HeaderStreamID), Reason: reason, Topic: w.cfg.Topic, Partition: partition,
		Offset: offset}
	d.Version, _ = strconv.ParseInt(msg.Metadata.Get(kafka.HeaderStreamVersion), 10, 64)
	d.Position, _ = strconv.ParseInt(msg.Metadata.Get(kafka.HeaderPosition), 10, 64)
	if e != nil {
		d.EventID, d.StreamID, d.Version, d.Position = e.ID, string(e.StreamID), e.Version, e.Position
	}
	if d.EventID == "" {
		d.EventID = msg.UUID
	}
	out := message.NewMessage(msg.UUID, msg.Payload)
	for k, v := range msg.Metadata {
		out.Metadata.Set(k, v)
	}
	out.Metadata.Set(HeaderDLQReason, reason)
	out.Metadata.Set(HeaderDLQProjection, string(w.cfg.Projection))
	out.Metadata.Set(HeaderDLQGroup, w.cfg.ConsumerGroup)
	out.Metadata.Set(HeaderDLQTopic, w.cfg.Topic)
	out.Metadata.Set(HeaderDLQPartition, strconv.FormatInt(int64(partition), 10))
	out.Metadata.Set(HeaderDLQOffset, strconv.FormatInt(offset, 10))
	out.Metadata.Set(HeaderDLQFailedAt, time.Now().UTC().Format(time.RFC3339Nano))
	w.log.ErrorContext(ctx, "event dead-lettered", "reason", reason, "event_id", d.EventID, "stream_id", d.StreamID,
		"version", d.Version, "position", d.Position, "partition", partition, "offset", offset)
	if !w.retry(ctx, "publish to the dead-letter topic", func() error { return dlq.Publish(w.cfg.DeadLetterTopic, out) }) {
		return
	}
	if !w.retry(ctx, "record the dead letter", func() error { return w.store.RecordDeadLetter(ctx, d) }) {
		return
	}
	w.deadLettered.Add(1)
	msg.Ack()
}

// retry runs f until it succeeds (true) or ctx ends (false).
func (w *Worker) retry(ctx context.Context, what string, f func() error) bool {
	backoff := w.cfg.RetryBackoff
	for {
		err := f()
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		w.log.WarnContext(ctx, what+" failed; will retry", "err", err)
		w.retries.Add(1)
		if !sleep(ctx, backoff) {
			return false
		}
		backoff = min(2*backoff, w.cfg.MaxRetryBackoff)
	}
}

// kickAdvance asks for a watermark move soon.
func (w *Worker) kickAdvance() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// advance moves the projection's watermark after applied events (at most
// every WatermarkInterval) and every IdleAdvance.
func (w *Worker) advance(ctx context.Context, kick <-chan struct{}) {
	t := time.NewTicker(w.cfg.IdleAdvance)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-kick:
		case <-t.C:
		}
		pos, err := w.store.Advance(ctx, w.cfg.Projection)
		switch {
		case err != nil && ctx.Err() == nil:
			w.log.WarnContext(ctx, "moving the watermark failed", "err", err)
		case err == nil:
			w.w.Store(pos)
		}
		if !sleep(ctx, w.cfg.WatermarkInterval) {
			return
		}
	}
}

// newDeadLetterPublisher publishes keyed by stream id, or by message id when
// a poison message has none.
func newDeadLetterPublisher(brokers []string) (message.Publisher, error) {
	marshaler := wmkafka.NewWithPartitioningMarshaler(func(_ string, msg *message.Message) (string, error) {
		if k := msg.Metadata.Get(kafka.HeaderStreamID); k != "" {
			return k, nil
		}
		return msg.UUID, nil
	})
	p, err := wmkafka.NewPublisher(wmkafka.PublisherConfig{Brokers: brokers, Marshaler: marshaler,
		OverwriteSaramaConfig: kafka.SaramaPublisherConfig()}, nil)
	if err != nil {
		return nil, fmt.Errorf("dead-letter publisher: %w", err)
	}
	return p, nil
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
