package api

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pitboss/pitboss/gateway"
)

// Metrics is the process's Prometheus registry and the series the HTTP
// layer, the ledger writer (as its observer) and the usage meter feed. It
// is served at GET /metrics. Each Metrics has its own registry, so tests
// may build several servers in one process.
type Metrics struct {
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

// NewMetrics returns a registry with the Go runtime and process collectors
// and every series of this package.
func NewMetrics() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
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

// Registry is where other parts of the process (the relay, in cmd)
// register their own series.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// ObserveLedgerBatch records one batch of the ledger writer: it makes
// Metrics an adapters/postgres/eventstore.LedgerObserver.
func (m *Metrics) ObserveLedgerBatch(operations, events int, took time.Duration, err error) {
	m.ledgerBatchDuration.Observe(took.Seconds())
	m.ledgerBatchOps.Observe(float64(operations))
	if err != nil {
		m.ledgerBatchFailures.Inc()
		return
	}
	m.ledgerBatchEvents.Observe(float64(events))
}

// WatchUsage exports the meter's flush counters and backlog.
func (m *Metrics) WatchUsage(u *UsageMeter) {
	m.reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "pitboss_usage_flushes_total", Help: "Usage flushes to the database.",
		}, func() float64 { return float64(u.flushes.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "pitboss_usage_flush_failures_total", Help: "Usage flushes that failed (their counts are kept for the next).",
		}, func() float64 { return float64(u.flushFailures.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "pitboss_usage_pending_counters", Help: "Usage counters not yet flushed.",
		}, func() float64 { return float64(u.Pending()) }),
	)
}

// metricsMiddleware counts and times every request by its route template
// (never the raw path: ids in paths would make a series per id).
func (s *Server) metricsMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		route := c.Path()
		if route == "" || route == "/*" {
			route = "unmatched"
		}
		method := c.Request().Method
		status := responseStatus(c, err)
		st := strconv.Itoa(status)
		s.metrics.httpRequests.WithLabelValues(method, route, st).Inc()
		s.metrics.httpDuration.WithLabelValues(method, route).Observe(time.Since(start).Seconds())
		if status >= 400 {
			code := ""
			if err != nil {
				e, _ := classify(err)
				code = e.Code
			}
			s.metrics.httpErrors.WithLabelValues(method, route, st, code).Inc()
		}
		return err
	}
}

// WatchLag exports the relay's and the projections' lag, read from source
// at every scrape (bounded by timeout). The numbers come from the database,
// so any API process reports them, wherever the relay and the projector
// run.
func (m *Metrics) WatchLag(source gateway.LagSource, now func() time.Time, timeout time.Duration, logger *slog.Logger) {
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

// GET /metrics
func (s *Server) metricsHandler() echo.HandlerFunc {
	h := promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)})
	return echo.WrapHandler(h)
}
