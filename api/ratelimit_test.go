package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/gateway"
)

// TestRateLimitHTTP: a 100-per-window tier answers 100 requests with the
// headers counting down, the 101st with 429 RATE_LIMITED, Retry-After and
// the headers, and requests again once the window ends; limits are per key.
func TestRateLimitHTTP(t *testing.T) {
	t.Parallel()
	stores := map[string]func(*pgxpool.Pool) gateway.RateStore{
		"memory":   nil,
		"postgres": func(p *pgxpool.Pool) gateway.RateStore { return gatewaystore.NewRateWindows(p) },
	}
	for name, store := range stores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newAdmHarness(t, admOptions{adminToken: admToken, tiers: "sandbox:100/60s,standard:1000/60s", rateStore: store})
			t0 := time.Now().UTC().Truncate(time.Second).Add(500 * time.Millisecond)
			h.clock.Freeze(t0)
			clientID, key := h.newClient("sandbox", "sandbox", gateway.ScopeWalletRead)
			reset := t0.Add(time.Minute).Unix() + 1 // rounded up to a whole second

			for i := 1; i <= 100; i++ {
				rec := h.call(http.MethodGet, "/api/v1/wallet/balance", key.Key, nil)
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
			h.clock.Advance(20 * time.Second)
			rec := h.call(http.MethodGet, "/api/v1/wallet/balance", key.Key, nil)
			e := wantAdmError(t, rec, http.StatusTooManyRequests, wire.CodeRateLimited)
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
			other := h.issueKey(clientID, gateway.ScopeWalletRead)
			if rec := h.call(http.MethodGet, "/api/v1/wallet/balance", other.Key, nil); rec.Code != http.StatusOK ||
				admIntHeader(t, rec, api.HeaderRateRemaining) != 99 {
				t.Fatalf("second key: %d %v", rec.Code, rec.Header())
			}
			// the window ends: requests are answered again
			h.clock.Advance(41 * time.Second)
			rec = h.call(http.MethodGet, "/api/v1/wallet/balance", key.Key, nil)
			if rec.Code != http.StatusOK || admIntHeader(t, rec, api.HeaderRateRemaining) != 99 {
				t.Fatalf("after the window: %d %v %s", rec.Code, rec.Header(), rec.Body)
			}

			// a plan change takes effect at the next request
			admData[admClient](t, h.admin(http.MethodPatch, "/admin/v1/clients/"+clientID, map[string]any{"plan": "standard"}))
			rec = h.call(http.MethodGet, "/api/v1/wallet/balance", key.Key, nil)
			if admIntHeader(t, rec, api.HeaderRateLimit) != 1000 || admIntHeader(t, rec, api.HeaderRateRemaining) != 998 {
				t.Fatalf("after the plan change: %v", rec.Header())
			}
			// the refusals are counted in the metrics
			body := h.metricsBody()
			if !strings.Contains(body, `pitboss_rate_limited_total{tier="sandbox"} 1`) {
				t.Fatalf("rate limited series missing:\n%s", grepLines(body, "pitboss_rate"))
			}
		})
	}
}

func (h *admHarness) metricsBody() string {
	h.t.Helper()
	rec := h.do(admReq{method: http.MethodGet, path: "/metrics"})
	if rec.Code != http.StatusOK {
		h.t.Fatalf("metrics: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
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
