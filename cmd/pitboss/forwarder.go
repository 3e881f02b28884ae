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
	"github.com/pitboss/pitboss/gateway"
)

// deliveryConfig is the outbound delivery settings (docs/callbacks-and-webhooks.md).
type deliveryConfig struct {
	// PrivateTargets is PITBOSS_PRIVATE_CALLBACKS: whose deliveries (and
	// configured URLs) may target loopback and private addresses, by the
	// client's environment.
	PrivateTargets gateway.PrivateTargets
	// Deprecated says what to tell the operator once there is a logger:
	// a deprecated variable in use ("" when none).
	Deprecated  string
	Timeout     time.Duration
	Concurrency int
	Schedule    delivery.Schedule
}

// The private-targets settings: PITBOSS_ALLOW_PRIVATE_CALLBACKS is the
// boolean before PITBOSS_PRIVATE_CALLBACKS, kept as an alias (true: all,
// false: none).
const (
	privateCallbacksVar      = "PITBOSS_PRIVATE_CALLBACKS"
	allowPrivateCallbacksVar = "PITBOSS_ALLOW_PRIVATE_CALLBACKS"
)

// load reads the PITBOSS_DELIVERY_* variables and PITBOSS_PRIVATE_CALLBACKS
// (or its deprecated alias).
func (d *deliveryConfig) load() []error {
	var errs []error
	duration := func(name string, def time.Duration) time.Duration {
		v, err := time.ParseDuration(env(name, def.String()))
		if err != nil || v <= 0 {
			errs = append(errs, fmt.Errorf("%s must be a positive duration such as 10s", name))
		}
		return v
	}
	if err := d.loadPrivateTargets(); err != nil {
		errs = append(errs, err)
	}
	d.Timeout = duration("PITBOSS_DELIVERY_TIMEOUT", delivery.DefaultTimeout)
	d.Concurrency = envInt("PITBOSS_DELIVERY_CONCURRENCY", delivery.DefaultConcurrency, 1, 1024, &errs)
	d.Schedule = delivery.Schedule{
		Base:        duration("PITBOSS_DELIVERY_RETRY_BASE", delivery.DefaultRetryBase),
		Factor:      delivery.DefaultRetryFactor,
		Cap:         duration("PITBOSS_DELIVERY_RETRY_CAP", delivery.DefaultRetryCap),
		MaxAttempts: envInt("PITBOSS_DELIVERY_MAX_ATTEMPTS", delivery.DefaultMaxAttempts, 1, 1000, &errs),
		MaxAge:      duration("PITBOSS_DELIVERY_MAX_AGE", delivery.DefaultMaxAge),
	}
	if len(errs) == 0 {
		if err := d.Schedule.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("PITBOSS_DELIVERY_RETRY_*: %w", err))
		}
	}
	return errs
}

// loadPrivateTargets reads PITBOSS_PRIVATE_CALLBACKS (none, sandbox or
// all; default none) and the deprecated PITBOSS_ALLOW_PRIVATE_CALLBACKS.
// Both may be set only when they agree: which one wins would be a guess.
func (d *deliveryConfig) loadPrivateTargets() error {
	d.PrivateTargets, d.Deprecated = gateway.PrivateTargetsNone, ""
	newV, oldV := env(privateCallbacksVar, ""), env(allowPrivateCallbacksVar, "")
	if newV != "" {
		pt, err := gateway.ParsePrivateTargets(newV)
		if err != nil {
			return fmt.Errorf("%s must be none, sandbox or all (whose callbacks may reach loopback and private addresses), not %q",
				privateCallbacksVar, gateway.ClipValue(newV))
		}
		d.PrivateTargets = pt
	}
	if oldV == "" {
		return nil
	}
	b, err := strconv.ParseBool(oldV)
	if err != nil {
		return fmt.Errorf("%s must be true or false (deprecated: use %s=none|sandbox|all)",
			allowPrivateCallbacksVar, privateCallbacksVar)
	}
	alias := gateway.PrivateTargetsNone
	if b {
		alias = gateway.PrivateTargetsAll
	}
	if newV != "" && alias != d.PrivateTargets {
		return fmt.Errorf("%s=%s (deprecated) means %s=%s, but %s is %s: unset %s",
			allowPrivateCallbacksVar, oldV, privateCallbacksVar, alias, privateCallbacksVar, d.PrivateTargets, allowPrivateCallbacksVar)
	}
	d.PrivateTargets = alias
	d.Deprecated = fmt.Sprintf("%s is deprecated: set %s=%s instead", allowPrivateCallbacksVar, privateCallbacksVar, alias)
	if newV != "" {
		d.Deprecated = fmt.Sprintf("%s is deprecated (it agrees with %s=%s): unset it", allowPrivateCallbacksVar, privateCallbacksVar, alias)
	}
	return nil
}

// logPrivateTargets tells the operator about the private-targets setting
// when it is not production's.
func (d deliveryConfig) logPrivateTargets(log *slog.Logger) {
	if d.Deprecated != "" {
		log.Warn(d.Deprecated)
	}
	switch d.PrivateTargets {
	case gateway.PrivateTargetsSandbox:
		log.Warn(privateCallbacksVar+" is sandbox: sandbox clients' callbacks and webhooks may reach loopback and private addresses",
			"private_callbacks", d.PrivateTargets.String())
	case gateway.PrivateTargetsAll:
		log.Warn(privateCallbacksVar+" is all: every client's callbacks and webhooks may reach loopback and private addresses",
			"private_callbacks", d.PrivateTargets.String())
	}
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
	if err := kafka.EnsureTopic(ctx, cfg.KafkaBrokers, cfg.Topic, 6, kafka.BrokerDefaultReplication); err != nil {
		return fmt.Errorf("kafka topic %s at %s: %w", cfg.Topic, strings.Join(cfg.KafkaBrokers, ","), err)
	}
	fwd, err := forwarder.New(store, forwarder.Config{Brokers: cfg.KafkaBrokers, Topic: cfg.Topic,
		FetchWait: cfg.ConsumerFetchWait, Logger: log})
	if err != nil {
		return err
	}
	sender := delivery.NewSender(delivery.SenderConfig{Timeout: cfg.Delivery.Timeout, PrivateTargets: cfg.Delivery.PrivateTargets})
	worker, err := delivery.NewWorker(store, sender, delivery.WorkerConfig{Concurrency: cfg.Delivery.Concurrency,
		Schedule: cfg.Delivery.Schedule, Logger: log})
	if err != nil {
		return err
	}
	g.Go(func() error { return fwd.Run(ctx) })
	g.Go(func() error { return worker.Run(ctx) })
	return nil
}
