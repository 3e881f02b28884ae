package api_test

import (
	"context"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/gateway"
)

func pingCheck(pool *pgxpool.Pool) []api.ReadyCheck {
	return []api.ReadyCheck{{Name: "postgres", Check: func(ctx context.Context) error { return pool.Ping(ctx) }}}
}

// TestHealthAndReadiness: /healthz answers while the process runs; /readyz
// is 503 with the failing check named when Postgres does not answer.
func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	good := apitest.New(t, apitest.Options{Pool: pool, Ready: pingCheck})
	// A second server whose database is a DSN nothing listens on.
	bad := apitest.New(t, apitest.Options{Pool: unreachablePool(t), Ready: pingCheck})

	type checks map[string]struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	for name, h := range map[string]*apitest.Harness{"good": good, "bad": bad} {
		t.Run(name+": healthz", func(t *testing.T) {
			rec := h.Do(apitest.Request{Method: http.MethodGet, Path: "/healthz"})
			if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"ok"`) {
				t.Fatalf("healthz %d %s", rec.Code, rec.Body)
			}
		})
	}
	t.Run("ready", func(t *testing.T) {
		rec := good.Do(apitest.Request{Method: http.MethodGet, Path: "/readyz"})
		got := apitest.Decode[struct {
			Status string `json:"status"`
			Checks checks `json:"checks"`
		}](t, rec)
		if rec.Code != http.StatusOK || got.Status != "ready" || !got.Checks["postgres"].OK {
			t.Fatalf("readyz %d %s", rec.Code, rec.Body)
		}
	})
	t.Run("degraded: an optional check fails", func(t *testing.T) {
		down := unreachablePool(t)
		h := apitest.New(t, apitest.Options{Pool: pool, Ready: func(p *pgxpool.Pool) []api.ReadyCheck {
			return append(pingCheck(p), api.ReadyCheck{Name: "reports-replica", Optional: true,
				Check: func(ctx context.Context) error { return down.Ping(ctx) }})
		}})
		rec := h.Do(apitest.Request{Method: http.MethodGet, Path: "/readyz"})
		got := apitest.Decode[struct {
			Status string `json:"status"`
			Checks checks `json:"checks"`
		}](t, rec)
		if rec.Code != http.StatusOK || got.Status != "degraded" || !got.Checks["postgres"].OK ||
			got.Checks["reports-replica"].OK || got.Checks["reports-replica"].Error == "" {
			t.Fatalf("readyz %d %s", rec.Code, rec.Body)
		}
	})
	t.Run("not ready", func(t *testing.T) {
		rec := bad.Do(apitest.Request{Method: http.MethodGet, Path: "/readyz"})
		e := apitest.WantError(t, rec, http.StatusServiceUnavailable, wire.CodeUnavailable)
		failed, _ := e.Error.Details["failed"].([]any)
		cs, _ := e.Error.Details["checks"].(map[string]any)
		pg, _ := cs["postgres"].(map[string]any)
		if len(failed) != 1 || failed[0] != "postgres" || pg["ok"] != false || pg["error"] == "" {
			t.Fatalf("details %v", e.Error.Details)
		}
	})
}

// metricValue finds one sample of the exposition text; -1 when absent.
func metricValue(t *testing.T, body, series string) float64 {
	t.Helper()
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`)
	m := re.FindStringSubmatch(body)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatalf("%s: %v", series, err)
	}
	return v
}

