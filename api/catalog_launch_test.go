package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

var ctEUR = domain.MustCurrency("EUR")

func launchBody(provider, game, player, currency string) string {
	return `{"provider":"` + provider + `","game_id":"` + game + `","player_id":"` + player + `","currency":"` + currency + `"}`
}

// wantLaunched checks a launch answer against the ledger: one
// game.launched event of the session, whose id is the transaction_id.
func wantLaunched(t *testing.T, h *ctHarness, c ctClient, player, provider, game string, l ctLaunch) {
	t.Helper()
	if l.SessionID == "" || l.TransactionID == "" {
		t.Fatalf("launch %+v", l)
	}
	exp, err := time.Parse(time.RFC3339, l.ExpiresAt)
	if err != nil || !strings.HasSuffix(l.ExpiresAt, "Z") {
		t.Fatalf("expires_at %q is not an ISO 8601 UTC time: %v", l.ExpiresAt, err)
	}
	if d := time.Until(exp); d < 50*time.Minute || d > time.Hour+time.Minute {
		t.Fatalf("expires_at %s is not about the session TTL (1h) ahead", l.ExpiresAt)
	}
	var found bool
	for _, e := range h.events(domain.PlayerWallet(c.id, player, ctEUR), domain.EventGameLaunched) {
		if e.Data.SessionID == l.SessionID {
			found = true
			if e.ID != l.TransactionID || e.Data.Provider != provider || e.Data.GameID != game {
				t.Fatalf("launch event %+v for answer %+v", e, l)
			}
		}
	}
	if !found {
		t.Fatalf("no launch event for session %s", l.SessionID)
	}
}

func TestLaunchDemoProvider(t *testing.T) {
	t.Parallel()
	h := newCTHarness(t)
	h.addProvider("demo", "Demo", gateway.ProviderKindDemo)
	h.addGame("demo-slot", "demo", "Demo Slot", "slots", true)
	c := h.newClient(gateway.ScopeLaunch)

	t.Run("POST", func(t *testing.T) {
		l := ctOK[ctLaunch](t, h.do(http.MethodPost, "/api/v1/game/launch", c.key, launchBody("demo", "demo-slot", "p1", "EUR")))
		if l.GameURL != h.base+"/demo/play?session="+l.SessionID {
			t.Fatalf("game_url %q", l.GameURL)
		}
		wantLaunched(t, h, c, "p1", "demo", "demo-slot", l)
	})
	t.Run("GET with query parameters answers the same JSON", func(t *testing.T) {
		q := url.Values{"provider": {"demo"}, "game_id": {"demo-slot"}, "player_id": {"p2"}, "currency": {"EUR"},
			"session_token": {"casino-sess-1"}, "language": {"de"}}
		l := ctOK[ctLaunch](t, h.do(http.MethodGet, "/api/v1/game/launch?"+q.Encode(), c.key, ""))
		if l.GameURL != h.base+"/demo/play?lang=de&session="+l.SessionID {
			t.Fatalf("game_url %q", l.GameURL)
		}
		wantLaunched(t, h, c, "p2", "demo", "demo-slot", l)
	})
	t.Run("a server without a registry still launches demo providers", func(t *testing.T) {
		h2 := newCTHarness(t, ctOptions{noCatalog: true})
		h2.addProvider("demo", "Demo", gateway.ProviderKindDemo)
		h2.addGame("demo-slot", "demo", "Demo Slot", "slots", true)
		h2.addProvider("acme", "Acme", gateway.ProviderKindJSON, "http://127.0.0.1:9")
		h2.addGame("acme-slot", "acme", "Acme Slot", "slots", true)
		c2 := h2.newClient(gateway.ScopeLaunch)
		l := ctOK[ctLaunch](t, h2.do(http.MethodPost, "/api/v1/game/launch", c2.key, launchBody("demo", "demo-slot", "p1", "EUR")))
		if !strings.HasPrefix(l.GameURL, h2.base+"/demo/play?session=") {
			t.Fatalf("game_url %q", l.GameURL)
		}
		// It knows nothing of the json provider's route: demo kind.
		l = ctOK[ctLaunch](t, h2.do(http.MethodPost, "/api/v1/game/launch", c2.key, launchBody("acme", "acme-slot", "p1", "EUR")))
		if !strings.HasPrefix(l.GameURL, h2.base+"/demo/play?session=") {
			t.Fatalf("game_url %q", l.GameURL)
		}
	})
}

