// Package metrics is the process's Prometheus registry: the series the
// HTTP layer (package api, through its Metrics port), the ledger writer
// (as an adapters/postgres/eventstore.LedgerObserver) and the usage meter
// feed, the relay and projection lag read from the database (through
// gateway.LagSource), and the handler that serves them at GET /metrics.
// Metric names, help texts, buckets and labels are part of the operations
// contract (docs/operations.md): add series, never rename one.
package metrics

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pitboss/pitboss/gateway"
)

// Registry is the process's Prometheus registry and the series the HTTP
// layer, the ledger writer (as its observer) and the usage meter feed. It
// is served at GET /metrics. Each Registry has its own Prometheus
// registry, so tests may build several servers in one process.
type Registry struct {
	reg *prometheus.Registry

	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec
	httpErrors   *prometheus.CounterVec

	ledgerBatchDuration prometheus.Histogram
	ledgerBatchOps      prometheus.Histogram
	ledgerBatchEvents   prometheus.Histogram
	ledgerBatchFailures prometheus.Counter

	rateLimited     *prometheus.CounterVec
	rateStoreErrors prometheus.Counter
}

// New returns a registry with the Go runtime and process collectors and
// every series of this package.
func New() *Registry {
	m := &Registry{reg: prometheus.NewRegistry()}
	m.httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pitboss_http_requests_total", Help: "HTTP requests by method, route template and status code.",
	}, []string{"method", "route", "status"})
	m.httpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "pitboss_http_request_duration_seconds", Help: "HTTP request latency by method and route template.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"method", "route"})
	m.httpErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pitboss_http_errors_total", Help: "HTTP error responses by method, route template, status and error code.",
	}, []string{"method", "route", "status", "code"})
	m.ledgerBatchDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "pitboss_ledger_batch_duration_seconds", Help: "Time to decide and commit one ledger batch (append latency).",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10},
	})
	m.ledgerBatchOps = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "pitboss_ledger_batch_operations", Help: "Operations (commands) per ledger batch.",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024},
	})
	m.ledgerBatchEvents = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "pitboss_ledger_batch_events", Help: "Events appended per committed ledger batch.",
		Buckets: []float64{0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024},
	})
	m.ledgerBatchFailures = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "pitboss_ledger_batch_failures_total", Help: "Ledger batches that failed (nothing of them was applied).",
	})
	m.rateLimited = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pitboss_rate_limited_total", Help: "Requests refused with 429 by plan tier.",
	}, []string{"tier"})
	m.rateStoreErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "pitboss_rate_limit_store_errors_total", Help: "Shared rate-limit store failures (the process's own window decided).",
	})
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.httpRequests, m.httpDuration, m.httpErrors,
		m.ledgerBatchDuration, m.ledgerBatchOps, m.ledgerBatchEvents, m.ledgerBatchFailures,
		m.rateLimited, m.rateStoreErrors)
	return m
}

// MustRegister adds other parts' series (the relay's, in cmd) to the
// registry; it panics on a name registered twice, as Prometheus does.
func (m *Registry) MustRegister(cs ...prometheus.Collector) { m.reg.MustRegister(cs...) }

// Handler serves the registry in the Prometheus text format (GET
// /metrics); a series that cannot be gathered is logged to logger.
func (m *Registry) Handler(logger *slog.Logger) http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)})
}

// ObserveRequest counts and times one answered request by its route
// template (never the raw path: ids in paths would make a series per id).
// Answers of status 400 and above are also counted as errors, with their
// error code ("" when the answer had none).
func (m *Registry) ObserveRequest(method, route string, status int, code string, took time.Duration) {
	st := strconv.Itoa(status)
	m.httpRequests.WithLabelValues(method, route, st).Inc()
	m.httpDuration.WithLabelValues(method, route).Observe(took.Seconds())
	if status >= 400 {
		m.httpErrors.WithLabelValues(method, route, st, code).Inc()
	}
}

// ObserveRateLimited counts one request refused with 429 in tier.
func (m *Registry) ObserveRateLimited(tier string) { m.rateLimited.WithLabelValues(tier).Inc() }

// ObserveRateStoreError counts one failure of the shared rate-limit store.
func (m *Registry) ObserveRateStoreError() { m.rateStoreErrors.Inc() }

// ObserveLedgerBatch records one batch of the ledger writer: it makes
// Registry an adapters/postgres/eventstore.LedgerObserver.
func (m *Registry) ObserveLedgerBatch(operations, events int, took time.Duration, err error) {
	m.ledgerBatchDuration.Observe(took.Seconds())
	m.ledgerBatchOps.Observe(float64(operations))
	if err != nil {
		m.ledgerBatchFailures.Inc()
		return
	}
	m.ledgerBatchEvents.Observe(float64(events))
}

// UsageCounters are the usage meter's own counters (api.UsageMeter).
type UsageCounters interface {
	// Flushes is how many flushes to the database ran.
	Flushes() uint64
	// FlushFailures is how many of them failed.
	FlushFailures() uint64
	// Pending is the number of counters not yet flushed.
	Pending() int
}

// WatchUsage exports the meter's flush counters and backlog.
func (m *Registry) WatchUsage(u UsageCounters) {
	m.reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "pitboss_usage_flushes_total", Help: "Usage flushes to the database.",
		}, func() float64 { return float64(u.Flushes()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "pitboss_usage_flush_failures_total", Help: "Usage flushes that failed (their counts are kept for the next).",
		}, func() float64 { return float64(u.FlushFailures()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "pitboss_usage_pending_counters", Help: "Usage counters not yet flushed.",
		}, func() float64 { return float64(u.Pending()) }),
	)
}

