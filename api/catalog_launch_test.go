package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

var ctEUR = domain.MustCurrency("EUR")

// wantLaunched checks a launch answer against the ledger: one
// game.launched event of the session, whose id is the transaction_id.
func wantLaunched(t *testing.T, h *apitest.Harness, c apitest.Client, player, provider, game string, l apitest.Launch) {
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
	for _, e := range h.Events(domain.PlayerWallet(c.ID, player, ctEUR), domain.EventGameLaunched) {
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
	h := apitest.New(t, apitest.Options{Loopback: true})
	h.AddProvider("demo", "Demo", gateway.ProviderKindDemo)
	h.AddGame("demo-slot", "demo", "Demo Slot", "slots", true)
	c := h.NewClient(gateway.ScopeLaunch)

	t.Run("POST", func(t *testing.T) {
		l := apitest.Data[apitest.Launch](t, h.Call(http.MethodPost, "/api/v1/game/launch", c.Key, apitest.LaunchBody("demo", "demo-slot", "p1", "EUR")))
		if l.GameURL != h.URL+"/demo/play?session="+l.SessionID {
			t.Fatalf("game_url %q", l.GameURL)
		}
		wantLaunched(t, h, c, "p1", "demo", "demo-slot", l)
	})
	t.Run("GET with query parameters answers the same JSON", func(t *testing.T) {
		q := url.Values{"provider": {"demo"}, "game_id": {"demo-slot"}, "player_id": {"p2"}, "currency": {"EUR"},
			"session_token": {"casino-sess-1"}, "language": {"de"}}
		l := apitest.Data[apitest.Launch](t, h.Call(http.MethodGet, "/api/v1/game/launch?"+q.Encode(), c.Key, ""))
		if l.GameURL != h.URL+"/demo/play?lang=de&session="+l.SessionID {
			t.Fatalf("game_url %q", l.GameURL)
		}
		wantLaunched(t, h, c, "p2", "demo", "demo-slot", l)
	})
	t.Run("a server without a registry still launches demo providers", func(t *testing.T) {
		h2 := apitest.New(t, apitest.Options{Loopback: true, WithoutCatalog: true})
		h2.AddProvider("demo", "Demo", gateway.ProviderKindDemo)
		h2.AddGame("demo-slot", "demo", "Demo Slot", "slots", true)
		h2.AddProvider("acme", "Acme", gateway.ProviderKindJSON, "http://127.0.0.1:9")
		h2.AddGame("acme-slot", "acme", "Acme Slot", "slots", true)
		c2 := h2.NewClient(gateway.ScopeLaunch)
		l := apitest.Data[apitest.Launch](t, h2.Call(http.MethodPost, "/api/v1/game/launch", c2.Key, apitest.LaunchBody("demo", "demo-slot", "p1", "EUR")))
		if !strings.HasPrefix(l.GameURL, h2.URL+"/demo/play?session=") {
			t.Fatalf("game_url %q", l.GameURL)
		}
		// It knows nothing of the json provider's route: demo kind.
		l = apitest.Data[apitest.Launch](t, h2.Call(http.MethodPost, "/api/v1/game/launch", c2.Key, apitest.LaunchBody("acme", "acme-slot", "p1", "EUR")))
		if !strings.HasPrefix(l.GameURL, h2.URL+"/demo/play?session=") {
			t.Fatalf("game_url %q", l.GameURL)
		}
	})
}

func TestLaunchRefusals(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{Loopback: true})
	h.AddProvider("demo", "Demo", gateway.ProviderKindDemo)
	h.AddGame("demo-slot", "demo", "Demo Slot", "slots", true)
	h.AddGame("demo-off", "demo", "Disabled", "slots", false)
	h.AddProvider("other", "Other", gateway.ProviderKindDemo)
	h.AddGame("other-slot", "other", "Other Slot", "slots", true)
	c := h.NewClient(gateway.ScopeLaunch)
	noScope := h.NewClient(gateway.ScopeWalletRead, gateway.ScopeTransactionsWrite)

	post := []struct {
		name   string
		key    string
		body   string
		status int
		code   string
		field  string
	}{
		{"malformed JSON", c.Key, `{"provider":"demo",`, 400, wire.CodeInvalidJSON, ""},
		{"not an object", c.Key, `[1,2]`, 400, wire.CodeInvalidJSON, ""},
		{"empty body", c.Key, ``, 400, wire.CodeInvalidJSON, ""},
		{"unknown field", c.Key, `{"provider":"demo","game_id":"demo-slot","player_id":"p","currency":"EUR","bonus":1}`, 400, wire.CodeInvalidRequest, "bonus"},
		{"missing player_id", c.Key, `{"provider":"demo","game_id":"demo-slot","currency":"EUR"}`, 400, wire.CodeInvalidRequest, "player_id"},
		{"player_id with a colon", c.Key, apitest.LaunchBody("demo", "demo-slot", "a:b", "EUR"), 400, wire.CodeInvalidRequest, "player_id"},
		{"unknown currency", c.Key, apitest.LaunchBody("demo", "demo-slot", "p", "XXY"), 400, wire.CodeUnknownCurrency, ""},
		{"session_token with a space", c.Key, `{"provider":"demo","game_id":"demo-slot","player_id":"p","currency":"EUR","session_token":"a b"}`, 400, wire.CodeInvalidRequest, "session_token"},
		{"language not a tag", c.Key, `{"provider":"demo","game_id":"demo-slot","player_id":"p","currency":"EUR","language":"en/../x"}`, 400, wire.CodeInvalidRequest, "language"},
		{"unknown provider", c.Key, apitest.LaunchBody("nobody", "demo-slot", "p", "EUR"), 404, wire.CodeNotFound, "provider"},
		{"unknown game", c.Key, apitest.LaunchBody("demo", "nope", "p", "EUR"), 404, wire.CodeNotFound, "game_id"},
		{"disabled game", c.Key, apitest.LaunchBody("demo", "demo-off", "p", "EUR"), 404, wire.CodeNotFound, "game_id"},
		{"game of another provider", c.Key, apitest.LaunchBody("demo", "other-slot", "p", "EUR"), 404, wire.CodeNotFound, "game_id"},
		{"no key", "", apitest.LaunchBody("demo", "demo-slot", "p", "EUR"), 401, wire.CodeUnauthorized, ""},
		{"key without the launch scope", noScope.Key, apitest.LaunchBody("demo", "demo-slot", "p", "EUR"), 403, wire.CodeForbidden, ""},
	}
	for _, tc := range post {
		t.Run("POST "+tc.name, func(t *testing.T) {
			e := apitest.WantError(t, h.Call(http.MethodPost, "/api/v1/game/launch", tc.key, tc.body), tc.status, tc.code)
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
		{"missing game_id", c.Key, "provider=demo&player_id=p&currency=EUR", 400, wire.CodeInvalidRequest, "game_id"},
		{"parameter twice", c.Key, "provider=demo&game_id=demo-slot&player_id=p&player_id=q&currency=EUR", 400, wire.CodeInvalidRequest, "player_id"},
		{"unknown currency", c.Key, "provider=demo&game_id=demo-slot&player_id=p&currency=eurx", 400, wire.CodeUnknownCurrency, ""},
		{"unknown game", c.Key, "provider=demo&game_id=nope&player_id=p&currency=EUR", 404, wire.CodeNotFound, "game_id"},
		{"no key", "", "provider=demo&game_id=demo-slot&player_id=p&currency=EUR", 401, wire.CodeUnauthorized, ""},
		{"key without the launch scope", noScope.Key, "provider=demo&game_id=demo-slot&player_id=p&currency=EUR", 403, wire.CodeForbidden, ""},
	}
	for _, tc := range get {
		t.Run("GET "+tc.name, func(t *testing.T) {
			e := apitest.WantError(t, h.Call(http.MethodGet, "/api/v1/game/launch?"+tc.query, tc.key, ""), tc.status, tc.code)
			if tc.field != "" && e.Error.Details["field"] != tc.field {
				t.Fatalf("details %v, want field %s", e.Error.Details, tc.field)
			}
		})
	}
	// Nothing above was launched.
	var n int
	if err := h.Pool.QueryRow(context.Background(), `SELECT count(*) FROM events WHERE event_type = $1`,
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
	h := apitest.New(t, apitest.Options{Loopback: true})
	down := apitest.NewJSONProvider(t, http.StatusInternalServerError)
	up := apitest.NewJSONProvider(t, http.StatusOK)
	h.AddProvider("acme", "Acme", gateway.ProviderKindJSON, down.URL, up.URL)
	h.AddGame("acme-slot", "acme", "Acme Slot", "slots", true)
	if err := h.Gateway.SetProviderGameCode(context.Background(), "acme-slot", "AS-001"); err != nil {
		t.Fatal(err)
	}
	c := h.NewClient(gateway.ScopeLaunch)
	providerStatus := func() ctProviderView {
		t.Helper()
		list := apitest.Data[[]ctProviderView](t, h.Call(http.MethodGet, "/api/v1/providers", c.Key, ""))
		if len(list) != 1 {
			t.Fatalf("providers %+v", list)
		}
		return list[0]
	}

	for i := range 3 {
		l := apitest.Data[apitest.Launch](t, h.Call(http.MethodPost, "/api/v1/game/launch", c.Key, apitest.LaunchBody("acme", "acme-slot", "p1", "EUR")))
		if l.GameURL != "https://games.example/play?token="+l.SessionID {
			t.Fatalf("launch %d: game_url %q", i, l.GameURL)
		}
		wantLaunched(t, h, c, "p1", "acme", "acme-slot", l)
	}
	// The provider got its own request shape: our session is its token,
	// our game its code.
	call := <-up.Calls
	if call["gameCode"] != "AS-001" || call["playerId"] != "p1" || call["ccy"] != "EUR" || call["operatorId"] != c.ID {
		t.Fatalf("provider call %v", call)
	}
	if n := len(down.Calls); n != 2 { // BreakerFailures: then it is skipped
		t.Fatalf("failing endpoint called %d times, want 2", n)
	}
	if p := providerStatus(); p.Status != gateway.ProviderDegraded || p.Endpoints.Total != 2 || p.Endpoints.Available != 1 {
		t.Fatalf("provider %+v, want degraded", p)
	}

	up.Close() // now every endpoint is down
	launched := len(h.Events(domain.PlayerWallet(c.ID, "p1", ctEUR), domain.EventGameLaunched))
	r := h.Call(http.MethodPost, "/api/v1/game/launch", c.Key, apitest.LaunchBody("acme", "acme-slot", "p1", "EUR"))
	e := apitest.WantError(t, r, http.StatusServiceUnavailable, wire.CodeUnavailable)
	if r.Header().Get("Retry-After") == "" || e.Error.Details["provider"] != "acme" {
		t.Fatalf("503 without Retry-After or provider: %v %s", r.Header(), r.Body)
	}
	// The second failure of the last endpoint opens its breaker too: the
	// answer then says when the first breaker half-opens (30 s cooldown).
	r = h.Call(http.MethodGet, "/api/v1/game/launch?provider=acme&game_id=acme-slot&player_id=p1&currency=EUR", c.Key, "")
	e = apitest.WantError(t, r, http.StatusServiceUnavailable, wire.CodeUnavailable)
	ra, err := strconv.Atoi(r.Header().Get("Retry-After"))
	if err != nil || ra < 10 || ra > 30 {
		t.Fatalf("Retry-After %q, want seconds until a breaker half-opens (<= 30)", r.Header().Get("Retry-After"))
	}
	if e.Error.Details["retry_after_seconds"] != json.Number(strconv.Itoa(ra)) {
		t.Fatalf("details %v disagree with Retry-After %d", e.Error.Details, ra)
	}
	endpoints, _ := e.Error.Details["endpoints"].([]any)
	if len(endpoints) != 2 {
		t.Fatalf("details.endpoints %v", e.Error.Details["endpoints"])
	}
	for _, ep := range endpoints {
		if m, _ := ep.(map[string]any); m["reason"] == "" || strings.Contains(r.Body.String(), "127.0.0.1") {
			t.Fatalf("endpoint detail %v (URLs must not show): %s", ep, r.Body)
		}
	}
	if p := providerStatus(); p.Status != gateway.ProviderUnavailable || p.Endpoints.Available != 0 ||
		p.RetryAfterSeconds == nil || p.RetryAfterSeconds.String() == "0" {
		t.Fatalf("provider %+v, want unavailable with retry_after_seconds", p)
	}
	if n := len(h.Events(domain.PlayerWallet(c.ID, "p1", ctEUR), domain.EventGameLaunched)); n != launched {
		t.Fatalf("failed launches were recorded: %d launch events, want %d", n, launched)
	}
}

func TestLaunchRefusedByTheProviderIs502(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{Loopback: true})
	refuser := apitest.NewJSONProvider(t, http.StatusForbidden)
	backup := apitest.NewJSONProvider(t, http.StatusOK)
	h.AddProvider("acme", "Acme", gateway.ProviderKindJSON, refuser.URL, backup.URL)
	h.AddGame("acme-slot", "acme", "Acme Slot", "slots", true)
	c := h.NewClient(gateway.ScopeLaunch)
	for range 3 {
		e := apitest.WantError(t, h.Call(http.MethodPost, "/api/v1/game/launch", c.Key, apitest.LaunchBody("acme", "acme-slot", "p1", "EUR")),
			http.StatusBadGateway, wire.CodeProviderRejected)
		if e.Error.Details["provider_code"] != "PLAYER_BLOCKED" || e.Error.Details["provider_status"] != json.Number("403") ||
			!strings.Contains(e.Error.Message, "player is blocked") {
			t.Fatalf("error %+v", e.Error)
		}
	}
	if len(backup.Calls) != 0 {
		t.Fatal("a refusal was failed over to the backup endpoint")
	}
}

// A launch is answered by the provider's server within the API's own
// request: a provider that hangs past its timeout is a failure.
func TestLaunchTimeoutFailsOver(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{Loopback: true})
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(release) })
	fast := apitest.NewJSONProvider(t, http.StatusOK)
	r := h.AddProvider("acme", "Acme", gateway.ProviderKindJSON, slow.URL, fast.URL)
	r.Timeout = time.Second
	if err := h.Gateway.SetProviderRoute(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	h.AddGame("acme-slot", "acme", "Acme Slot", "slots", true)
	c := h.NewClient(gateway.ScopeLaunch)
	l := apitest.Data[apitest.Launch](t, h.Call(http.MethodPost, "/api/v1/game/launch", c.Key, apitest.LaunchBody("acme", "acme-slot", "p1", "EUR")))
	if !strings.HasPrefix(l.GameURL, "https://games.example/") {
		t.Fatalf("game_url %q", l.GameURL)
	}
}