func TestLaunchRefusals(t *testing.T) {
	t.Parallel()
	h := newCTHarness(t)
	h.addProvider("demo", "Demo", gateway.ProviderKindDemo)
	h.addGame("demo-slot", "demo", "Demo Slot", "slots", true)
	h.addGame("demo-off", "demo", "Disabled", "slots", false)
	h.addProvider("other", "Other", gateway.ProviderKindDemo)
	h.addGame("other-slot", "other", "Other Slot", "slots", true)
	c := h.newClient(gateway.ScopeLaunch)
	noScope := h.newClient(gateway.ScopeWalletRead, gateway.ScopeTransactionsWrite)

	post := []struct {
		name   string
		key    string
		body   string
		status int
		code   string
		field  string
	}{
		{"malformed JSON", c.key, `{"provider":"demo",`, 400, wire.CodeInvalidJSON, ""},
		{"not an object", c.key, `[1,2]`, 400, wire.CodeInvalidJSON, ""},
		{"empty body", c.key, ``, 400, wire.CodeInvalidJSON, ""},
		{"unknown field", c.key, `{"provider":"demo","game_id":"demo-slot","player_id":"p","currency":"EUR","bonus":1}`, 400, wire.CodeInvalidRequest, "bonus"},
		{"missing player_id", c.key, `{"provider":"demo","game_id":"demo-slot","currency":"EUR"}`, 400, wire.CodeInvalidRequest, "player_id"},
		{"player_id with a colon", c.key, launchBody("demo", "demo-slot", "a:b", "EUR"), 400, wire.CodeInvalidRequest, "player_id"},
		{"unknown currency", c.key, launchBody("demo", "demo-slot", "p", "XXY"), 400, wire.CodeUnknownCurrency, ""},
		{"session_token with a space", c.key, `{"provider":"demo","game_id":"demo-slot","player_id":"p","currency":"EUR","session_token":"a b"}`, 400, wire.CodeInvalidRequest, "session_token"},
		{"language not a tag", c.key, `{"provider":"demo","game_id":"demo-slot","player_id":"p","currency":"EUR","language":"en/../x"}`, 400, wire.CodeInvalidRequest, "language"},
		{"unknown provider", c.key, launchBody("nobody", "demo-slot", "p", "EUR"), 404, wire.CodeNotFound, "provider"},
		{"unknown game", c.key, launchBody("demo", "nope", "p", "EUR"), 404, wire.CodeNotFound, "game_id"},
		{"disabled game", c.key, launchBody("demo", "demo-off", "p", "EUR"), 404, wire.CodeNotFound, "game_id"},
		{"game of another provider", c.key, launchBody("demo", "other-slot", "p", "EUR"), 404, wire.CodeNotFound, "game_id"},
		{"no key", "", launchBody("demo", "demo-slot", "p", "EUR"), 401, wire.CodeUnauthorized, ""},
		{"key without the launch scope", noScope.key, launchBody("demo", "demo-slot", "p", "EUR"), 403, wire.CodeForbidden, ""},
	}
	for _, tc := range post {
		t.Run("POST "+tc.name, func(t *testing.T) {
			e := ctWantError(t, h.do(http.MethodPost, "/api/v1/game/launch", tc.key, tc.body), tc.status, tc.code)
			if tc.field != "" && e.Error.Details["field"] != tc.field {
				t.Fatalf("details %v, want field %s", e.Error.Details, tc.field)
			}
		})
	}
	get := []struct {
		name   string
		key    string
		query  string
		status int
		code   string
		field  string
	}{
		{"missing game_id", c.key, "provider=demo&player_id=p&currency=EUR", 400, wire.CodeInvalidRequest, "game_id"},
		{"parameter twice", c.key, "provider=demo&game_id=demo-slot&player_id=p&player_id=q&currency=EUR", 400, wire.CodeInvalidRequest, "player_id"},
		{"unknown currency", c.key, "provider=demo&game_id=demo-slot&player_id=p&currency=eurx", 400, wire.CodeUnknownCurrency, ""},
		{"unknown game", c.key, "provider=demo&game_id=nope&player_id=p&currency=EUR", 404, wire.CodeNotFound, "game_id"},
		{"no key", "", "provider=demo&game_id=demo-slot&player_id=p&currency=EUR", 401, wire.CodeUnauthorized, ""},
		{"key without the launch scope", noScope.key, "provider=demo&game_id=demo-slot&player_id=p&currency=EUR", 403, wire.CodeForbidden, ""},
	}
	for _, tc := range get {
		t.Run("GET "+tc.name, func(t *testing.T) {
			e := ctWantError(t, h.do(http.MethodGet, "/api/v1/game/launch?"+tc.query, tc.key, ""), tc.status, tc.code)
			if tc.field != "" && e.Error.Details["field"] != tc.field {
				t.Fatalf("details %v, want field %s", e.Error.Details, tc.field)
			}
		})
	}
	// Nothing above was launched.
	var n int
	if err := h.pool.QueryRow(context.Background(), `SELECT count(*) FROM events WHERE event_type = $1`,
		string(domain.EventGameLaunched)).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d launch events (%v), want 0", n, err)
	}
}

