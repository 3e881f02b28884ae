package apitest

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pitboss/pitboss/adapters/forwarder"
	"github.com/pitboss/pitboss/adapters/kafka"
	"github.com/pitboss/pitboss/adapters/kafka/kafkatest"
	"github.com/pitboss/pitboss/adapters/projector"
	"github.com/pitboss/pitboss/adapters/relay"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/internal/eventually"
	"github.com/pitboss/pitboss/projections"
)

// readModelRunners are the relay and one projector per projection on a
// fresh topic with fresh consumer groups (Options.ReadModels).
func (h *Harness) readModelRunners() []func(context.Context) error {
	t := h.t
	t.Helper()
	brokers := kafkatest.Brokers(t)
	topic := kafkatest.NewTopic(t, brokers, 3)
	dlq := kafkatest.NewTopic(t, brokers, 1)
	pub, err := kafka.NewPublisher(brokers, h.log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pub.Close() }) // after the relay stopped: cleanups run last first
	r, err := relay.New(h.Pool, pub, relay.Config{Topic: topic, PollInterval: 100 * time.Millisecond}, h.log)
	if err != nil {
		t.Fatal(err)
	}
	runners := []func(context.Context) error{r.Run}
	for _, n := range projections.All {
		w, err := projector.New(h.ReadModels, projector.Config{Brokers: brokers, Topic: topic, DeadLetterTopic: dlq,
			Projection: n, ConsumerGroup: UID("pitboss-test-" + string(n))}, h.log)
		if err != nil {
			t.Fatal(err)
		}
		runners = append(runners, w.Run)
	}
	return runners
}

// Pump stands in for the relay, the projectors and the forwarder's Kafka
// consumer: it feeds every event after the last one it fed, in position
// order, to every projection through their store path (Apply, then
// Advance, as the projector does) and to the forwarder's enqueueing
// (forwarder.Prepare, Deliveries.Enqueue). Call it while no write is in
// flight, so reading by position misses nothing. It leaves Kafka out on
// purpose: the relay publishes an event only once every older write
// transaction of the whole Postgres cluster has ended (it is gap-safe by
// xmin), so an unrelated long transaction (another suite's benchmark
// building an index) would stall a test for minutes.
func (h *Harness) Pump() {
	h.t.Helper()
	if err := h.PumpOnce(context.Background()); err != nil {
		h.t.Fatal(err)
	}
}

// PumpOnce is Pump returning its error, for a goroutine of the test.
func (h *Harness) PumpOnce(ctx context.Context) error {
	h.pump.mu.Lock()
	defer h.pump.mu.Unlock()
	rows, err := h.Pool.Query(ctx, `SELECT position, body FROM events WHERE position > $1 ORDER BY position`, h.pump.pumped)
	if err != nil {
		return fmt.Errorf("read the events after %d: %w", h.pump.pumped, err)
	}
	type row struct {
		pos  int64
		body []byte
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var x row
		return x, r.Scan(&x.pos, &x.body)
	})
	if err != nil {
		return fmt.Errorf("read the events after %d: %w", h.pump.pumped, err)
	}
	for _, x := range list {
		e, err := domain.DecodeBody(x.body)
		if err != nil {
			return fmt.Errorf("decode event %d: %w", x.pos, err)
		}
		for _, n := range projections.All {
			p, _ := projections.ByName(n)
			if _, err := h.ReadModels.Apply(ctx, p, e); err != nil {
				return fmt.Errorf("project event %d into %s: %w", x.pos, n, err)
			}
		}
		out, ok, err := forwarder.Prepare(x.body)
		if err != nil {
			return fmt.Errorf("prepare the deliveries of event %d: %w", x.pos, err)
		}
		if ok {
			if _, err := h.Deliveries.Enqueue(ctx, out); err != nil {
				return fmt.Errorf("enqueue the deliveries of event %d: %w", x.pos, err)
			}
		}
		h.pump.pumped = x.pos
	}
	for _, n := range projections.All {
		if _, err := h.ReadModels.Advance(ctx, n); err != nil {
			return fmt.Errorf("advance %s: %w", n, err)
		}
	}
	return nil
}

// WaitHistory waits until the transaction history, as the client with key
// reads it, has reached position (a read with min_position answers 200,
// not 503 READ_MODEL_BEHIND).
func (h *Harness) WaitHistory(key string, position int64) {
	h.t.Helper()
	path := "/api/v1/transactions?per_page=1&min_position=" + strconv.FormatInt(position, 10)
	eventually.True(h.t, 60*time.Second, "the history to reach position "+strconv.FormatInt(position, 10), func() bool {
		rec := h.Get(path, key)
		if rec.Code != http.StatusOK && rec.Code != http.StatusServiceUnavailable {
			h.t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
		return rec.Code == http.StatusOK
	})
}
