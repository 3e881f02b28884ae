package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/pitboss/pitboss/adapters/delivery"
	"github.com/pitboss/pitboss/adapters/forwarder"
	"github.com/pitboss/pitboss/adapters/kafka"
	"github.com/pitboss/pitboss/adapters/postgres/deliverystore"
)

// deliveryConfig is the outbound delivery settings (docs/callbacks-and-webhooks.md).
type deliveryConfig struct {
	// AllowPrivate is PITBOSS_ALLOW_PRIVATE_CALLBACKS: deliveries (and
	// configured URLs) may target loopback and private addresses.
	AllowPrivate bool
	Timeout      time.Duration
	Concurrency  int
	Schedule     delivery.Schedule
}

// load reads the PITBOSS_DELIVERY_* variables and
// PITBOSS_ALLOW_PRIVATE_CALLBACKS.
func (d *deliveryConfig) load() []error {
	var errs []error
	boolean := func(name string, def bool) bool {
		v, err := strconv.ParseBool(env(name, strconv.FormatBool(def)))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s must be true or false", name))
		}
		return v
	}
	duration := func(name string, def time.Duration) time.Duration {
		v, err := time.ParseDuration(env(name, def.String()))
		if err != nil || v <= 0 {
			errs = append(errs, fmt.Errorf("%s must be a positive duration such as 10s", name))
		}
		return v
	}
	integer := func(name string, def, lo, hi int) int {
		v, err := strconv.Atoi(env(name, strconv.Itoa(def)))
		if err != nil || v < lo || v > hi {
			errs = append(errs, fmt.Errorf("%s must be an integer from %d to %d", name, lo, hi))
		}
		return v
	}
	d.AllowPrivate = boolean("PITBOSS_ALLOW_PRIVATE_CALLBACKS", false)
	d.Timeout = duration("PITBOSS_DELIVERY_TIMEOUT", delivery.DefaultTimeout)
	d.Concurrency = integer("PITBOSS_DELIVERY_CONCURRENCY", delivery.DefaultConcurrency, 1, 1024)
	d.Schedule = delivery.Schedule{
		Base:        duration("PITBOSS_DELIVERY_RETRY_BASE", delivery.DefaultRetryBase),
		Factor:      delivery.DefaultRetryFactor,
		Cap:         duration("PITBOSS_DELIVERY_RETRY_CAP", delivery.DefaultRetryCap),
		MaxAttempts: integer("PITBOSS_DELIVERY_MAX_ATTEMPTS", delivery.DefaultMaxAttempts, 1, 1000),
		MaxAge:      duration("PITBOSS_DELIVERY_MAX_AGE", delivery.DefaultMaxAge),
	}
	if len(errs) == 0 {
		if err := d.Schedule.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("PITBOSS_DELIVERY_RETRY_*: %w", err))
		}
	}
	return errs
}

// startForwarder runs the forwarder role: the Kafka consumer that enqueues
// deliveries and the worker that sends them. Both stop with ctx; the worker
// lets attempts in flight end (within the delivery timeout) and records
// them.
func startForwarder(ctx context.Context, g *errgroup.Group, cfg config, pool *pgxpool.Pool, log *slog.Logger) error {
	box, err := cfg.secretBox(log)
	if err != nil {
		return err
	}
	store, err := deliverystore.NewDeliveries(pool, box)
	if err != nil {
		return err
	}
	if err := kafka.EnsureTopic(ctx, cfg.KafkaBrokers, cfg.Topic, 6, 1); err != nil {
		return fmt.Errorf("kafka topic %s at %s: %w", cfg.Topic, strings.Join(cfg.KafkaBrokers, ","), err)
	}
	fwd, err := forwarder.New(store, forwarder.Config{Brokers: cfg.KafkaBrokers, Topic: cfg.Topic, Logger: log})
	if err != nil {
		return err
	}
	sender := delivery.NewSender(delivery.SenderConfig{Timeout: cfg.Delivery.Timeout, AllowPrivate: cfg.Delivery.AllowPrivate})
	worker, err := delivery.NewWorker(store, sender, delivery.WorkerConfig{Concurrency: cfg.Delivery.Concurrency,
		Schedule: cfg.Delivery.Schedule, Logger: log})
	if err != nil {
		return err
	}
	if cfg.Delivery.AllowPrivate {
		log.Warn("PITBOSS_ALLOW_PRIVATE_CALLBACKS is on: callbacks and webhooks may reach loopback and private addresses")
	}
	g.Go(func() error { return fwd.Run(ctx) })
	g.Go(func() error { return worker.Run(ctx) })
	return nil
}