// TestLaunchFailsOverBetweenProviderEndpoints drives a json provider with
// real endpoints through the API: a failing endpoint is skipped once its
// breaker opens, and when every endpoint is down the launch is 503 with
// Retry-After and no launch is recorded.
func TestLaunchFailsOverBetweenProviderEndpoints(t *testing.T) {
	t.Parallel()
	h := newCTHarness(t)
	down := newCTJSONProvider(t, http.StatusInternalServerError)
	up := newCTJSONProvider(t, http.StatusOK)
	h.addProvider("acme", "Acme", gateway.ProviderKindJSON, down.URL, up.URL)
	h.addGame("acme-slot", "acme", "Acme Slot", "slots", true)
	if err := h.gw.SetProviderGameCode(context.Background(), "acme-slot", "AS-001"); err != nil {
		t.Fatal(err)
	}
	c := h.newClient(gateway.ScopeLaunch)
	providerStatus := func() ctProviderView {
		t.Helper()
		list := ctOK[[]ctProviderView](t, h.do(http.MethodGet, "/api/v1/providers", c.key, ""))
		if len(list) != 1 {
			t.Fatalf("providers %+v", list)
		}
		return list[0]
	}

	for i := range 3 {
		l := ctOK[ctLaunch](t, h.do(http.MethodPost, "/api/v1/game/launch", c.key, launchBody("acme", "acme-slot", "p1", "EUR")))
		if l.GameURL != "https://games.example/play?token="+l.SessionID {
			t.Fatalf("launch %d: game_url %q", i, l.GameURL)
		}
		wantLaunched(t, h, c, "p1", "acme", "acme-slot", l)
	}
	// The provider got its own request shape: our session is its token,
	// our game its code.
	call := <-up.calls
	if call["gameCode"] != "AS-001" || call["playerId"] != "p1" || call["ccy"] != "EUR" || call["operatorId"] != c.id {
		t.Fatalf("provider call %v", call)
	}
	if n := len(down.calls); n != 2 { // BreakerFailures: then it is skipped
		t.Fatalf("failing endpoint called %d times, want 2", n)
	}
	if p := providerStatus(); p.Status != gateway.ProviderDegraded || p.Endpoints.Total != 2 || p.Endpoints.Available != 1 {
		t.Fatalf("provider %+v, want degraded", p)
	}

	up.Close() // now every endpoint is down
	launched := len(h.events(domain.PlayerWallet(c.id, "p1", ctEUR), domain.EventGameLaunched))
	r := h.do(http.MethodPost, "/api/v1/game/launch", c.key, launchBody("acme", "acme-slot", "p1", "EUR"))
	e := ctWantError(t, r, http.StatusServiceUnavailable, wire.CodeUnavailable)
	if r.header.Get("Retry-After") == "" || e.Error.Details["provider"] != "acme" {
		t.Fatalf("503 without Retry-After or provider: %v %s", r.header, r.body)
	}
	// The second failure of the last endpoint opens its breaker too: the
	// answer then says when the first breaker half-opens (30 s cooldown).
	r = h.do(http.MethodGet, "/api/v1/game/launch?provider=acme&game_id=acme-slot&player_id=p1&currency=EUR", c.key, "")
	e = ctWantError(t, r, http.StatusServiceUnavailable, wire.CodeUnavailable)
	ra, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil || ra < 10 || ra > 30 {
		t.Fatalf("Retry-After %q, want seconds until a breaker half-opens (<= 30)", r.header.Get("Retry-After"))
	}
	if e.Error.Details["retry_after_seconds"] != float64(ra) {
		t.Fatalf("details %v disagree with Retry-After %d", e.Error.Details, ra)
	}
	endpoints, _ := e.Error.Details["endpoints"].([]any)
	if len(endpoints) != 2 {
		t.Fatalf("details.endpoints %v", e.Error.Details["endpoints"])
	}
	for _, ep := range endpoints {
		if m, _ := ep.(map[string]any); m["reason"] == "" || strings.Contains(r.String(), "127.0.0.1") {
			t.Fatalf("endpoint detail %v (URLs must not show): %s", ep, r.body)
		}
	}
	if p := providerStatus(); p.Status != gateway.ProviderUnavailable || p.Endpoints.Available != 0 ||
		p.RetryAfterSeconds == nil || p.RetryAfterSeconds.String() == "0" {
		t.Fatalf("provider %+v, want unavailable with retry_after_seconds", p)
	}
	if n := len(h.events(domain.PlayerWallet(c.id, "p1", ctEUR), domain.EventGameLaunched)); n != launched {
		t.Fatalf("failed launches were recorded: %d launch events, want %d", n, launched)
	}
}

