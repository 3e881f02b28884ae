// Package projector is the projector role: a Kafka consumer group reads
// the ledger topic and applies each event to the read models.
//
// # One pass for every projection
//
// By default (Config.Combined, PITBOSS_PROJECTOR_MODE=combined) one worker
// in one consumer group (CombinedConsumerGroup) applies both projections:
// each message is decoded once, and each batch is one Postgres
// transaction (Store.ApplyProjections) that writes both projections'
// changes and moves both projections' checkpoints. The checkpoints stay per
// projection, so each projection is still skipped, gap-checked, verified
// and rebuilt on its own, and an event one projection cannot settle (a gap,
// an invalid event) is retried and dead-lettered for that projection only
// (its own dead-letter message and projection_dead_letters row, as before)
// while the other applies it in the batch's transaction. An undecodable
// message is dead-lettered once per projection, as two workers did.
// Watermarks stay per projection; one advancer moves both.
//
// The separate mode (a worker and a consumer group per projection,
// Projection.ConsumerGroup()) is kept for rollback. Switching either way is
// safe: the new group starts at the oldest offset and every event a
// projection applied already is at or below its checkpoint, so a skip.
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
// The worker is a sarama consumer group member. For each partition it owns
// it takes the messages waiting (up to Config.MaxBatch, sarama prefetches
// them), applies them in as few transactions as the distinct-stream rule of
// Store.ApplyBatch allows (see handleBatch), and marks the batch's last
// offset for commit only when every message is settled. Whatever a batch
// cannot settle is retried on its own, holding back only its partition.
// (Before, the worker used watermill-kafka's subscriber, which hands over a
// partition's next message only after the last one is acknowledged: one
// event per partition per transaction, about 800 events/s per projection.)
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

	"github.com/IBM/sarama"
	wmkafka "github.com/ThreeDotsLabs/watermill-kafka/v3/pkg/kafka"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/pitboss/pitboss/adapters/kafka"
	"github.com/pitboss/pitboss/adapters/system"
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

// Store applies events to the read models (adapters/postgres/readstore.ReadModels).
type Store interface {
	Apply(ctx context.Context, p projections.Projection, e domain.Event) (applied bool, err error)
	ApplyProjections(ctx context.Context, ps []projections.Projection, events []domain.Event) ([][]projections.ApplyResult, error)
	RecordDeadLetter(ctx context.Context, d projections.DeadLetter) error
	Advance(ctx context.Context, p projections.Name) (int64, error)
}

// Stats counts what a worker did; a combined worker counts each event once
// per projection.
type Stats struct {
	Applied      int64 // events applied
	Skipped      int64 // redeliveries: at or below the checkpoint
	DeadLettered int64
	Retries      int64
	Position     int64 // the watermark last seen
}

