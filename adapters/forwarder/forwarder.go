// Package forwarder is the Kafka side of the forwarder role: it consumes the
// ledger topic in consumer group ConsumerGroup and enqueues, for each event,
// the deliveries it causes — the client's forwarded callback and its
// subscribed webhook endpoints — in Postgres. It never sends anything
// itself: package delivery's Worker does, so a slow receiver never holds up
// the topic, and the request path never waits for a receiver.
//
// Enqueueing is idempotent (one delivery per event and endpoint), so a
// redelivered record is a no-op; a record is acknowledged only after its
// deliveries are committed, so none is lost.
package forwarder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/pitboss/pitboss/adapters/delivery"
	"github.com/pitboss/pitboss/adapters/kafka"
)

// ConsumerGroup is the forwarder's Kafka consumer group. Frozen: a renamed
// group consumes the topic again (and enqueueing is idempotent only while
// the deliveries table still holds the old rows).
const ConsumerGroup = "pitboss.forwarder.v1"

// Enqueuer stores the deliveries of one event.
type Enqueuer interface {
	// Enqueue inserts a delivery for every endpoint of o's client that
	// takes o, once per (event, endpoint), and returns how many it added.
	Enqueue(ctx context.Context, o delivery.Outgoing) (int, error)
}

// Defaults of Config.
const (
	DefaultHandlers   = 8
	retryFirstBackoff = 100 * time.Millisecond
	retryMaxBackoff   = 5 * time.Second
)

// Config configures a Forwarder.
type Config struct {
	// Topic is the ledger topic; kafka.DefaultTopic when empty.
	Topic string
	// Handlers is how many records are handled at once. Records of one
	// partition are handed out one at a time (the subscriber waits for an
	// acknowledgement), so this bounds the partitions worked on in
	// parallel and keeps each partition's order.
	Handlers int
	Logger   *slog.Logger
}

// Forwarder consumes the ledger topic and enqueues deliveries.
type Forwarder struct {
	sub   message.Subscriber
	store Enqueuer
	cfg   Config
	log   *slog.Logger
}

// New returns a forwarder reading from sub (a subscriber in ConsumerGroup;
// the caller closes it).
func New(sub message.Subscriber, store Enqueuer, cfg Config) (*Forwarder, error) {
	if cfg.Topic == "" {
		cfg.Topic = kafka.DefaultTopic
	}
	if cfg.Handlers == 0 {
		cfg.Handlers = DefaultHandlers
	}
	if cfg.Handlers < 1 {
		return nil, fmt.Errorf("forwarder: handlers %d < 1", cfg.Handlers)
	}
	if sub == nil || store == nil {
		return nil, errors.New("forwarder: subscriber and store are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Forwarder{sub: sub, store: store, cfg: cfg, log: cfg.Logger.With("component", "forwarder", "topic", cfg.Topic)}, nil
}

// Run consumes until ctx ends, then returns nil.
func (f *Forwarder) Run(ctx context.Context) error {
	msgs, err := f.sub.Subscribe(ctx, f.cfg.Topic)
	if err != nil {
		return fmt.Errorf("subscribe to %s: %w", f.cfg.Topic, err)
	}
	var wg sync.WaitGroup
	for range f.cfg.Handlers {
		wg.Go(func() {
			for msg := range msgs {
				f.handle(ctx, msg)
			}
		})
	}
	wg.Wait()
	return nil
}

// handle enqueues one record's deliveries and acknowledges it. A record
// that cannot be decoded is logged and skipped (holding the partition on it
// would stop every later event of its streams); a failing store is retried
// until it works or ctx ends (then the record is not acknowledged and comes
// back to whoever consumes the partition next).
func (f *Forwarder) handle(ctx context.Context, msg *message.Message) {
	out, ok, err := Prepare(msg.Payload)
	if err != nil {
		f.log.ErrorContext(ctx, "ledger record skipped: it does not make deliveries", "event_id",
			msg.Metadata.Get(kafka.HeaderEventID), "event_type", msg.Metadata.Get(kafka.HeaderEventType), "err", err)
		msg.Ack()
		return
	}
	if !ok {
		msg.Ack()
		return
	}
	backoff := retryFirstBackoff
	for {
		n, err := f.store.Enqueue(ctx, out)
		if err == nil {
			f.log.DebugContext(ctx, "deliveries enqueued", "event_id", out.EventID, "client_id", out.ClientID, "deliveries", n)
			msg.Ack()
			return
		}
		if ctx.Err() != nil {
			msg.Nack()
			return
		}
		f.log.WarnContext(ctx, "enqueue deliveries, will retry", "event_id", out.EventID, "backoff", backoff, "err", err)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			msg.Nack()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, retryMaxBackoff)
	}
}