func TestLaunchRefusedByTheProviderIs502(t *testing.T) {
	t.Parallel()
	h := newCTHarness(t)
	refuser := newCTJSONProvider(t, http.StatusForbidden)
	backup := newCTJSONProvider(t, http.StatusOK)
	h.addProvider("acme", "Acme", gateway.ProviderKindJSON, refuser.URL, backup.URL)
	h.addGame("acme-slot", "acme", "Acme Slot", "slots", true)
	c := h.newClient(gateway.ScopeLaunch)
	for range 3 {
		e := ctWantError(t, h.do(http.MethodPost, "/api/v1/game/launch", c.key, launchBody("acme", "acme-slot", "p1", "EUR")),
			http.StatusBadGateway, wire.CodeProviderRejected)
		if e.Error.Details["provider_code"] != "PLAYER_BLOCKED" || e.Error.Details["provider_status"] != float64(403) ||
			!strings.Contains(e.Error.Message, "player is blocked") {
			t.Fatalf("error %+v", e.Error)
		}
	}
	if len(backup.calls) != 0 {
		t.Fatal("a refusal was failed over to the backup endpoint")
	}
}

// A launch is answered by the provider's server within the API's own
// request: a provider that hangs past its timeout is a failure.
func TestLaunchTimeoutFailsOver(t *testing.T) {
	t.Parallel()
	h := newCTHarness(t)
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(release) })
	fast := newCTJSONProvider(t, http.StatusOK)
	r := h.addProvider("acme", "Acme", gateway.ProviderKindJSON, slow.URL, fast.URL)
	r.Timeout = time.Second
	if err := h.gw.SetProviderRoute(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	h.addGame("acme-slot", "acme", "Acme Slot", "slots", true)
	c := h.newClient(gateway.ScopeLaunch)
	l := ctOK[ctLaunch](t, h.do(http.MethodPost, "/api/v1/game/launch", c.key, launchBody("acme", "acme-slot", "p1", "EUR")))
	if !strings.HasPrefix(l.GameURL, "https://games.example/") {
		t.Fatalf("game_url %q", l.GameURL)
	}
}