// TestMetrics: /metrics exposes the HTTP, ledger, usage, relay-lag and
// projection-lag series with the values the requests made.
func TestMetrics(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{AdminToken: admToken})
	_, key := admNewClient(t, h, "sandbox", "", gateway.AllScopes...)
	_, readOnly := admNewClient(t, h, "sandbox", "", gateway.ScopeWalletRead)

	dep := h.Call(http.MethodPost, "/api/v1/transactions", key.Key, map[string]any{
		"type": "deposit", "transaction_id": "dep-1", "player_id": "p1", "amount": "10.00", "currency": "EUR"})
	if dep.Code != http.StatusOK {
		t.Fatalf("deposit: %d %s", dep.Code, dep.Body)
	}
	h.Call(http.MethodGet, "/api/v1/wallet/balance", key.Key, nil)
	h.Call(http.MethodGet, "/api/v1/wallet/balance", key.Key, nil)
	h.Call(http.MethodPost, "/api/v1/game/launch", readOnly.Key, map[string]any{})
	var head int64
	if err := h.Pool.QueryRow(t.Context(), `SELECT max(position) FROM events`).Scan(&head); err != nil || head < 1 {
		t.Fatalf("head %d: %v", head, err)
	}
	// The relay's checkpoint as a relay that has published nothing yet
	// leaves it.
	if _, err := h.Pool.Exec(t.Context(), `INSERT INTO relay_checkpoints (name, tx_id, position) VALUES ('kafka', '0', 0)`); err != nil {
		t.Fatal(err)
	}

	body := metricsBody(t, h)
	atLeast := map[string]float64{
		`pitboss_http_requests_total{method="POST",route="/api/v1/transactions",status="200"}`:               1,
		`pitboss_http_requests_total{method="GET",route="/api/v1/wallet/balance",status="200"}`:              2,
		`pitboss_http_request_duration_seconds_count{method="GET",route="/api/v1/wallet/balance"}`:           2,
		`pitboss_http_errors_total{code="FORBIDDEN",method="POST",route="/api/v1/game/launch",status="403"}`: 1,
		`pitboss_http_requests_total{method="POST",route="/admin/v1/clients",status="200"}`:                  2,
		`pitboss_ledger_batch_duration_seconds_count`:                                                        1,
		`pitboss_ledger_batch_operations_count`:                                                              1,
		`pitboss_ledger_batch_events_sum`:                                                                    float64(head),
		`pitboss_usage_pending_counters`:                                                                     1,
		`pitboss_lag_scrape_success`:                                                                         1,
		`pitboss_event_store_head_position`:                                                                  float64(head),
		`pitboss_relay_lag_events{relay="kafka"}`:                                                            float64(head),
		`pitboss_projection_lag_events{projection="history"}`:                                                float64(head),
		`go_goroutines`: 1,
	}
	for series, min := range atLeast {
		if v := metricValue(t, body, series); v < min {
			t.Errorf("%s = %v, want at least %v", series, v, min)
		}
	}
	exactly := map[string]float64{
		`pitboss_http_requests_total{method="GET",route="/api/v1/wallet/balance",status="200"}`: 2,
		`pitboss_event_store_head_position`:                                                     float64(head),
		`pitboss_relay_lag_events{relay="kafka"}`:                                               float64(head),
	}
	for series, want := range exactly {
		if v := metricValue(t, body, series); v != want {
			t.Errorf("%s = %v, want %v", series, v, want)
		}
	}
	if v := metricValue(t, body, `pitboss_relay_lag_seconds{relay="kafka"}`); v < 0 {
		t.Errorf("relay lag seconds missing")
	}
	if t.Failed() {
		t.Logf("metrics:\n%s", grepLines(body, "pitboss_"))
		t.FailNow()
	}

	// The relay catches up: no lag left.
	if _, err := h.Pool.Exec(t.Context(), `UPDATE relay_checkpoints SET position = $1`, head); err != nil {
		t.Fatal(err)
	}
	body = metricsBody(t, h)
	if v := metricValue(t, body, `pitboss_relay_lag_events{relay="kafka"}`); v != 0 {
		t.Fatalf("relay lag events %v after catching up", v)
	}
	if v := metricValue(t, body, `pitboss_relay_lag_seconds{relay="kafka"}`); v != 0 {
		t.Fatalf("relay lag seconds %v after catching up", v)
	}
	if v := metricValue(t, body, `pitboss_relay_last_published_age_seconds{relay="kafka"}`); v < 0 {
		t.Fatal("last published age missing once something was published")
	}
}
