package metrics_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/metrics"
	"github.com/pitboss/pitboss/gateway"
)

type usage struct{}

func (usage) Flushes() uint64       { return 7 }
func (usage) FlushFailures() uint64 { return 2 }
func (usage) Pending() int          { return 3 }

// lagFunc is a gateway.LagSource answering what the test says.
type lagFunc func(context.Context) (gateway.Lag, error)

func (f lagFunc) Lag(ctx context.Context) (gateway.Lag, error) { return f(ctx) }

func scrape(t *testing.T, r *metrics.Registry) string {
	t.Helper()
	rec := httptest.NewRecorder()
	r.Handler(slog.New(slog.DiscardHandler)).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body)
	}
	b, err := io.ReadAll(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSeries feeds every series once and reads them back from the
// exposition GET /metrics serves.
func TestSeries(t *testing.T) {
	t.Parallel()
	r := metrics.New()
	r.ObserveRequest("GET", "/api/v1/wallet/balance", 200, "", 3*time.Millisecond)
	r.ObserveRequest("POST", "/api/v1/transactions", 400, "INSUFFICIENT_FUNDS", time.Millisecond)
	r.ObserveRateLimited("sandbox")
	r.ObserveRateStoreError()
	r.ObserveLedgerBatch(4, 6, 2*time.Millisecond, nil)
	r.ObserveLedgerBatch(2, 0, time.Millisecond, errors.New("commit"))
	r.WatchUsage(usage{})
	r.WatchLedgerPaths(func() metrics.LedgerPathCounts {
		return metrics.LedgerPathCounts{Cache: 40, Store: 3, Refused: 1, Pipelined: 25}
	})
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	published, oldest := now.Add(-30*time.Second), now.Add(-5*time.Second)
	r.WatchLag(lagFunc(func(context.Context) (gateway.Lag, error) {
		return gateway.Lag{Head: 100,
			Relays:      []gateway.RelayLag{{Name: "kafka", Position: 90, LastPublishedAt: &published, OldestUnpublishedAt: &oldest}},
			Projections: []gateway.ProjectionLag{{Name: "balances", Position: 100}}}, nil
	}), func() time.Time { return now }, time.Second, slog.New(slog.DiscardHandler))

	body := scrape(t, r)
	for _, want := range []string{
		`pitboss_http_requests_total{method="GET",route="/api/v1/wallet/balance",status="200"} 1`,
		`pitboss_http_request_duration_seconds_count{method="POST",route="/api/v1/transactions"} 1`,
		`pitboss_http_errors_total{code="INSUFFICIENT_FUNDS",method="POST",route="/api/v1/transactions",status="400"} 1`,
		`pitboss_rate_limited_total{tier="sandbox"} 1`,
		`pitboss_rate_limit_store_errors_total 1`,
		`pitboss_ledger_batch_operations_count 2`,
		`pitboss_ledger_batch_events_count 1`,
		`pitboss_ledger_batch_failures_total 1`,
		`pitboss_ledger_batches_total{decided_from="cache"} 40`,
		`pitboss_ledger_batches_total{decided_from="store"} 3`,
		`pitboss_ledger_batches_pipelined_total 25`,
		`pitboss_ledger_cache_refused_total 1`,
		`pitboss_usage_flushes_total 7`,
		`pitboss_usage_flush_failures_total 2`,
		`pitboss_usage_pending_counters 3`,
		`pitboss_lag_scrape_success 1`,
		`pitboss_event_store_head_position 100`,
		`pitboss_relay_lag_events{relay="kafka"} 10`,
		`pitboss_relay_lag_seconds{relay="kafka"} 5`,
		`pitboss_relay_last_published_age_seconds{relay="kafka"} 30`,
		`pitboss_projection_lag_events{projection="balances"} 0`,
		`pitboss_projection_lag_seconds{projection="balances"} 0`,
		"go_goroutines ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("exposition lacks %s", want)
		}
	}
	if strings.Contains(body, `pitboss_http_errors_total{code="",method="GET"`) {
		t.Errorf("a 200 was counted as an error:\n%s", body)
	}
}

// TestLagScrapeFailure: a lag read that fails says so in its own series
// instead of failing the scrape.
func TestLagScrapeFailure(t *testing.T) {
	t.Parallel()
	r := metrics.New()
	r.WatchLag(lagFunc(func(context.Context) (gateway.Lag, error) { return gateway.Lag{}, errors.New("database down") }),
		time.Now, time.Second, slog.New(slog.DiscardHandler))
	body := scrape(t, r)
	if !strings.Contains(body, "pitboss_lag_scrape_success 0") || strings.Contains(body, "pitboss_event_store_head_position") {
		t.Fatalf("exposition after a failed lag read:\n%s", body)
	}
}
