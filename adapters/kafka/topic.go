package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/IBM/sarama"
)

// BrokerDefaultReplication asks EnsureTopic for the broker's
// default.replication.factor (KIP-464): 1 on the single development broker,
// 3 on a cluster (scripts/cluster.sh). The service creates its topics with
// it, so the cluster's settings, not the code, decide how many copies of
// the ledger there are; min.insync.replicas comes from the broker too.
const BrokerDefaultReplication int16 = -1

// EnsureTopic creates topic with the given partitions and replication
// factor unless it exists already (an existing topic is left as it is, even
// with other settings), then waits until every partition has a leader so a
// producer's first send does not race the topic's creation.
func EnsureTopic(ctx context.Context, brokers []string, topic string, partitions int32, replication int16) error {
	admin, err := newAdmin(ctx, brokers)
	if err != nil {
		return err
	}
	defer admin.Close()

	err = admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: replication}, false)
	if err != nil && !errors.Is(err, sarama.ErrTopicAlreadyExists) {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	return waitForLeaders(ctx, admin, topic)
}

// DeleteTopic deletes topic; a missing topic is not an error.
func DeleteTopic(ctx context.Context, brokers []string, topic string) error {
	admin, err := newAdmin(ctx, brokers)
	if err != nil {
		return err
	}
	defer admin.Close()
	if err := admin.DeleteTopic(topic); err != nil && !errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
		return fmt.Errorf("delete topic %s: %w", topic, err)
	}
	return nil
}

func newAdmin(ctx context.Context, brokers []string) (sarama.ClusterAdmin, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := sarama.NewConfig()
	c.ClientID = clientID
	c.Version = KafkaVersion
	if d, ok := ctx.Deadline(); ok {
		if t := time.Until(d); t > 0 {
			c.Admin.Timeout = t
			c.Net.DialTimeout = min(c.Net.DialTimeout, t)
		}
	}
	admin, err := sarama.NewClusterAdmin(brokers, c)
	if err != nil {
		return nil, fmt.Errorf("kafka admin %v: %w", brokers, err)
	}
	return admin, nil
}

func waitForLeaders(ctx context.Context, admin sarama.ClusterAdmin, topic string) error {
	const pause = 50 * time.Millisecond
	for {
		md, err := admin.DescribeTopics([]string{topic})
		if err == nil && len(md) == 1 && errors.Is(md[0].Err, sarama.ErrNoError) && len(md[0].Partitions) > 0 {
			ready := true
			for _, p := range md[0].Partitions {
				if !errors.Is(p.Err, sarama.ErrNoError) || p.Leader < 0 {
					ready = false
				}
			}
			if ready {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for leaders of %s: %w", topic, ctx.Err())
		case <-time.After(pause):
		}
	}
}