// LedgerPaths reports how the ledger writer decided its batches since it
// started (eventstore.Ledger.Stats).
type LedgerPaths func() LedgerPathCounts

// LedgerPathCounts are the writer's batches: decided from its cache in one
// round trip (Cache), from the store (Store), those of the first kind the
// server refused and that were decided again from the store (Refused), and
// those sent while another batch was still in flight (Pipelined).
type LedgerPathCounts struct {
	Cache, Store, Refused, Pipelined int64
}

// WatchLedgerPaths exports paths as pitboss_ledger_batches_total by
// decided_from (cache, store), pitboss_ledger_cache_refused_total and
// pitboss_ledger_batches_pipelined_total.
func (m *Registry) WatchLedgerPaths(paths LedgerPaths) {
	const help = "Ledger batches by what they were decided from: the writer's cache (one round trip) or the store."
	m.reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "pitboss_ledger_batches_total", Help: help, ConstLabels: prometheus.Labels{"decided_from": "cache"},
		}, func() float64 { return float64(paths().Cache) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "pitboss_ledger_batches_total", Help: help, ConstLabels: prometheus.Labels{"decided_from": "store"},
		}, func() float64 { return float64(paths().Store) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "pitboss_ledger_cache_refused_total",
			Help: "Ledger batches decided from the cache that the server refused (another writer, a restore, a record gone) and that were decided again from the store.",
		}, func() float64 { return float64(paths().Refused) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "pitboss_ledger_batches_pipelined_total",
			Help: "Ledger batches sent while the batch before them was still committing (two in flight).",
		}, func() float64 { return float64(paths().Pipelined) }),
	)
}

// WatchLag exports the relay's and the projections' lag, read from source
// at every scrape (bounded by timeout). The numbers come from the database,
// so any API process reports them, wherever the relay and the projector
// run.
func (m *Registry) WatchLag(source gateway.LagSource, now func() time.Time, timeout time.Duration, logger *slog.Logger) {
	if logger == nil {
		logger = slog.Default()
	}
	m.reg.MustRegister(&lagCollector{source: source, now: now, timeout: timeout, log: logger})
}

var (
	descLagUp = prometheus.NewDesc("pitboss_lag_scrape_success",
		"1 when the lag series below could be read from the database.", nil, nil)
	descHead = prometheus.NewDesc("pitboss_event_store_head_position",
		"Position of the last event in the event store.", nil, nil)
	descRelayLagEvents = prometheus.NewDesc("pitboss_relay_lag_events",
		"Events in the store after the relay's checkpoint (head - checkpoint position).", []string{"relay"}, nil)
	descRelayLagSeconds = prometheus.NewDesc("pitboss_relay_lag_seconds",
		"How long the oldest unpublished event has waited (now - its occurred_at); 0 when caught up.", []string{"relay"}, nil)
	descRelayLastAge = prometheus.NewDesc("pitboss_relay_last_published_age_seconds",
		"now - occurred_at of the last published event (grows while the store is idle).", []string{"relay"}, nil)
	descProjLagEvents = prometheus.NewDesc("pitboss_projection_lag_events",
		"Events in the store after the projection's watermark.", []string{"projection"}, nil)
	descProjLagSeconds = prometheus.NewDesc("pitboss_projection_lag_seconds",
		"How long the oldest unapplied event has waited; 0 when caught up.", []string{"projection"}, nil)
)

type lagCollector struct {
	source  gateway.LagSource
	now     func() time.Time
	timeout time.Duration
	log     *slog.Logger
}

func (l *lagCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descLagUp, descHead, descRelayLagEvents, descRelayLagSeconds, descRelayLastAge,
		descProjLagEvents, descProjLagSeconds} {
		ch <- d
	}
}

func (l *lagCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
	defer cancel()
	lag, err := l.source.Lag(ctx)
	if err != nil {
		l.log.Warn("read relay and projection lag", "error", err)
		ch <- prometheus.MustNewConstMetric(descLagUp, prometheus.GaugeValue, 0)
		return
	}
	now := l.now()
	age := func(t *time.Time) float64 {
		if t == nil {
			return 0
		}
		return max(0, now.Sub(*t).Seconds())
	}
	ch <- prometheus.MustNewConstMetric(descLagUp, prometheus.GaugeValue, 1)
	ch <- prometheus.MustNewConstMetric(descHead, prometheus.GaugeValue, float64(lag.Head))
	for _, r := range lag.Relays {
		ch <- prometheus.MustNewConstMetric(descRelayLagEvents, prometheus.GaugeValue, float64(max(0, lag.Head-r.Position)), r.Name)
		ch <- prometheus.MustNewConstMetric(descRelayLagSeconds, prometheus.GaugeValue, age(r.OldestUnpublishedAt), r.Name)
		if r.LastPublishedAt != nil {
			ch <- prometheus.MustNewConstMetric(descRelayLastAge, prometheus.GaugeValue, age(r.LastPublishedAt), r.Name)
		}
	}
	for _, p := range lag.Projections {
		ch <- prometheus.MustNewConstMetric(descProjLagEvents, prometheus.GaugeValue, float64(max(0, lag.Head-p.Position)), p.Name)
		ch <- prometheus.MustNewConstMetric(descProjLagSeconds, prometheus.GaugeValue, age(p.OldestUnappliedAt), p.Name)
	}
}
