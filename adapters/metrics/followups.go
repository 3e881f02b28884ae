package metrics

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// FollowUpBacklog reads the seamless wallet's unsettled follow-ups: how
// many, and when the oldest was queued (zero when none).
type FollowUpBacklog func(ctx context.Context) (int64, time.Time, error)

// WatchFollowUps exports the seamless wallet's follow-up queue
// (docs/seamless-wallet.md#follow-ups), read from backlog at every scrape
// (bounded by timeout): pitboss_seamless_followups_pending and
// pitboss_seamless_followups_oldest_age_seconds.
func (m *Registry) WatchFollowUps(backlog FollowUpBacklog, now func() time.Time, timeout time.Duration, logger *slog.Logger) {
	if logger == nil {
		logger = slog.Default()
	}
	m.reg.MustRegister(&followUpCollector{backlog: backlog, now: now, timeout: timeout, log: logger})
}

var (
	descFollowUpsPending = prometheus.NewDesc("pitboss_seamless_followups_pending",
		"Seamless wallet follow-ups not yet settled with the client's wallet (unknown outcomes).", nil, nil)
	descFollowUpsOldest = prometheus.NewDesc("pitboss_seamless_followups_oldest_age_seconds",
		"Age of the oldest unsettled seamless wallet follow-up (0 when none).", nil, nil)
)

type followUpCollector struct {
	backlog FollowUpBacklog
	now     func() time.Time
	timeout time.Duration
	log     *slog.Logger
}

func (c *followUpCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descFollowUpsPending
	ch <- descFollowUpsOldest
}

func (c *followUpCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	n, oldest, err := c.backlog(ctx)
	if err != nil {
		c.log.Warn("metrics: seamless follow-ups could not be read", "err", err)
		return
	}
	age := 0.0
	if !oldest.IsZero() {
		age = max(c.now().Sub(oldest).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(descFollowUpsPending, prometheus.GaugeValue, float64(n))
	ch <- prometheus.MustNewConstMetric(descFollowUpsOldest, prometheus.GaugeValue, age)
}
