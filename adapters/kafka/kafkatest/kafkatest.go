// Package kafkatest gives tests the real Kafka broker named by
// PITBOSS_KAFKA_BROKERS (`make test` starts it), a topic of their own, and a
// plain sarama reader that shows records as they are on the broker: key,
// partition, offset and headers.
package kafkatest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/pitboss/pitboss/adapters/kafka"
	"github.com/pitboss/pitboss/adapters/system"
)

// Brokers returns the broker list, failing the test when it is not set: a
// test that needs Kafka never silently skips.
func Brokers(t testing.TB) []string {
	t.Helper()
	v := os.Getenv("PITBOSS_KAFKA_BROKERS")
	if v == "" {
		t.Fatal("PITBOSS_KAFKA_BROKERS is not set: run the tests with `make test`, which starts PostgreSQL and Kafka")
	}
	return strings.Split(v, ",")
}

// NewTopic creates a topic with a random name and the given number of
// partitions, deleted when the test ends.
func NewTopic(t testing.TB, brokers []string, partitions int32) string {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	topic := "pitboss-test-" + hex.EncodeToString(b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := kafka.EnsureTopic(ctx, brokers, topic, partitions, 1); err != nil {
		t.Fatalf("create topic: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := kafka.DeleteTopic(ctx, brokers, topic); err != nil {
			t.Logf("delete topic %s: %v", topic, err)
		}
	})
	return topic
}

// Record is one Kafka record as stored on the broker.
type Record struct {
	Partition int32
	Offset    int64
	Key       string
	Value     []byte
	Headers   map[string]string
}

// Count is the sum of topic's partitions' high-water marks: the number of
// records when nothing was published in a transaction; transaction markers
// and aborted records count too.
func Count(ctx context.Context, brokers []string, topic string) (int64, error) {
	client, err := sarama.NewClient(brokers, config())
	if err != nil {
		return 0, fmt.Errorf("kafka client: %w", err)
	}
	defer client.Close()
	parts, err := client.Partitions(topic)
	if err != nil {
		return 0, fmt.Errorf("partitions of %s: %w", topic, err)
	}
	var n int64
	for _, p := range parts {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		var hw int64
		err := whileNotLeader(ctx, client, topic, func() (err error) {
			hw, err = client.GetOffset(topic, p, sarama.OffsetNewest)
			return err
		})
		if err != nil {
			return 0, fmt.Errorf("offset of %s/%d: %w", topic, p, err)
		}
		n += hw
	}
	return n, nil
}

// ReadUntil reads the committed records (read_committed, as every Pitboss
// consumer does) of every partition of topic from the start until done,
// called with all records read so far after each new one, returns true, or
// ctx ends (then it returns what it read, ctx's error and the last error a
// partition reported). Records of one partition keep their offset order in
// the result.
//
// A partition's error is not the end of its read: sarama reports the
// errors it retries (a fresh topic's partition whose leader is not yet
// known answers "not the leader for this partition" for a moment) and goes
// on, so ReadUntil waits for the records until ctx ends, and gives up on a
// partition only when sarama closes it. A ctx without a deadline gets one
// of readTimeout, so a read that cannot finish fails instead of hanging.
func ReadUntil(ctx context.Context, brokers []string, topic string, done func([]Record) bool) ([]Record, error) {
	return ReadUntilIsolation(ctx, brokers, topic, sarama.ReadCommitted, done)
}

// ReadUntilIsolation is ReadUntil at the given isolation level;
// sarama.ReadUncommitted also returns the records of aborted transactions.
func ReadUntilIsolation(ctx context.Context, brokers []string, topic string, level sarama.IsolationLevel, done func([]Record) bool) ([]Record, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancelTimeout context.CancelFunc
		ctx, cancelTimeout = context.WithTimeout(ctx, readTimeout)
		defer cancelTimeout()
	}
	cfg := config()
	cfg.Consumer.IsolationLevel = level
	client, err := sarama.NewClient(brokers, cfg)
	if err != nil {
		return nil, fmt.Errorf("kafka client: %w", err)
	}
	defer client.Close()
	consumer, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		return nil, fmt.Errorf("kafka consumer: %w", err)
	}
	defer consumer.Close()
	parts, err := consumer.Partitions(topic)
	if err != nil {
		return nil, fmt.Errorf("partitions of %s: %w", topic, err)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu      sync.Mutex
		records []Record
		lastErr error // the last error a partition reported
		wg      sync.WaitGroup
		errs    = make(chan error, len(parts))
	)
	for _, p := range parts {
		var pc sarama.PartitionConsumer
		err := whileNotLeader(ctx, client, topic, func() (err error) {
			pc, err = consumer.ConsumePartition(topic, p, sarama.OffsetOldest)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("consume %s/%d: %w", topic, p, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer pc.AsyncClose()
			perrs := pc.Errors()
			for {
				select {
				case <-ctx.Done():
					return
				case e, ok := <-perrs:
					if !ok {
						perrs = nil // closed with the messages: the case below ends the read
						continue
					}
					mu.Lock()
					lastErr = e
					mu.Unlock()
				case m, ok := <-pc.Messages():
					if !ok { // sarama gave the partition up
						mu.Lock()
						errs <- fmt.Errorf("read %s/%d: the partition consumer closed: %w", topic, p, lastErr)
						mu.Unlock()
						return
					}
					r := Record{Partition: m.Partition, Offset: m.Offset, Key: string(m.Key), Value: m.Value,
						Headers: make(map[string]string, len(m.Headers))}
					for _, h := range m.Headers {
						r.Headers[string(h.Key)] = string(h.Value)
					}
					mu.Lock()
					records = append(records, r)
					if done(records) {
						cancel()
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	mu.Lock()
	defer mu.Unlock()
	out := append([]Record(nil), records...)
	if done(out) {
		return out, nil
	}
	if e, ok := <-errs; ok {
		return out, e
	}
	if ctx.Err() != nil {
		return out, errors.Join(errors.New("read ended before done"), context.Cause(ctx), lastErr)
	}
	return out, nil
}

// whileNotLeader runs call until it succeeds, fails otherwise than with a
// leadership error, or ctx ends. A topic just created has its leaders in
// the cluster's metadata a moment before the broker serves them: a fresh
// client's first offset request can still hear "not the leader for this
// partition" (which failed relay TestMessageHeaders on a clean clone).
// Between tries the client's metadata of topic is refreshed.
func whileNotLeader(ctx context.Context, client sarama.Client, topic string, call func() error) error {
	for {
		err := call()
		if !errors.Is(err, sarama.ErrNotLeaderForPartition) && !errors.Is(err, sarama.ErrLeaderNotAvailable) &&
			!errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
			return err
		}
		_ = client.RefreshMetadata(topic) // the next call's error says more than this one's
		if !system.Sleep(ctx, 50*time.Millisecond) {
			return errors.Join(err, ctx.Err())
		}
	}
}

// readTimeout bounds a read whose ctx has no deadline.
const readTimeout = 2 * time.Minute

func config() *sarama.Config {
	c := sarama.NewConfig()
	c.ClientID = "pitboss-test"
	c.Version = kafka.KafkaVersion
	c.Consumer.Return.Errors = true
	return c
}
