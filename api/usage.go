package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/usage"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/gateway"
)

// Usage monitoring: every authenticated /api/v1 request is counted in
// memory per client, key, minute and status class, and flushed to the
// usage store (gateway.UsageStore) periodically and on shutdown. See
// docs/keys-and-admin.md; package usage answers the counts.

// Usage meter defaults.
const (
	DefaultUsageFlushInterval = 10 * time.Second
	usageFlushTimeout         = 10 * time.Second
)

type usageKey struct {
	clientID, keyID string
	minute          int64 // unix minute
	class           int
}

// UsageMeter counts requests in memory and flushes them to a
// gateway.UsageStore.
// Build it with NewUsageMeter and call Run once.
type UsageMeter struct {
	store    gateway.UsageStore
	interval time.Duration
	log      *slog.Logger

	flushes, flushFailures atomic.Uint64

	mu       sync.Mutex
	counts   map[usageKey]int64
	lastUsed map[string]time.Time
}

// NewUsageMeter returns a meter flushing to store every interval (zero:
// DefaultUsageFlushInterval).
func NewUsageMeter(store gateway.UsageStore, interval time.Duration, logger *slog.Logger) *UsageMeter {
	if interval <= 0 {
		interval = DefaultUsageFlushInterval
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &UsageMeter{store: store, interval: interval, log: logger.With("component", "usage"),
		counts: map[usageKey]int64{}, lastUsed: map[string]time.Time{}}
}

// Record counts one request of the key at at that ended with status.
func (m *UsageMeter) Record(clientID, keyID string, at time.Time, status int) {
	class := min(max(status/100, 1), 5)
	k := usageKey{clientID: clientID, keyID: keyID, minute: at.Unix() / 60, class: class}
	m.mu.Lock()
	m.counts[k]++
	if at.After(m.lastUsed[keyID]) {
		m.lastUsed[keyID] = at
	}
	m.mu.Unlock()
}

// Flushes is how many flushes ran (for metrics).
func (m *UsageMeter) Flushes() uint64 { return m.flushes.Load() }

// FlushFailures is how many flushes failed (for metrics).
func (m *UsageMeter) FlushFailures() uint64 { return m.flushFailures.Load() }

// Pending is the number of counts not yet flushed (for tests and metrics).
func (m *UsageMeter) Pending() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.counts)
}

// Flush writes what was counted since the last flush. On failure the
// counts are kept for the next flush, so a database outage delays usage
// but does not lose it.
func (m *UsageMeter) Flush(ctx context.Context) error {
	m.mu.Lock()
	counts, lastUsed := m.counts, m.lastUsed
	m.counts, m.lastUsed = map[usageKey]int64{}, map[string]time.Time{}
	m.mu.Unlock()
	if len(counts) == 0 && len(lastUsed) == 0 {
		return nil
	}
	rows := make([]gateway.UsageCount, 0, len(counts))
	for k, n := range counts {
		rows = append(rows, gateway.UsageCount{ClientID: k.clientID, KeyID: k.keyID, Minute: time.Unix(k.minute*60, 0).UTC(),
			StatusClass: k.class, Requests: n})
	}
	err := m.store.AddUsage(ctx, rows, lastUsed)
	if err != nil {
		m.mu.Lock()
		for k, n := range counts {
			m.counts[k] += n
		}
		for id, t := range lastUsed {
			if t.After(m.lastUsed[id]) {
				m.lastUsed[id] = t
			}
		}
		m.mu.Unlock()
		err = fmt.Errorf("flush usage of %d counters: %w", len(rows), err)
	}
	m.flushes.Add(1)
	if err != nil {
		m.flushFailures.Add(1)
	}
	return err
}

// Run flushes every interval until ctx ends, then flushes once more (with
// a timeout of its own) so that a shutdown keeps the last counts. Stop it
// after the HTTP server has finished its in-flight requests.
func (m *UsageMeter) Run(ctx context.Context) error {
	t := time.NewTicker(m.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), usageFlushTimeout)
			defer cancel()
			if err := m.Flush(fctx); err != nil {
				m.log.Error("final usage flush failed; these counts are lost", "error", err)
			}
			return nil
		case <-t.C:
			fctx, cancel := context.WithTimeout(ctx, usageFlushTimeout)
			if err := m.Flush(fctx); err != nil && !errors.Is(err, context.Canceled) {
				m.log.Warn("usage flush failed; will retry", "error", err)
			}
			cancel()
		}
	}
}

// usageMiddleware counts every request of an authenticated key with the
// status it ended with (429s included).
func (s *Server) usageMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := next(c)
		// A request whose key was not authenticated (a signed launch with an
		// unknown api_key) has no key to count against.
		if p := wire.Principal(c); s.deps.Meter != nil && p.KeyID != "" {
			s.deps.Meter.Record(p.ClientID, p.KeyID, s.now(), responseStatus(c, err))
		}
		return err
	}
}

// responseStatus is the status a request ends with: the written one, or
// the one errorHandler will write for err.
func responseStatus(c echo.Context, err error) int {
	if err != nil && !c.Response().Committed {
		e, _ := wire.Classify(err)
		return e.Status
	}
	if st := c.Response().Status; st != 0 {
		return st
	}
	return http.StatusOK
}

// GET /api/v1/usage?from=&to=&granularity=minute|hour|day&key_id=: the
// calling client's requests per period, every key of the client unless
// key_id is given. Any key of the client may read it.
func (s *Server) clientUsage(c echo.Context) error {
	return usage.Reports{Store: s.deps.Usage, Now: s.now}.Answer(c, wire.Principal(c).ClientID)
}

// initMetering sets up what the metering middlewares use: the rate-limit
// stores and the metrics registry.
func (s *Server) initMetering() {
	s.localRates = gateway.NewMemoryRateStore()
	s.rates = s.deps.RateStore
	if s.rates == nil {
		s.rates = s.localRates
	}
	s.metrics = s.deps.Metrics
	if s.metrics == nil {
		s.metrics = noMetrics{}
	}
}

// now is the server's clock (the system clock when none is set).
func (s *Server) now() time.Time {
	if s.deps.Clock != nil {
		return s.deps.Clock.Now()
	}
	return time.Now()
}
