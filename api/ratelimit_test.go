package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/gateway"
)

func TestParseRateTiers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    string // tiers joined by spaces, or "" when an error is expected
		errText string
	}{
		{in: gateway.DefaultRateTiers, want: "sandbox:100/1m0s standard:1000/1m0s enterprise:10000/1m0s"},
		{in: " Gold:5/1h , tiny:1/1s,", want: "gold:5/1h0m0s tiny:1/1s"},
		{in: "", errText: "no rate tier"},
		{in: "gold", errText: "not name:limit/window"},
		{in: "gold:5", errText: "not name:limit/window"},
		{in: ":5/1s", errText: "not name:limit/window"},
		{in: "gold:0/1s", errText: "positive integer"},
		{in: "gold:x/1s", errText: "positive integer"},
		{in: "gold:5/500ms", errText: "at least 1s"},
		{in: "gold:5/soon", errText: "at least 1s"},
		{in: "gold:5/1s,GOLD:6/1s", errText: "listed twice"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			tiers, err := gateway.ParseRateTiers(tc.in)
			if tc.errText != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errText) {
					t.Fatalf("error %v, want one saying %q", err, tc.errText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, x := range tiers {
				got = append(got, x.String())
			}
			if strings.Join(got, " ") != tc.want {
				t.Fatalf("tiers %v, want %s", got, tc.want)
			}
		})
	}
}

func TestRateLimitsValidate(t *testing.T) {
	t.Parallel()
	tiers, err := gateway.ParseRateTiers("gold:5/1h")
	if err != nil {
		t.Fatal(err)
	}
	if err := (gateway.RateLimits{Tiers: tiers}).Validate(); err != nil {
		t.Fatalf("a single tier is its own default: %v", err)
	}
	if err := (gateway.RateLimits{Tiers: tiers, DefaultTier: "silver"}).Validate(); err == nil {
		t.Fatal("a default tier that is not configured was accepted")
	}
}

// rateStores are the RateStore implementations: one contract for both.
func rateStores(t *testing.T) map[string]func(t *testing.T) gateway.RateStore {
	return map[string]func(t *testing.T) gateway.RateStore{
		"memory": func(*testing.T) gateway.RateStore { return gateway.NewMemoryRateStore() },
		"postgres": func(t *testing.T) gateway.RateStore {
			pool, _ := pgtest.NewDatabase(t)
			return postgres.NewRateWindows(pool)
		},
	}
}

// TestRateStoreContract: given a window's requests, when one more comes,
// then the decision, the remaining count and the reset time.
func TestRateStoreContract(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	tier := gateway.RateTier{Name: "t", Limit: 3, Window: time.Minute}
	for name, newStore := range rateStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			ctx := context.Background()
			take := func(key string, tr gateway.RateTier, at time.Time) gateway.RateDecision {
				t.Helper()
				d, err := s.Take(ctx, key, tr, at)
				if err != nil {
					t.Fatal(err)
				}
				return d
			}
			want := func(d gateway.RateDecision, allowed bool, remaining int, reset time.Time) {
				t.Helper()
				if d.Allowed != allowed || d.Remaining != remaining || !d.ResetAt.Equal(reset) || d.Limit != tier.Limit {
					t.Fatalf("decision %+v, want allowed %v remaining %d reset %s", d, allowed, remaining, reset)
				}
			}
			key := admUID("key")
			// the window starts at the first request and lasts a minute
			want(take(key, tier, t0), true, 2, t0.Add(time.Minute))
			want(take(key, tier, t0.Add(10*time.Second)), true, 1, t0.Add(time.Minute))
			want(take(key, tier, t0.Add(20*time.Second)), true, 0, t0.Add(time.Minute))
			// the fourth is refused, and so are the ones after it
			for i := range 5 {
				want(take(key, tier, t0.Add(time.Duration(30+i)*time.Second)), false, 0, t0.Add(time.Minute))
			}
			// another key has its own window
			want(take(admUID("key"), tier, t0.Add(30*time.Second)), true, 2, t0.Add(90*time.Second))
			// when the window ends a new one starts at the next request
			t1 := t0.Add(time.Minute)
			want(take(key, tier, t1), true, 2, t1.Add(time.Minute))
			// a tier shortened meanwhile ends the running window early
			short := gateway.RateTier{Name: "t", Limit: 3, Window: 10 * time.Second}
			want(take(key, short, t1.Add(time.Second)), true, 1, t1.Add(11*time.Second))
		})
	}
}

// TestRateLimitHTTP: a 100-per-window tier answers 100 requests with the
// headers counting down, the 101st with 429 RATE_LIMITED, Retry-After and
// the headers, and requests again once the window ends; limits are per key.
func TestRateLimitHTTP(t *testing.T) {
	t.Parallel()
	stores := map[string]func(*pgxpool.Pool) gateway.RateStore{
		"memory":   nil,
		"postgres": func(p *pgxpool.Pool) gateway.RateStore { return postgres.NewRateWindows(p) },
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
			e := wantAdmError(t, rec, http.StatusTooManyRequests, api.CodeRateLimited)
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
