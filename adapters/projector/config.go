package projector

import (
	"errors"
	"fmt"
	"time"

	"github.com/pitboss/pitboss/adapters/kafka"
	"github.com/pitboss/pitboss/projections"
)

// Defaults of Config.
const (
	DefaultMaxBatch           = 256
	DefaultMaxInvalidAttempts = 3
	DefaultGapTimeout         = time.Minute
	DefaultRetryBackoff       = 50 * time.Millisecond
	DefaultMaxRetryBackoff    = 5 * time.Second
	DefaultWatermarkInterval  = 20 * time.Millisecond
	DefaultIdleAdvance        = time.Second
	DefaultLightWatermark     = 80 * time.Millisecond
	// LightMove is a watermark move of a light load: fewer events.
	LightMove = 32
)

// The modes of the projector role (PITBOSS_PROJECTOR_MODE): one combined
// worker (the default), or a worker per projection (kept for rollback).
// Switching either way is safe: each projection's checkpoints make every
// event it applied already a skip.
const (
	ModeCombined = "combined"
	ModeSeparate = "separate"
)

// RoleConfigs are the workers of the projector role in mode.
func RoleConfigs(mode string, brokers []string, topic string) ([]Config, error) {
	switch mode {
	case ModeCombined:
		return []Config{{Brokers: brokers, Topic: topic, Combined: true}}, nil
	case ModeSeparate:
		var out []Config
		for _, n := range projections.All {
			out = append(out, Config{Brokers: brokers, Topic: topic, Projection: n})
		}
		return out, nil
	}
	return nil, fmt.Errorf("projector mode %q: want %s or %s", mode, ModeCombined, ModeSeparate)
}

// DeadLetterTopic is the dead-letter topic of a ledger topic: "<topic>.dlq".
func DeadLetterTopic(topic string) string { return topic + ".dlq" }

// CombinedConsumerGroup is the consumer group of the combined worker
// (Config.Combined). Frozen: a new name reads the topic again from its
// oldest offset (harmless, every event a skip, but slow).
const CombinedConsumerGroup = "pitboss.projector.v1"

// Config configures a worker. Zero fields take their defaults; Brokers and
// either Projection or Combined are required.
type Config struct {
	Brokers    []string
	Projection projections.Name
	// Combined makes the worker apply every projection (projections.All)
	// in one pass: one consumer group, one decode per message, one
	// transaction per batch for all of them. Projection must be empty.
	Combined bool
	// Topic is the ledger topic; kafka.DefaultTopic by default.
	Topic string
	// DeadLetterTopic receives the events the projection gives up on;
	// DeadLetterTopic(Topic) by default.
	DeadLetterTopic string
	// ConsumerGroup is Projection.ConsumerGroup() by default, or
	// CombinedConsumerGroup when Combined. Frozen once
	// in use: a new group reads the topic again from its oldest offset.
	ConsumerGroup string
	// MaxBatch bounds the messages of one partition taken at once (and so
	// the events of one transaction).
	MaxBatch int
	// MaxInvalidAttempts is how often an event that fails validation is
	// tried before it goes to the dead-letter topic. An undecodable body
	// goes at once.
	MaxInvalidAttempts int
	// GapTimeout is how long an event whose stream is missing an earlier
	// version is retried (the earlier one may still arrive, e.g. from
	// another partition after a repartitioning) before it is dead-lettered.
	GapTimeout time.Duration
	// RetryBackoff is the first pause before a retry; it doubles up to
	// MaxRetryBackoff. Database errors are retried for as long as it takes.
	RetryBackoff, MaxRetryBackoff time.Duration
	// WatermarkInterval is the least time between two watermark moves;
	// IdleAdvance how often the watermark is moved without new events.
	WatermarkInterval, IdleAdvance time.Duration
	// LightWatermark replaces WatermarkInterval after a move of fewer than
	// LightMove events (a light load: each move is a transaction per
	// projection, and the moves would follow every small batch); under
	// load the moves are larger and WatermarkInterval holds.
	LightWatermark time.Duration
	// FetchWait lets the broker gather a fetch for up to this long at a
	// light load (kafka.BatchConsumerConfig.FetchWait); zero: it answers
	// at once.
	FetchWait time.Duration
	// Gather is how long a round smaller than MaxBatch waits for the
	// rounds of other partitions the same fetch woke, to share its
	// transaction (combiner); zero: it does not wait (rounds that queue
	// while a transaction runs share the next one all the same).
	Gather time.Duration
}

