package kafka

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/IBM/sarama"
)

// BatchHandler settles one partition's batch of messages, in offset order,
// and reports whether it did. false means ctx ended first: nothing of the
// batch is marked, so it is consumed again (by this process or the next
// owner of the partition) and the handler must be idempotent.
type BatchHandler func(ctx context.Context, batch []*sarama.ConsumerMessage) bool

// DefaultFetchMinBytes is the bytes a held fetch waits for when
// BatchConsumerConfig.FetchMinBytes is zero: far more than a light load
// writes in the wait, a few ms' worth under load.
const DefaultFetchMinBytes = 256 << 10

// BatchConsumerConfig configures ConsumeBatches.
type BatchConsumerConfig struct {
	Brokers []string
	// Group is the consumer group; frozen once in use.
	Group string
	Topic string
	// MaxBatch bounds the messages of one partition handed over at once.
	MaxBatch int
	// FromOldest: a new group starts at the topic's oldest offset (else
	// at its newest).
	FromOldest bool
	// FetchWait, when positive, lets the broker hold a fetch until
	// FetchMinBytes are waiting or FetchWait has passed (sarama's
	// Consumer.MaxWaitTime and Consumer.Fetch.Min; by default it answers
	// as soon as one record is there). At a light load a fetch, and so a
	// batch, then carries the records of those milliseconds instead of
	// one (make bench's moderate step, issue 38); under load the bytes are
	// there at once and nothing waits.
	FetchWait     time.Duration
	FetchMinBytes int32
	// Settled, when set, is called after each batch is marked.
	Settled func()
	Logger  *slog.Logger
}

// ConsumeBatches joins cfg.Group (read_committed) and, for every partition
// it is given, hands the messages waiting — at least one, at most
// cfg.MaxBatch (sarama prefetches them) — to handle, and marks the batch's
// last offset for commit only after handle settled it. Partitions are
// handled concurrently; one partition's batches one after the other, so a
// stream (keyed to one partition) keeps its order. It returns when ctx
// ends (ctx's error) or the group fails; offsets marked so far are
// committed on the way out.
//
// Unlike watermill-kafka's subscriber, which hands over a partition's next
// message only after the last one is acknowledged, this lets a consumer
// write a whole batch in one database transaction.
func ConsumeBatches(ctx context.Context, cfg BatchConsumerConfig, handle BatchHandler) error {
	if len(cfg.Brokers) == 0 || cfg.Group == "" || cfg.Topic == "" || cfg.MaxBatch < 1 || handle == nil {
		return errors.New("kafka batch consumer: brokers, group, topic, a max batch >= 1 and a handler are required")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sc := SaramaSubscriberConfig(cfg.FromOldest)
	if cfg.FetchWait > 0 {
		sc.Consumer.MaxWaitTime = cfg.FetchWait
		sc.Consumer.Fetch.Min = cmp.Or(cfg.FetchMinBytes, DefaultFetchMinBytes)
	}
	group, err := sarama.NewConsumerGroup(cfg.Brokers, cfg.Group, sc)
	if err != nil {
		return fmt.Errorf("kafka consumer group %s: %w", cfg.Group, err)
	}
	defer group.Close() // commits the offsets marked so far
	go func() {
		for err := range group.Errors() {
			log.WarnContext(ctx, "kafka consumer error", "group", cfg.Group, "err", err)
		}
	}()
	h := &batchClaims{cfg: cfg, handle: handle}
	backoff := rejoinBackoff
	for {
		// Consume returns at every rebalance and when the broker is lost;
		// the loop joins again with the same group, so with the same
		// member id: a coordinator that comes back knows the member and
		// completes the rebalance as soon as it rejoins. A new group would
		// be a new member, and the coordinator would wait for the old one's
		// session to expire first (10 s by sarama's default, measured by
		// `make chaos`: read models caught up 10.8 s after a broker's
		// return against 2.8 s for the relay).
		err := group.Consume(ctx, []string{cfg.Topic}, h)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		switch {
		case errors.Is(err, sarama.ErrClosedConsumerGroup):
			return fmt.Errorf("consume %s in group %s: %w", cfg.Topic, cfg.Group, err)
		case err != nil:
			log.WarnContext(ctx, "kafka consumer group failed; joining again", "group", cfg.Group, "err", err, "in", backoff)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, maxRejoinBackoff)
		default:
			backoff = rejoinBackoff
		}
	}
}

// The pause before joining again after a failed Consume: short, because a
// broker that is back should be used at once, and doubling up to a bound
// that keeps a reconnecting consumer from spinning while it is away.
const (
	rejoinBackoff    = 100 * time.Millisecond
	maxRejoinBackoff = 250 * time.Millisecond
)

// batchClaims is the sarama.ConsumerGroupHandler of ConsumeBatches.
type batchClaims struct {
	cfg    BatchConsumerConfig
	handle BatchHandler
}

func (h *batchClaims) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *batchClaims) Cleanup(sarama.ConsumerGroupSession) error { return nil }

// ConsumeClaim takes whatever messages of its partition are waiting (at
// most MaxBatch), has them settled, and only then marks the last one's
// offset for commit. When the session ends first, nothing of the batch is
// marked.
func (h *batchClaims) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	ctx := sess.Context()
	msgs := claim.Messages()
	for {
		var batch []*sarama.ConsumerMessage
		select {
		case m, ok := <-msgs:
			if !ok {
				return nil
			}
			batch = append(batch, m)
		case <-ctx.Done():
			return nil
		}
	drain:
		for len(batch) < h.cfg.MaxBatch {
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
		if !h.handle(ctx, batch) {
			return nil
		}
		sess.MarkMessage(batch[len(batch)-1], "")
		if h.cfg.Settled != nil {
			h.cfg.Settled()
		}
	}
}
