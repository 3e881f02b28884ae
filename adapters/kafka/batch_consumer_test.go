package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/pitboss/pitboss/adapters/kafka"
	"github.com/pitboss/pitboss/adapters/kafka/kafkatest"
)

// consumed runs ConsumeBatches in group until stop says so (or 30 s pass)
// and returns the batches handed over, as "stream/version" values.
func consumed(t *testing.T, brokers []string, topic, group string, maxBatch int,
	settle func(batch []*sarama.ConsumerMessage) bool, stop func(total int) bool) [][]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var (
		mu      sync.Mutex
		batches [][]string
		total   int
	)
	err := kafka.ConsumeBatches(ctx, kafka.BatchConsumerConfig{Brokers: brokers, Group: group, Topic: topic,
		MaxBatch: maxBatch, FromOldest: true}, func(_ context.Context, batch []*sarama.ConsumerMessage) bool {
		mu.Lock()
		defer mu.Unlock()
		var b []string
		for _, m := range batch {
			b = append(b, string(m.Key)+"/"+string(m.Value))
		}
		batches = append(batches, b)
		total += len(batch)
		ok := settle(batch)
		if stop(total) {
			cancel()
		}
		return ok
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("ConsumeBatches: %v, want context.Canceled after the stop", err)
	}
	if ctx.Err() == nil || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("stopped by the 30 s limit: got %d messages in %d batches", total, len(batches))
	}
	return batches
}

// ConsumeBatches hands a partition's waiting messages over in batches of at
// most MaxBatch, in order; it commits a batch's offsets only once the
// handler settled it, so an unsettled batch is consumed again by the next
// member of the group, and a settled one is not.
func TestConsumeBatches(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Brokers(t)
	topic := kafkatest.NewTopic(t, brokers, 1)
	pub := testPublisher(t, brokers)
	publish := func(from, to int) {
		t.Helper()
		var msgs []*message.Message
		for v := from; v <= to; v++ {
			msgs = append(msgs, streamMsg("s", v, []byte(strconv.Itoa(v))))
		}
		if err := pub.Publish(topic, msgs...); err != nil {
			t.Fatal(err)
		}
	}
	all := func([]*sarama.ConsumerMessage) bool { return true }
	group := "pitboss-test-batches-" + strconv.FormatInt(time.Now().UnixNano(), 36)

	// Given 40 messages of one stream on the partition.
	publish(1, 40)
	// When a member takes them with batches of at most 16,
	batches := consumed(t, brokers, topic, group, 16, all, func(n int) bool { return n >= 40 })
	// then it gets all 40 in order, no batch over 16, and some over 1.
	var flat []string
	biggest := 0
	for _, b := range batches {
		if len(b) > 16 {
			t.Fatalf("a batch of %d > MaxBatch 16", len(b))
		}
		biggest = max(biggest, len(b))
		flat = append(flat, b...)
	}
	for i, got := range flat {
		if want := "s/" + strconv.Itoa(i+1); got != want {
			t.Fatalf("message %d is %s, want %s (all: %v)", i, got, want, flat)
		}
	}
	if len(flat) != 40 || biggest < 2 {
		t.Fatalf("%d messages, biggest batch %d: want 40 in batches, not one by one", len(flat), biggest)
	}

	// Given 10 more, when a member fails to settle its first batch (it
	// stops first),
	publish(41, 50)
	failed := consumed(t, brokers, topic, group, 16, func([]*sarama.ConsumerMessage) bool { return false },
		func(int) bool { return true })
	if failed[0][0] != "s/41" {
		t.Fatalf("after 40 settled messages the group starts at %s, want s/41", failed[0][0])
	}
	// then the next member gets that batch again, and nothing settled.
	again := consumed(t, brokers, topic, group, 16, all, func(n int) bool { return n >= 10 })
	var got []string
	for _, b := range again {
		got = append(got, b...)
	}
	if fmt.Sprint(got) != fmt.Sprint([]string{"s/41", "s/42", "s/43", "s/44", "s/45", "s/46", "s/47", "s/48", "s/49", "s/50"}) {
		t.Fatalf("after an unsettled batch the group reads %v, want s/41..s/50", got)
	}
}

func TestConsumeBatchesRefusesAnIncompleteConfig(t *testing.T) {
	t.Parallel()
	for _, cfg := range []kafka.BatchConsumerConfig{
		{Group: "g", Topic: "t", MaxBatch: 1},
		{Brokers: []string{"b"}, Topic: "t", MaxBatch: 1},
		{Brokers: []string{"b"}, Group: "g", MaxBatch: 1},
		{Brokers: []string{"b"}, Group: "g", Topic: "t"},
	} {
		if err := kafka.ConsumeBatches(t.Context(), cfg, func(context.Context, []*sarama.ConsumerMessage) bool { return true }); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}

// With FetchWait the broker holds a fetch until enough bytes wait or the
// wait passes: records committed one transaction at a time within it come
// in one or two batches, not one each, and all of them, in order.
func TestConsumeBatchesFetchWait(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Brokers(t)
	topic := kafkatest.NewTopic(t, brokers, 1)
	pub := testPublisher(t, brokers)
	// One record first, so the member has joined and fetches before the rest.
	if err := pub.Publish(topic, streamMsg("s", 1, []byte("1"))); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	var (
		mu      sync.Mutex
		batches [][]string
		total   int
	)
	joined := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- kafka.ConsumeBatches(ctx, kafka.BatchConsumerConfig{Brokers: brokers, Topic: topic, MaxBatch: 100, FromOldest: true,
			Group: "pitboss-test-fetchwait-" + strconv.FormatInt(time.Now().UnixNano(), 36), FetchWait: 2 * time.Second},
			func(_ context.Context, batch []*sarama.ConsumerMessage) bool {
				mu.Lock()
				defer mu.Unlock()
				var b []string
				for _, m := range batch {
					b = append(b, string(m.Value))
				}
				batches = append(batches, b)
				if total == 0 {
					close(joined)
				}
				if total += len(batch); total >= 6 {
					cancel()
				}
				return true
			})
	}()
	select {
	case <-joined:
	case <-ctx.Done():
		t.Fatal("the first record was not consumed within 60s")
	}
	for v := 2; v <= 6; v++ {
		if err := pub.Publish(topic, streamMsg("s", v, []byte(strconv.Itoa(v)))); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("ConsumeBatches: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(batches[1:]) != "[[2 3 4 5 6]]" && len(batches) > 3 {
		t.Fatalf("five transactions within the fetch wait came in %d batches: %v; want one or two", len(batches)-1, batches[1:])
	}
	var flat []string
	for _, b := range batches {
		flat = append(flat, b...)
	}
	if fmt.Sprint(flat) != "[1 2 3 4 5 6]" {
		t.Fatalf("records %v, want 1..6 in order", flat)
	}
}
