package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/IBM/sarama"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pitboss/pitboss/adapters/kafka"
	"github.com/pitboss/pitboss/adapters/metrics"
	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/adapters/relay"
	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/gateway"
)

// Wiring of the service basics for serve: metrics, usage metering, rate
// limit store, readiness checks (docs/operations.md).

// The one registry feeds both ports (adapters and api never import each
// other, so the checks live here).
var (
	_ eventstore.LedgerObserver = (*metrics.Registry)(nil)
	_ api.Metrics               = (*metrics.Registry)(nil)
)

// lagScrapeTimeout bounds the database read behind the lag series.
const lagScrapeTimeout = 2 * time.Second

// metering is what the API role adds to the server for usage, rate limits
// and readiness.
type metering struct {
	usage *gatewaystore.Usage
	meter *api.UsageMeter
	rates gateway.RateStore
	ready []api.ReadyCheck
}

// newMetering builds the usage meter (not started), the rate-limit store
// and the readiness checks, and registers the lag series.
func newMetering(cfg config, pool *pgxpool.Pool, registry *metrics.Registry, log *slog.Logger) metering {
	usage := gatewaystore.NewUsage(pool)
	meter := api.NewUsageMeter(usage, cfg.Admin.UsageFlushInterval, log)
	registry.WatchUsage(meter)
	registry.WatchLag(gatewaystore.NewLag(pool), time.Now, lagScrapeTimeout, log)
	var rates gateway.RateStore // nil: each process's memory
	if cfg.Admin.RateStore == "postgres" {
		rates = gatewaystore.NewRateWindows(pool)
	}
	ready := []api.ReadyCheck{
		{Name: "postgres", Check: func(ctx context.Context) error { return pool.Ping(ctx) }},
		{Name: "kafka", Check: func(ctx context.Context) error { return kafkaReady(ctx, cfg.KafkaBrokers) },
			Optional: !cfg.Admin.kafkaRoles},
	}
	return metering{usage: usage, meter: meter, rates: rates, ready: ready}
}

// kafkaReady asks the brokers for cluster metadata. sarama takes no
// context, so the request runs on a goroutine bounded by sarama's own
// timeouts (set from ctx's deadline); the check returns when ctx ends.
func kafkaReady(ctx context.Context, brokers []string) error {
	timeout := 2 * time.Second
	if d, ok := ctx.Deadline(); ok {
		timeout = max(100*time.Millisecond, time.Until(d))
	}
	sc := sarama.NewConfig()
	sc.ClientID = "pitboss-readyz"
	sc.Version = kafka.KafkaVersion
	sc.Net.DialTimeout, sc.Net.ReadTimeout, sc.Net.WriteTimeout = timeout, timeout, timeout
	sc.Metadata.Retry.Max = 0
	sc.Metadata.Full = false
	done := make(chan error, 1)
	go func() {
		client, err := sarama.NewClient(brokers, sc)
		if err != nil {
			done <- fmt.Errorf("kafka %v: %w", brokers, err)
			return
		}
		defer client.Close()
		if err := client.RefreshMetadata(); err != nil {
			done <- fmt.Errorf("kafka metadata: %w", err)
			return
		}
		done <- nil
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("kafka %v: no metadata answer: %w", brokers, ctx.Err())
	}
}

// watchRelay exports the in-process relay's own counters (the lag series
// come from the database, wherever the relay runs).
func watchRelay(registry *metrics.Registry, r *relay.Relay) {
	gauge := func(name, help string, f func(relay.Stats) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return f(r.Stats()) })
	}
	counter := func(name, help string, f func(relay.Stats) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return f(r.Stats()) })
	}
	b2f := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	registry.MustRegister(
		gauge("pitboss_relay_leader", "1 while this process's relay holds the leader lock.",
			func(s relay.Stats) float64 { return b2f(s.Leader) }),
		gauge("pitboss_relay_position", "Position of the last event this process's relay published.",
			func(s relay.Stats) float64 { return float64(s.Position) }),
		counter("pitboss_relay_published_events_total", "Events published by this process's relay.",
			func(s relay.Stats) float64 { return float64(s.Published) }),
		counter("pitboss_relay_publish_errors_total", "Failed tries to publish a batch.",
			func(s relay.Stats) float64 { return float64(s.PublishErrors) }),
	)
}
