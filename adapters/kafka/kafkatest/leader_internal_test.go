package kafkatest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// TestWhileNotLeader: a leadership error is tried again, any other answer
// ends the loop at once, and a leadership error that lasts ends with ctx.
func TestWhileNotLeader(t *testing.T) {
	t.Parallel()
	brokers := Brokers(t)
	topic := NewTopic(t, brokers, 1)
	client, err := sarama.NewClient(brokers, config())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	other := errors.New("another error")
	tests := []struct {
		name    string
		answers []error // the call's answers in turn; the last repeats
		want    error
		calls   int
	}{
		{"success at once", []error{nil}, nil, 1},
		{"not the leader, then success", []error{sarama.ErrNotLeaderForPartition, sarama.ErrLeaderNotAvailable,
			sarama.ErrUnknownTopicOrPartition, nil}, nil, 4},
		{"another error ends at once", []error{other}, other, 1},
		{"not the leader, then another error", []error{sarama.ErrNotLeaderForPartition, other}, other, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			err := whileNotLeader(t.Context(), client, topic, func() error {
				calls++
				return tc.answers[min(calls, len(tc.answers))-1]
			})
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) || calls != tc.calls {
				t.Errorf("error %v after %d calls; want %v after %d", err, calls, tc.want, tc.calls)
			}
		})
	}
	t.Run("a lasting leadership error ends with ctx", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
		defer cancel()
		err := whileNotLeader(ctx, client, topic, func() error { return sarama.ErrNotLeaderForPartition })
		if !errors.Is(err, sarama.ErrNotLeaderForPartition) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("error %v; want the leadership error and the deadline", err)
		}
	})
}
