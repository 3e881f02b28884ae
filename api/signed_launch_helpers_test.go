package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/gateway"
)

// Helpers of the signed-launch, return-address and provider-wallet tests.
// Names carry an "sl" prefix so they do not collide with other test files
// of package api_test.

// slTestNow is the fixed "server time" of the tests: a whole second, so
// the ±120 s window is exact in seconds and in milliseconds.
var slTestNow = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

const (
	slPublicURL      = "http://pitboss.test"
	slSandboxHost    = "sandbox.test"
	slProductionHost = "api.test"
	slSessionTTL     = time.Hour
)

// slHarness is the whole API (apitest) with one address per environment,
// a trusted proxy network, and a clock stopped at slTestNow that the API
// and the ledger share, so a test moves both (a session expires, a launch
// gets a new ts). It holds one enabled provider, without a route (so it
// launches as the demo kind), and one game of it.
type slHarness struct {
	*apitest.Harness
	t *testing.T

	provider, providerSecret, game string
}

func newSLHarness(t *testing.T) *slHarness { t.Helper(); return newSLHarnessWith(t, nil) }

// newSLHarnessWith is newSLHarness with its options changed by with.
func newSLHarnessWith(t *testing.T, with func(*apitest.Options)) *slHarness {
	t.Helper()
	clock := apitest.StoppedAt(slTestNow)
	o := apitest.Options{
		PublicURL:        slPublicURL,
		SessionTTL:       slSessionTTL,
		HostEnvironments: map[string]string{slSandboxHost: "sandbox", slProductionHost: "production"},
		TrustedProxies:   []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
		Clock:            clock,
		LedgerClock:      clock,
	}
	if with != nil {
		with(&o)
	}
	h := &slHarness{
		Harness:  apitest.New(t, o),
		t:        t,
		provider: apitest.UID("prov"), providerSecret: "provider-secret-" + apitest.UID("s"), game: apitest.UID("game"),
	}
	if err := h.Gateway.UpsertProvider(context.Background(), gateway.Provider{ID: h.provider, Name: "Test provider",
		Secret: h.providerSecret, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	h.AddGame(h.game, h.provider, "Test slot", "slots", true)
	return h
}

// signedQuery builds a launch query signed with the client's secret at the
// test clock's time (in seconds).
func (h *slHarness) signedQuery(c apitest.Client, user, balance string) url.Values {
	ts := strconv.FormatInt(h.Clock.Now().Unix(), 10)
	return url.Values{"api_key": {c.Key}, "user_id": {user}, "game_uid": {h.game}, "balance": {balance},
		"ts": {ts}, "sig": {apitest.SignLaunch(c.Secret, c.Key, user, h.game, balance, ts)}, "currency_code": {"EUR"}}
}

// launchAs sends GET /v1/launch with q to the client's address.
func (h *slHarness) launchAs(c apitest.Client, q url.Values) *httptest.ResponseRecorder {
	h.t.Helper()
	return h.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/launch?" + q.Encode(), Host: c.Host})
}

// slLaunchAnswer is the launch response as a client reads it.
type slLaunchAnswer struct {
	OK        bool   `json:"ok"`
	GameURL   string `json:"game_url"`
	SessionID string `json:"session_id"`
	Error     string `json:"error"`
	Code      string `json:"code"`
}

// mustLaunch launches for user with balance and returns the session id.
func (h *slHarness) mustLaunch(c apitest.Client, user, balance string, extra url.Values) slLaunchAnswer {
	h.t.Helper()
	q := h.signedQuery(c, user, balance)
	for k, v := range extra {
		q[k] = v
	}
	rec := h.launchAs(c, q)
	if rec.Code != http.StatusOK {
		h.t.Fatalf("launch: status %d, body %s", rec.Code, rec.Body)
	}
	a := apitest.Decode[slLaunchAnswer](h.t, rec)
	if !a.OK || a.SessionID == "" {
		h.t.Fatalf("launch: %+v", a)
	}
	return a
}

// slWalletAnswer is a provider wallet answer.
type slWalletAnswer struct {
	Status        string      `json:"status"`
	Balance       json.Number `json:"balance"`
	Currency      string      `json:"currency"`
	TransactionID string      `json:"transaction_id"`
	ExternalID    string      `json:"external_transaction_id"`
	RoundID       string      `json:"round_id"`
	Replayed      bool        `json:"replayed"`
}
