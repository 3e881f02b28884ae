package kafkatest_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/pitboss/pitboss/adapters/kafka"
	"github.com/pitboss/pitboss/adapters/kafka/kafkatest"
)

// TestReadUntil reads a fresh topic right after it is written (the moment a
// partition's leader may still be unknown to a new client) until done, and
// gives up on a read that cannot finish when its context ends.
func TestReadUntil(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Brokers(t)

	t.Run("until done, each partition in offset order", func(t *testing.T) {
		t.Parallel()
		topic := kafkatest.NewTopic(t, brokers, 3)
		cfg := sarama.NewConfig()
		cfg.Version = kafka.KafkaVersion
		cfg.Producer.Return.Successes = true
		cfg.Producer.RequiredAcks = sarama.WaitForAll
		p, err := sarama.NewSyncProducer(brokers, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		const n = 12
		for i := range n {
			if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder("k" + strconv.Itoa(i%4)),
				Value: sarama.StringEncoder(strconv.Itoa(i)), Headers: []sarama.RecordHeader{{Key: []byte("h"), Value: []byte("v")}}}); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		recs, err := kafkatest.ReadUntil(ctx, brokers, topic, func(rs []kafkatest.Record) bool { return len(rs) >= n })
		if err != nil {
			t.Fatalf("read %d records: %v", len(recs), err)
		}
		if len(recs) != n {
			t.Fatalf("read %d records, want %d", len(recs), n)
		}
		last := map[int32]int64{}
		for _, r := range recs {
			if prev, ok := last[r.Partition]; ok && r.Offset <= prev {
				t.Errorf("partition %d: offset %d after %d", r.Partition, r.Offset, prev)
			}
			last[r.Partition] = r.Offset
			if r.Headers["h"] != "v" {
				t.Errorf("record %d/%d: headers %v", r.Partition, r.Offset, r.Headers)
			}
		}
	})

	t.Run("a read that cannot finish ends with its context", func(t *testing.T) {
		t.Parallel()
		topic := kafkatest.NewTopic(t, brokers, 2)
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		recs, err := kafkatest.ReadUntil(ctx, brokers, topic, func(rs []kafkatest.Record) bool { return len(rs) >= 1 })
		if err == nil || !errors.Is(err, context.DeadlineExceeded) || len(recs) != 0 {
			t.Fatalf("read %d records, error %v; want none and the context's deadline", len(recs), err)
		}
	})
}
