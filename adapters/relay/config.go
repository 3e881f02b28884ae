package relay

import (
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/pitboss/pitboss/adapters/kafka"
)

// Defaults of Config.
const (
	DefaultName               = "kafka"
	DefaultBatchSize          = 500
	DefaultPollInterval       = 100 * time.Millisecond
	DefaultStandbyRetry       = time.Second
	DefaultMaxPublishAttempts = 8
	DefaultPublishBackoff     = 100 * time.Millisecond
	DefaultMaxPublishBackoff  = 5 * time.Second
	DefaultLingerBelow        = 32
)

// Config configures a Relay. The zero value of every field but the ones
// marked required means its default.
type Config struct {
	// Name is the relay's row in relay_checkpoints. Frozen once in use:
	// a new name publishes the whole event store again.
	Name string
	// Topic is where events go; kafka.DefaultTopic by default.
	Topic string
	// BatchSize is the most events read, published and checkpointed in
	// one step.
	BatchSize int
	// PollInterval is how long the relay sleeps when it has caught up and
	// no notification came. Notifications on NotifyChannel wake it at
	// once; the poll catches what they cannot announce (see the package
	// doc: an older transaction that ends without notifying).
	PollInterval time.Duration
	// LockKey is the session advisory lock that elects the one active
	// relay per Name. By default it is derived from Name. It must differ
	// from every other advisory lock key in the database (the ledger
	// writer's batch lock in particular, or the relay would block it).
	LockKey int64
	// StandbyRetry is how often a standby tries to take the lock, and how
	// long a relay that lost its leadership waits before trying again.
	StandbyRetry time.Duration
	// MaxPublishAttempts bounds the tries to publish one batch; after the
	// last one the relay steps down (so another instance may try) and
	// retries as a standby after StandbyRetry.
	MaxPublishAttempts int
	// PublishBackoff is the first pause between two tries; it doubles up
	// to MaxPublishBackoff.
	PublishBackoff    time.Duration
	MaxPublishBackoff time.Duration
	// Linger is how long the relay gathers after a notification when its
	// last batch held fewer than LingerBelow events (a light load), so a
	// Kafka transaction and a checkpoint carry the events of those
	// milliseconds, not one or two (make bench's moderate step, issue 38).
	// Under load the batches are larger and it never waits. Zero: it never
	// lingers (`pitboss serve` sets PITBOSS_RELAY_LINGER, 50 ms).
	Linger      time.Duration
	LingerBelow int
}

func (c *Config) setDefaults() {
	if c.Name == "" {
		c.Name = DefaultName
	}
	if c.Topic == "" {
		c.Topic = kafka.DefaultTopic
	}
	if c.BatchSize == 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.PollInterval == 0 {
		c.PollInterval = DefaultPollInterval
	}
	if c.LockKey == 0 {
		c.LockKey = LockKeyFor(c.Name)
	}
	if c.StandbyRetry == 0 {
		c.StandbyRetry = DefaultStandbyRetry
	}
	if c.MaxPublishAttempts == 0 {
		c.MaxPublishAttempts = DefaultMaxPublishAttempts
	}
	if c.PublishBackoff == 0 {
		c.PublishBackoff = DefaultPublishBackoff
	}
	if c.MaxPublishBackoff == 0 {
		c.MaxPublishBackoff = DefaultMaxPublishBackoff
	}
	if c.LingerBelow == 0 {
		c.LingerBelow = DefaultLingerBelow
	}
}

// Validate reports every invalid field at once.
func (c Config) Validate() error {
	var errs []error
	if c.Name == "" {
		errs = append(errs, errors.New("name is empty"))
	}
	if c.Topic == "" {
		errs = append(errs, errors.New("topic is empty"))
	}
	if c.BatchSize < 1 {
		errs = append(errs, fmt.Errorf("batch size %d < 1", c.BatchSize))
	}
	if c.PollInterval <= 0 {
		errs = append(errs, fmt.Errorf("poll interval %v <= 0", c.PollInterval))
	}
	if c.StandbyRetry <= 0 {
		errs = append(errs, fmt.Errorf("standby retry %v <= 0", c.StandbyRetry))
	}
	if c.MaxPublishAttempts < 1 {
		errs = append(errs, fmt.Errorf("max publish attempts %d < 1", c.MaxPublishAttempts))
	}
	if c.PublishBackoff <= 0 || c.MaxPublishBackoff < c.PublishBackoff {
		errs = append(errs, fmt.Errorf("publish backoff %v..%v: want 0 < first <= max", c.PublishBackoff, c.MaxPublishBackoff))
	}
	if c.Linger < 0 || c.Linger > time.Second {
		errs = append(errs, fmt.Errorf("linger %v: want 0 (off) to 1s, the relay's lag follows it", c.Linger))
	}
	return errors.Join(errs...)
}

// LockKeyFor is the default leader lock key of the relay called name: a
// 64-bit FNV-1a hash of "pitboss.relay/" + name.
func LockKeyFor(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte("pitboss.relay/" + name))
	return int64(h.Sum64())
}
