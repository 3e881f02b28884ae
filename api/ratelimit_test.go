package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/gateway"
)

// TestRateLimitHTTP: a 100-per-window tier answers 100 requests with the
// headers counting down, the 101st with 429 RATE_LIMITED, Retry-After and
// the headers, and requests again once the window ends; limits are per key.
func TestRateLimitHTTP(t *testing.T) {
	t.Parallel()
	for name, postgresWindows := range map[string]bool{"memory": false, "postgres": true} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := apitest.New(t, apitest.Options{AdminToken: admToken, RateTiers: "sandbox:100/60s,standard:1000/60s",
				PostgresRateStore: postgresWindows})
			t0 := time.Now().UTC().Truncate(time.Second).Add(500 * time.Millisecond)
			h.Clock.Set(t0)
			clientID, key := admNewClient(t, h, "sandbox", "sandbox", gateway.ScopeWalletRead)
			reset := t0.Add(time.Minute).Unix() + 1 // rounded up to a whole second

			for i := 1; i <= 100; i++ {
				rec := h.Call(http.MethodGet, "/api/v1/wallet/balance", key.Key, nil)
				if rec.Code != http.StatusOK {
					t.Fatalf("request %d: status %d: %s", i, rec.Code, rec.Body)
				}
				if got := admIntHeader(t, rec, api.HeaderRateRemaining); got != int64(100-i) {
					t.Fatalf("request %d: remaining %d, want %d", i, got, 100-i)
				}
				if got := admIntHeader(t, rec, api.HeaderRateReset); got != reset {
					t.Fatalf("request %d: reset %d, want %d", i, got, reset)
				}
				if got := admIntHeader(t, rec, api.HeaderRateLimit); got != 100 {
					t.Fatalf("limit %d", got)
				}
			}
			h.Clock.Advance(20 * time.Second)
			rec := h.Call(http.MethodGet, "/api/v1/wallet/balance", key.Key, nil)
			e := apitest.WantError(t, rec, http.StatusTooManyRequests, wire.CodeRateLimited)
			if admIntHeader(t, rec, api.HeaderRateRemaining) != 0 || admIntHeader(t, rec, api.HeaderRateReset) != reset {
				t.Fatalf("429 headers %v", rec.Header())
			}
			if ra := rec.Header().Get("Retry-After"); ra != "40" {
				t.Fatalf("Retry-After %q, want 40", ra)
			}
			if e.Error.Details["retry_after_seconds"] != json.Number("40") || e.Error.Details["limit"] != json.Number("100") ||
				e.Error.Details["window_seconds"] != json.Number("60") || e.Error.Details["tier"] != "sandbox" {
				t.Fatalf("429 details %v", e.Error.Details)
			}

			// another key of the same client has its own window
			other := admIssueKey(t, h, clientID, gateway.ScopeWalletRead)
			if rec := h.Call(http.MethodGet, "/api/v1/wallet/balance", other.Key, nil); rec.Code != http.StatusOK ||
				admIntHeader(t, rec, api.HeaderRateRemaining) != 99 {
				t.Fatalf("second key: %d %v", rec.Code, rec.Header())
			}
			// the window ends: requests are answered again
			h.Clock.Advance(41 * time.Second)
			rec = h.Call(http.MethodGet, "/api/v1/wallet/balance", key.Key, nil)
			if rec.Code != http.StatusOK || admIntHeader(t, rec, api.HeaderRateRemaining) != 99 {
				t.Fatalf("after the window: %d %v %s", rec.Code, rec.Header(), rec.Body)
			}

			// a plan change takes effect at the next request
			apitest.Data[admClient](t, h.Admin(http.MethodPatch, "/admin/v1/clients/"+clientID, map[string]any{"plan": "standard"}))
			rec = h.Call(http.MethodGet, "/api/v1/wallet/balance", key.Key, nil)
			if admIntHeader(t, rec, api.HeaderRateLimit) != 1000 || admIntHeader(t, rec, api.HeaderRateRemaining) != 998 {
				t.Fatalf("after the plan change: %v", rec.Header())
			}
			// the refusals are counted in the metrics
			body := metricsBody(t, h)
			if !strings.Contains(body, `pitboss_rate_limited_total{tier="sandbox"} 1`) {
				t.Fatalf("rate limited series missing:\n%s", grepLines(body, "pitboss_rate"))
			}
		})
	}
}

// metricsBody is the exposition of GET /metrics.
func metricsBody(t *testing.T, h *apitest.Harness) string {
	t.Helper()
	rec := h.Get("/metrics", "")
	if rec.Code != http.StatusOK {
		t.Fatalf("metrics: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// admIntHeader reads an integer header.
func admIntHeader(t *testing.T, rec *httptest.ResponseRecorder, name string) int64 {
	t.Helper()
	v := rec.Header().Get(name)
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("header %s = %q, want an integer (status %d: %s)", name, v, rec.Code, rec.Body)
	}
	return n
}

func grepLines(text, substr string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