func (c *Config) setDefaults() {
	if c.Topic == "" {
		c.Topic = kafka.DefaultTopic
	}
	if c.DeadLetterTopic == "" {
		c.DeadLetterTopic = DeadLetterTopic(c.Topic)
	}
	switch {
	case c.ConsumerGroup != "":
	case c.Combined:
		c.ConsumerGroup = CombinedConsumerGroup
	case c.Projection != "":
		c.ConsumerGroup = c.Projection.ConsumerGroup()
	}
	if c.MaxBatch == 0 {
		c.MaxBatch = DefaultMaxBatch
	}
	if c.MaxInvalidAttempts == 0 {
		c.MaxInvalidAttempts = DefaultMaxInvalidAttempts
	}
	if c.GapTimeout == 0 {
		c.GapTimeout = DefaultGapTimeout
	}
	if c.RetryBackoff == 0 {
		c.RetryBackoff = DefaultRetryBackoff
	}
	if c.MaxRetryBackoff == 0 {
		c.MaxRetryBackoff = DefaultMaxRetryBackoff
	}
	if c.WatermarkInterval == 0 {
		c.WatermarkInterval = DefaultWatermarkInterval
	}
	if c.IdleAdvance == 0 {
		c.IdleAdvance = DefaultIdleAdvance
	}
	if c.LightWatermark == 0 {
		c.LightWatermark = max(DefaultLightWatermark, c.WatermarkInterval)
	}
}

// Validate reports every invalid field.
func (c Config) Validate() error {
	var errs []error
	if len(c.Brokers) == 0 {
		errs = append(errs, errors.New("no brokers"))
	}
	switch {
	case c.Combined && c.Projection != "":
		errs = append(errs, fmt.Errorf("a combined worker applies every projection: projection %q must be empty", c.Projection))
	case !c.Combined && !c.Projection.Valid():
		errs = append(errs, fmt.Errorf("unknown projection %q", c.Projection))
	}
	if c.Topic == "" || c.DeadLetterTopic == "" || c.Topic == c.DeadLetterTopic {
		errs = append(errs, fmt.Errorf("topic %q and dead-letter topic %q must be set and differ", c.Topic, c.DeadLetterTopic))
	}
	if c.ConsumerGroup == "" {
		errs = append(errs, errors.New("consumer group is empty"))
	}
	if c.Gather < 0 || c.Gather > time.Second {
		errs = append(errs, fmt.Errorf("gather %v: want 0 (off) to 1s", c.Gather))
	}
	if c.MaxBatch < 1 {
		errs = append(errs, fmt.Errorf("max batch %d < 1", c.MaxBatch))
	}
	if c.MaxInvalidAttempts < 1 {
		errs = append(errs, fmt.Errorf("max invalid attempts %d < 1", c.MaxInvalidAttempts))
	}
	if c.GapTimeout < 0 {
		errs = append(errs, fmt.Errorf("gap timeout %v < 0", c.GapTimeout))
	}
	if c.RetryBackoff <= 0 || c.MaxRetryBackoff < c.RetryBackoff {
		errs = append(errs, fmt.Errorf("retry backoff %v..%v: want 0 < first <= max", c.RetryBackoff, c.MaxRetryBackoff))
	}
	if c.LightWatermark < c.WatermarkInterval {
		errs = append(errs, fmt.Errorf("light watermark interval %v < watermark interval %v", c.LightWatermark, c.WatermarkInterval))
	}
	if c.WatermarkInterval <= 0 || c.IdleAdvance <= 0 {
		errs = append(errs, fmt.Errorf("watermark interval %v and idle advance %v must be positive", c.WatermarkInterval, c.IdleAdvance))
	}
	return errors.Join(errs...)
}

// watermarkPause is the pause after a watermark move of moved events.
func (c Config) watermarkPause(moved int64) time.Duration {
	if moved < LightMove {
		return c.LightWatermark
	}
	return c.WatermarkInterval
}
