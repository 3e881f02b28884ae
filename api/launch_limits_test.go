package api_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/gateway"
)

// launchFixture is the server on a stopped clock, the demo provider's game
// "slot", and a sandbox launch client (default currency EUR) whose key
// holds launch and scopes: what the launch tests of issue 17 start from.
type launchFixture struct {
	*apitest.Harness
	c  apitest.Client
	t0 time.Time
}

func newLaunchFixture(t *testing.T, o apitest.Options, scopes ...string) *launchFixture {
	t.Helper()
	f := &launchFixture{t0: time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)}
	o.Clock = apitest.StoppedAt(f.t0)
	f.Harness = apitest.New(t, o)
	f.AddProvider("demo", "Demo", gateway.ProviderKindDemo)
	f.AddGame("slot", "demo", "Slot", "slots", true)
	f.c = f.NewLaunchClient("sandbox", append([]string{gateway.ScopeLaunch}, scopes...),
		gateway.LaunchSettings{DefaultCurrency: "EUR"})
	return f
}

// signedQuery is a launch of "slot" for user with balance, signed at t0.
func (f *launchFixture) signedQuery(user, balance string) url.Values {
	ts := strconv.FormatInt(f.t0.Unix(), 10)
	return url.Values{"api_key": {f.c.Key}, "user_id": {user}, "game_uid": {"slot"}, "balance": {balance}, "ts": {ts},
		"sig": {apitest.SignLaunch(f.c.Secret, f.c.Key, user, "slot", balance, ts)}}
}

// TestSignedLaunchCountsAgainstItsKey: GET /v1/launch is a request of its
// API key like any other: it takes from the key's rate-limit window (the
// same window /api/v1 takes from), answers with the limit headers and 429
// once the window is used up, and is metered as usage (issue 17, item 2).
// Before, 131 launches on a 100/60 s key all answered 200.
func TestSignedLaunchCountsAgainstItsKey(t *testing.T) {
	t.Parallel()
	h := newLaunchFixture(t, apitest.Options{RateTiers: "sandbox:3/60s"}, gateway.ScopeWalletRead)
	c, t0 := h.c, h.t0
	launch := func(user string) *httptest.ResponseRecorder {
		return h.Get("/v1/launch?"+h.signedQuery(user, "10.00").Encode(), "")
	}
	for i := 1; i <= 3; i++ {
		rec := launch("u" + strconv.Itoa(i))
		if rec.Code != http.StatusOK {
			t.Fatalf("launch %d: %d %s", i, rec.Code, rec.Body)
		}
		if rec.Header().Get(api.HeaderRateLimit) != "3" || rec.Header().Get(api.HeaderRateRemaining) != strconv.Itoa(3-i) {
			t.Fatalf("launch %d: rate-limit headers %v", i, rec.Header())
		}
	}
	rec := launch("u4")
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" ||
		apitest.Decode[struct {
			Code string `json:"code"`
		}](t, rec).Code != wire.CodeRateLimited {
		t.Fatalf("launch 4: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	// The operator API shares the key's window.
	apitest.WantError(t, h.Get("/api/v1/wallet/balance", c.Key), http.StatusTooManyRequests, wire.CodeRateLimited)

	// Every launch, refused or not, is metered (a launch whose key is not
	// known has no key to count against, so it is not).
	h.Get("/v1/launch?api_key=pb_test_unknown&user_id=u&game_uid=slot&balance=1", "")
	if err := h.Meter.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	b, err := h.Usage.Usage(t.Context(), gateway.UsageQuery{ClientID: c.ID, From: t0.Add(-time.Hour),
		To: t0.Add(time.Hour), Granularity: "hour"})
	if err != nil {
		t.Fatal(err)
	}
	var requests, ok, limited int64
	for _, x := range b {
		requests, ok, limited = requests+x.Requests, ok+x.ByClass[2], limited+x.ByClass[4]
	}
	if requests != 5 || ok != 3 || limited != 2 {
		t.Errorf("usage: %d requests, %d 2xx, %d 4xx; want 5, 3 and 2 (three launches, a refused launch, a refused balance read)",
			requests, ok, limited)
	}
}

// TestUnsignedLaunchBalanceIsCapped: an unsigned launch (the sandbox
// default) sets the player's game wallet to at most
// gateway.UnsignedLaunchCap of the currency (about 10,000 EUR); a larger balance
// needs a signature. Before, balance=1000000.00 was booked as sent.
func TestUnsignedLaunchBalanceIsCapped(t *testing.T) {
	t.Parallel()
	h := newLaunchFixture(t, apitest.Options{})
	c := h.c
	unsigned := func(user, balance, currency string) *httptest.ResponseRecorder {
		q := url.Values{"api_key": {c.Key}, "user_id": {user}, "game_uid": {"slot"}, "balance": {balance},
			"currency_code": {currency}}
		return h.Get("/v1/launch?"+q.Encode(), "")
	}
	tests := []struct {
		user, balance, currency string
		want                    int
	}{
		{"u1", "10000.00", "EUR", http.StatusOK},
		{"u2", "10000.01", "EUR", http.StatusBadRequest},
		{"u3", "1000000.00", "EUR", http.StatusBadRequest},
		{"u4", "10000", "JPY", http.StatusOK},
		{"u5", "10001", "JPY", http.StatusBadRequest},
		// By value, not units (issue 37 item 5): 10,000 BTC was let in.
		{"u7", "0.1", "BTC", http.StatusOK},
		{"u8", "10000", "BTC", http.StatusBadRequest},
	}
	for _, tc := range tests {
		rec := unsigned(tc.user, tc.balance, tc.currency)
		if rec.Code != tc.want {
			t.Errorf("unsigned launch of %s %s: %d %s", tc.balance, tc.currency, rec.Code, rec.Body)
			continue
		}
		if tc.want == http.StatusBadRequest {
			a := apitest.Decode[struct {
				Code    string         `json:"code"`
				Details map[string]any `json:"details"`
			}](t, rec)
			if a.Code != wire.CodeInvalidAmount || a.Details["parameter"] != "balance" {
				t.Errorf("unsigned launch of %s %s: %s", tc.balance, tc.currency, rec.Body)
			}
		}
	}
	// Signed, the same balance is the client's own statement, and is booked.
	if rec := h.Get("/v1/launch?"+h.signedQuery("u6", "1000000.00").Encode(), ""); rec.Code != http.StatusOK {
		t.Errorf("signed launch of 1000000.00: %d %s", rec.Code, rec.Body)
	}
}
