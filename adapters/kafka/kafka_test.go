package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/pitboss/pitboss/adapters/kafka"
	"github.com/pitboss/pitboss/adapters/kafka/kafkatest"
)

func TestSaramaPublisherConfig(t *testing.T) {
	c := kafka.SaramaPublisherConfig()
	if err := c.Validate(); err != nil {
		t.Fatalf("config does not validate: %v", err)
	}
	checks := []struct {
		name string
		ok   bool
	}{
		{"idempotent", c.Producer.Idempotent},
		{"acks = all", c.Producer.RequiredAcks == sarama.WaitForAll},
		{"one open request", c.Net.MaxOpenRequests == 1},
		{"bounded retries", c.Producer.Retry.Max > 0 && c.Producer.Retry.Max <= 20},
		{"successes returned", c.Producer.Return.Successes},
		{"version >= 3.6", c.Version.IsAtLeast(sarama.V3_6_0_0)},
		{"hash partitioner keeps a key on one partition", samePartition(c.Producer.Partitioner("t"))},
	}
	for _, tc := range checks {
		if !tc.ok {
			t.Errorf("%s: not so", tc.name)
		}
	}
	pc := kafka.PublisherConfig([]string{"b:9092"})
	if pc.Marshaler == nil || pc.OverwriteSaramaConfig == nil || len(pc.Brokers) != 1 {
		t.Errorf("PublisherConfig incomplete: %+v", pc)
	}
}

func samePartition(p sarama.Partitioner) bool {
	if !p.RequiresConsistency() {
		return false
	}
	first := int32(-1)
	for range 10 {
		n, err := p.Partition(&sarama.ProducerMessage{Key: sarama.StringEncoder("acct-1")}, 12)
		if err != nil || (first >= 0 && n != first) {
			return false
		}
		first = n
	}
	return true
}

func TestMarshalerKeysByStreamID(t *testing.T) {
	tests := []struct {
		name    string
		meta    map[string]string
		wantKey string
		wantErr error
	}{
		{name: "stream id is the key", meta: map[string]string{kafka.HeaderStreamID: "acct-7", kafka.HeaderEventID: "e1"}, wantKey: "acct-7"},
		{name: "missing stream id", meta: map[string]string{kafka.HeaderEventID: "e1"}, wantErr: kafka.ErrMissingStreamID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := message.NewMessage("e1", []byte(`{}`))
			for k, v := range tc.meta {
				msg.Metadata.Set(k, v)
			}
			rec, err := kafka.Marshaler().Marshal("topic", msg)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			key, _ := rec.Key.Encode()
			if string(key) != tc.wantKey {
				t.Errorf("key = %q, want %q", key, tc.wantKey)
			}
		})
	}
}

func TestEnsureTopicIsIdempotent(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Brokers(t)
	topic := kafkatest.NewTopic(t, brokers, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := kafka.EnsureTopic(ctx, brokers, topic, 3, 1); err != nil {
		t.Fatalf("second EnsureTopic: %v", err)
	}
}

// Both publishers produce the same records: key = stream id, metadata as
// headers, payload verbatim; and the watermill subscriber reads them back.
func TestPublishersAndSubscriber(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Brokers(t)
	publishers := map[string]func() (message.Publisher, error){
		"watermill": func() (message.Publisher, error) { return kafka.NewPublisher(brokers, nil) },
		"batch":     func() (message.Publisher, error) { return kafka.NewBatchPublisher(brokers, nil) },
	}
	for name, newPub := range publishers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			topic := kafkatest.NewTopic(t, brokers, 4)
			pub, err := newPub()
			if err != nil {
				t.Fatal(err)
			}
			defer pub.Close()

			const n = 20
			var msgs []*message.Message
			for i := range n {
				m := message.NewMessage(fmt.Sprintf("00000000-0000-0000-0000-%012d", i), fmt.Appendf(nil, `{"i":%d}`, i))
				m.Metadata.Set(kafka.HeaderStreamID, fmt.Sprintf("acct-%d", i%3))
				m.Metadata.Set(kafka.HeaderStreamVersion, fmt.Sprint(i/3+1))
				m.Metadata.Set(kafka.HeaderEventID, m.UUID)
				msgs = append(msgs, m)
			}
			if err := pub.Publish(topic, msgs...); err != nil {
				t.Fatalf("publish: %v", err)
			}
			bad := message.NewMessage("no-key", []byte(`{}`))
			if err := pub.Publish(topic, bad); !errors.Is(err, kafka.ErrMissingStreamID) {
				t.Errorf("publish without stream id: err = %v, want ErrMissingStreamID", err)
			}

			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			recs, err := kafkatest.ReadUntil(ctx, brokers, topic, func(r []kafkatest.Record) bool { return len(r) >= n })
			if err != nil {
				t.Fatalf("read back: %v (got %d)", err, len(recs))
			}
			partOf := map[string]int32{}
			lastVersion := map[string]int{}
			for _, r := range recs {
				if r.Key != r.Headers[kafka.HeaderStreamID] {
					t.Errorf("key %q != stream_id header %q", r.Key, r.Headers[kafka.HeaderStreamID])
				}
				if p, ok := partOf[r.Key]; ok && p != r.Partition {
					t.Errorf("stream %s on partitions %d and %d", r.Key, p, r.Partition)
				}
				partOf[r.Key] = r.Partition
				v, err := strconv.Atoi(r.Headers[kafka.HeaderStreamVersion])
				if err != nil || v <= lastVersion[r.Key] {
					t.Errorf("stream %s: version %q after %d", r.Key, r.Headers[kafka.HeaderStreamVersion], lastVersion[r.Key])
				}
				lastVersion[r.Key] = v
			}

			sub, err := kafka.NewSubscriber(brokers, "pitboss-test-"+name, nil, true)
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()
			ch, err := sub.Subscribe(ctx, topic)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for len(got) < n {
				select {
				case m := <-ch:
					got[m.UUID] = string(m.Payload)
					if m.Metadata.Get(kafka.HeaderEventID) != m.UUID {
						t.Errorf("event_id %q != uuid %q", m.Metadata.Get(kafka.HeaderEventID), m.UUID)
					}
					m.Ack()
				case <-ctx.Done():
					t.Fatalf("subscriber got %d of %d", len(got), n)
				}
			}
			for _, m := range msgs {
				if got[m.UUID] != string(m.Payload) {
					t.Errorf("message %s: payload %q, want %q", m.UUID, got[m.UUID], m.Payload)
				}
			}
		})
	}
}
