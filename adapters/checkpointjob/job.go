// Package checkpointjob is the daily signed-checkpoint job of `pitboss
// serve` (the relay role, docs/audit.md "Signed checkpoints"): every
// Interval it makes the day's checkpoint if none was signed since midnight
// UTC, and publishes every checkpoint not yet published on the checkpoint
// topic. The store's advisory lock makes one instance do it at a time.
package checkpointjob

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/pitboss/pitboss/adapters/kafka"
	"github.com/pitboss/pitboss/adapters/postgres/auditstore"
	"github.com/pitboss/pitboss/audit"
)

// TopicSuffix is appended to the ledger topic to name the checkpoint
// topic (pitboss.ledger.events.v1.checkpoints by default).
const TopicSuffix = ".checkpoints"

// Headers of a checkpoint message beside the key (kafka.HeaderStreamID).
const (
	HeaderCheckpointID = "checkpoint_id"
	HeaderKeyID        = "key_id"
)

// DefaultInterval is how often the job looks whether a checkpoint is due.
const DefaultInterval = time.Minute

// Store is what the job needs of the checkpoint store.
type Store interface {
	Daily(ctx context.Context, dueAfter time.Time, publish func([]audit.SignedCheckpoint) error) (auditstore.DailyResult, error)
}

// Config configures a Job.
type Config struct {
	Topic    string        // the checkpoint topic
	Interval time.Duration // default DefaultInterval
	Now      func() time.Time
	Logger   *slog.Logger
}

// Job makes and publishes the checkpoints.
type Job struct {
	store Store
	pub   message.Publisher
	cfg   Config
}

// New returns the job.
func New(store Store, pub message.Publisher, cfg Config) (*Job, error) {
	if cfg.Topic == "" {
		return nil, errors.New("checkpoint job: no topic")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Job{store: store, pub: pub, cfg: cfg}, nil
}

// Key is a checkpoint's Kafka key: "platform", or "client:" and the
// client's id, so each scope's checkpoints keep their order on one
// partition.
func Key(cp audit.SignedCheckpoint) string {
	if cp.ClientID == "" {
		return audit.CheckpointScopePlatform
	}
	return "client:" + cp.ClientID
}

// Message is cp as published: its record (audit.CheckpointRecord) as JSON,
// keyed by Key.
func Message(cp audit.SignedCheckpoint) (*message.Message, error) {
	body, err := json.Marshal(cp.Record())
	if err != nil {
		return nil, fmt.Errorf("encode checkpoint %d: %w", cp.ID, err)
	}
	msg := message.NewMessage("checkpoint-"+strconv.FormatInt(cp.ID, 10), body)
	msg.Metadata.Set(kafka.HeaderStreamID, Key(cp))
	msg.Metadata.Set(HeaderCheckpointID, strconv.FormatInt(cp.ID, 10))
	msg.Metadata.Set(HeaderKeyID, cp.KeyID)
	return msg, nil
}

// Tick makes the day's checkpoint if it is due and publishes what is
// pending.
func (j *Job) Tick(ctx context.Context) (auditstore.DailyResult, error) {
	midnight := j.cfg.Now().UTC().Truncate(24 * time.Hour)
	return j.store.Daily(ctx, midnight, j.publish)
}

func (j *Job) publish(cps []audit.SignedCheckpoint) error {
	msgs := make([]*message.Message, len(cps))
	for i, cp := range cps {
		m, err := Message(cp)
		if err != nil {
			return err
		}
		msgs[i] = m
	}
	return j.pub.Publish(j.cfg.Topic, msgs...)
}

// Run ticks every Interval until ctx ends. A failed tick is logged and
// retried at the next one.
func (j *Job) Run(ctx context.Context) error {
	t := time.NewTicker(j.cfg.Interval)
	defer t.Stop()
	for {
		d, err := j.Tick(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			j.cfg.Logger.Warn("signed checkpoints: the tick failed; retrying at the next", "err", err)
		case d.Made:
			j.cfg.Logger.Info("signed checkpoint made", "checkpoint", d.Result.Platform.ID,
				"position", d.Result.Platform.Position, "key_id", d.Result.Platform.KeyID, "clients", d.Result.Clients,
				"published", d.Published)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