// Worker runs one projection, or every projection in one pass (Config.Combined).
type Worker struct {
	cfg   Config
	store Store
	projs []projections.Projection
	log   *slog.Logger

	kick                                       chan struct{}
	running                                    atomic.Bool
	applyLock                                  chan struct{} // one read-model transaction at a time
	rounds                                     *combiner
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
	names := []projections.Name{cfg.Projection}
	if cfg.Combined {
		names = projections.All
	}
	var projs []projections.Projection
	for _, n := range names {
		p, err := projections.ByName(n)
		if err != nil {
			return nil, err
		}
		projs = append(projs, p)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	label := string(cfg.Projection)
	if cfg.Combined {
		label = "all"
	}
	w := &Worker{cfg: cfg, store: store, projs: projs, kick: make(chan struct{}, 1), applyLock: make(chan struct{}, 1),
		log: logger.With("component", "projector", "projection", label, "group", cfg.ConsumerGroup)}
	w.rounds = &combiner{lock: w.applyLock, gather: cfg.Gather, small: cfg.MaxBatch,
		apply: func(ctx context.Context, events []domain.Event) ([][]projections.ApplyResult, error) {
			return store.ApplyProjections(ctx, projs, events)
		}}
	return w, nil
}

// ConsumerGroup is the worker's consumer group.
func (w *Worker) ConsumerGroup() string { return w.cfg.ConsumerGroup }

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
		if !system.Sleep(ctx, time.Second) {
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
	w.log.InfoContext(ctx, "projector consuming", "topic", w.cfg.Topic)
	actx, stopAdvance := context.WithCancel(ctx)
	var advancing sync.WaitGroup
	advancing.Go(func() { w.advance(actx, w.kick) })
	defer func() { stopAdvance(); advancing.Wait() }()
	unmarshaler := kafka.Marshaler()
	// FromOldest: a new group starts at the oldest offset, so a new
	// projection sees every event the topic still holds.
	return kafka.ConsumeBatches(ctx, kafka.BatchConsumerConfig{Brokers: w.cfg.Brokers, Group: w.cfg.ConsumerGroup,
		Topic: w.cfg.Topic, MaxBatch: w.cfg.MaxBatch, FromOldest: true, FetchWait: w.cfg.FetchWait, Settled: w.kickAdvance,
		Logger: w.log},
		func(ctx context.Context, batch []*sarama.ConsumerMessage) bool {
			return w.handleBatch(ctx, dlq, items(unmarshaler, batch))
		})
}

// item is one consumed message, decoded.
type item struct {
	msg       *message.Message
	partition int32
	offset    int64
	event     domain.Event
	decodeErr error
}

func items(unmarshaler wmkafka.Unmarshaler, batch []*sarama.ConsumerMessage) []item {
	out := make([]item, len(batch))
	for i, m := range batch {
		it := item{partition: m.Partition, offset: m.Offset}
		msg, err := unmarshaler.Unmarshal(m)
		if err != nil {
			// Only a broken header set gets here: keep the bytes for the
			// dead-letter topic.
			msg = message.NewMessage(string(m.Key)+"@"+strconv.FormatInt(m.Offset, 10), m.Value)
			it.decodeErr = fmt.Errorf("unreadable kafka record: %w", err)
		} else if it.event, err = domain.DecodeBody(msg.Payload); err != nil {
			it.decodeErr = fmt.Errorf("undecodable event body: %w", err)
		}
		it.msg = msg
		out[i] = it
	}
	return out
}

// handleBatch settles every item of one partition's batch and reports
// whether it did (false: ctx ended first).
//
// The batch is cut into rounds of distinct streams — a stream's first event
// in the batch goes to round 1, its second to round 2, and so on — and each
// round is applied in one transaction (Store.ApplyBatch needs distinct
// streams: a later event may depend on an earlier one, such as a rollback on
// its bet). A stream's events keep their order; rounds run one after the
// other. An event a round cannot settle (a gap, an invalid event, or every
// event of the round when the transaction failed) is handled on its own,
// with retries, before the next round. Transactions of one projection are
// serialised (applyLock): concurrent ones of different partitions would
// update the same aggregate rows in different orders and deadlock. Rounds
// of different partitions that arrive together share one (combiner).
func (w *Worker) handleBatch(ctx context.Context, dlq message.Publisher, items []item) bool {
	var (
		rounds [][]int
		seen   = map[domain.AccountID]int{}
	)
	for i, it := range items {
		if it.decodeErr != nil {
			continue
		}
		r := seen[it.event.StreamID]
		seen[it.event.StreamID] = r + 1
		if r == len(rounds) {
			rounds = append(rounds, nil)
		}
		rounds[r] = append(rounds[r], i)
	}
	for _, round := range rounds {
		events := make([]domain.Event, len(round))
		for k, i := range round {
			events[k] = items[i].event
		}
		results, err := w.rounds.Apply(ctx, events)
		if err != nil {
			if ctx.Err() != nil {
				return false
			}
			w.log.WarnContext(ctx, "applying a batch failed; applying its events one by one", "events", len(events), "err", err)
			for _, i := range round {
				for _, p := range w.projs {
					if !w.handle(ctx, dlq, p, items[i]) {
						return false
					}
				}
			}
			continue
		}
		// Event by event, projection by projection: an event one
		// projection cannot settle is retried (and maybe dead-lettered) for
		// that projection only; the others have applied it.
		for k, i := range round {
			for j, p := range w.projs {
				switch r := results[j][k]; {
				case r.Err != nil:
					if !w.handle(ctx, dlq, p, items[i]) {
						return false
					}
				case r.Applied:
					w.applied.Add(1)
				default:
					w.skipped.Add(1)
				}
			}
		}
	}
	for _, it := range items {
		if it.decodeErr == nil {
			continue
		}
		for _, p := range w.projs {
			if !w.deadLetter(ctx, dlq, p.Name(), it, false, it.decodeErr.Error()) {
				return false
			}
		}
	}
	return true
}

// handle applies one event, retrying, or dead-letters it; it reports
// whether the event is settled (false: ctx ended first).
func (w *Worker) handle(ctx context.Context, dlq message.Publisher, p projections.Projection, it item) bool {
	var (
		invalid  int
		gapSince time.Time
		backoff  = w.cfg.RetryBackoff
		e        = it.event
	)
	for {
		w.applyLock <- struct{}{}
		applied, err := w.store.Apply(ctx, p, e)
		<-w.applyLock
		if err == nil {
			if applied {
				w.applied.Add(1)
			} else {
				w.skipped.Add(1)
			}
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		var gap *projections.GapError
		switch {
		case errors.As(err, &gap):
			if gapSince.IsZero() {
				gapSince = time.Now()
			}
			if time.Since(gapSince) >= w.cfg.GapTimeout {
				return w.deadLetter(ctx, dlq, p.Name(), it, true, err.Error())
			}
			w.log.WarnContext(ctx, "event arrived before an earlier one of its stream; waiting", "err", err,
				"position", e.Position)
		case errors.Is(err, projections.ErrInvalidEvent):
			if invalid++; invalid >= w.cfg.MaxInvalidAttempts {
				return w.deadLetter(ctx, dlq, p.Name(), it, true, err.Error())
			}
		default:
			w.log.WarnContext(ctx, "applying an event failed; will retry", "err", err, "position", e.Position)
		}
		w.retries.Add(1)
		if !system.Sleep(ctx, backoff) {
			return false
		}
		backoff = min(2*backoff, w.cfg.MaxRetryBackoff)
	}
}

// deadLetter publishes the item to the dead-letter topic with the reason,
// records it and moves its stream's checkpoint past it (decoded: its event
// is known), and reports whether it did. Each step is retried until it
// succeeds or ctx ends (then the message is consumed and dead-lettered
// again: the dead-letter topic is at least once too).
func (w *Worker) deadLetter(ctx context.Context, dlq message.Publisher, p projections.Name, it item, decoded bool, reason string) bool {
	msg, partition, offset := it.msg, it.partition, it.offset
	d := projections.DeadLetter{Projection: p, EventID: msg.Metadata.Get(kafka.HeaderEventID),
		StreamID: msg.Metadata.Get(kafka.HeaderStreamID), Reason: reason, Topic: w.cfg.Topic, Partition: partition,
		Offset: offset}
	d.Version, _ = strconv.ParseInt(msg.Metadata.Get(kafka.HeaderStreamVersion), 10, 64)
	d.Position, _ = strconv.ParseInt(msg.Metadata.Get(kafka.HeaderPosition), 10, 64)
	if decoded {
		e := it.event
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
	out.Metadata.Set(HeaderDLQProjection, string(p))
	out.Metadata.Set(HeaderDLQGroup, w.cfg.ConsumerGroup)
	out.Metadata.Set(HeaderDLQTopic, w.cfg.Topic)
	out.Metadata.Set(HeaderDLQPartition, strconv.FormatInt(int64(partition), 10))
	out.Metadata.Set(HeaderDLQOffset, strconv.FormatInt(offset, 10))
	out.Metadata.Set(HeaderDLQFailedAt, time.Now().UTC().Format(time.RFC3339Nano))
	w.log.ErrorContext(ctx, "event dead-lettered", "dlq_projection", string(p), "reason", reason, "event_id", d.EventID, "stream_id", d.StreamID,
		"version", d.Version, "position", d.Position, "partition", partition, "offset", offset)
	if !w.retry(ctx, "publish to the dead-letter topic", func() error { return dlq.Publish(w.cfg.DeadLetterTopic, out) }) {
		return false
	}
	if !w.retry(ctx, "record the dead letter", func() error { return w.store.RecordDeadLetter(ctx, d) }) {
		return false
	}
	w.deadLettered.Add(1)
	return true
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
		if !system.Sleep(ctx, backoff) {
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

// advance moves the projections' watermarks after applied events (at most
// every WatermarkInterval, or LightWatermark after a move of fewer than
// LightMove events) and every IdleAdvance; Stats.Position is the least of
// them.
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
		least, ok := int64(-1), true
		for _, p := range w.projs {
			pos, err := w.store.Advance(ctx, p.Name())
			switch {
			case err != nil && ctx.Err() == nil:
				w.log.WarnContext(ctx, "moving the watermark failed", "projection", string(p.Name()), "err", err)
				ok = false
			case err == nil && (least < 0 || pos < least):
				least = pos
			}
		}
		moved := int64(LightMove) // a failed move: as under load, try again soon
		if ok && least >= 0 {
			moved = least - w.w.Swap(least)
		}
		if !system.Sleep(ctx, w.cfg.watermarkPause(moved)) {
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
