package providers_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/providers"
	"github.com/pitboss/pitboss/gateway"
)

const (
	testSecret    = "provider-secret-1"
	testPublicURL = "http://pitboss.test"
)

func newRegistry(t *testing.T) *providers.Registry {
	t.Helper()
	return newRegistryOn(t, nil)
}

// newRegistryOn is a registry whose breakers read now (nil: time.Now).
func newRegistryOn(t *testing.T, now func() time.Time) *providers.Registry {
	t.Helper()
	r, err := providers.NewRegistryWithConfig(providers.Config{PublicURL: testPublicURL, Now: now,
		Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// stoppedClock is a clock that moves only when the test advances it, so
// a breaker's cooldown passes when the test says, however slow the machine.
type stoppedClock struct {
	mu sync.Mutex
	at time.Time
}

func newStoppedClock() *stoppedClock {
	return &stoppedClock{at: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *stoppedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at
}

func (c *stoppedClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = c.at.Add(d)
}

// route is a provider route with the given kind and endpoints; the
// timeout is generous for a loaded machine, the breaker opens after two
// failures and half-opens after cooldown.
func route(id, kind string, cooldown time.Duration, endpoints ...string) gateway.ProviderRoute {
	return gateway.ProviderRoute{ProviderID: id, Kind: kind, Endpoints: endpoints, Balancing: gateway.BalancingPriority,
		Timeout: 2 * time.Second, BreakerFailures: 2, BreakerCooldown: cooldown, Secret: testSecret}
}

func launchReq() gateway.LaunchRequest {
	return gateway.LaunchRequest{SessionID: "gs_abc", ClientID: "casino-1", PlayerID: "player-7", GameID: "our-slot",
		GameCode: "their-slot-42", Currency: "EUR", Language: "pt-BR", ReturnURL: testPublicURL + "/v1/return?session=gs_abc",
		ClientSessionToken: "client-token-9", ExpiresAt: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
}

func hmacHex(secret string, msg []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(msg)
	return hex.EncodeToString(m.Sum(nil))
}

// provider is a real HTTP provider endpoint on loopback. handle answers
// the launch; hits counts calls.
type provider struct {
	*httptest.Server
	hits atomic.Int64
}

func newProvider(t *testing.T, handle http.HandlerFunc) *provider {
	t.Helper()
	p := &provider{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.hits.Add(1)
		handle(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

// jsonProvider serves the json kind's launch and answers launchURL.
func jsonProvider(t *testing.T, launchURL string) *provider {
	return newProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"launchUrl":%q}`, launchURL)
	})
}

func failing(status int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", status) }
}

func unavailable(t *testing.T, err error) *gateway.ProviderUnavailableError {
	t.Helper()
	var pu *gateway.ProviderUnavailableError
	if !errors.As(err, &pu) {
		t.Fatalf("error %v (%T), want *gateway.ProviderUnavailableError", err, err)
	}
	return pu
}

func TestJSONKindTransformsRequestAndAnswer(t *testing.T) {
	type seen struct {
		method, path, ctype, sig string
		body                     []byte
	}
	got := make(chan seen, 1)
	p := newProvider(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get("X-Signature"), b}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"launchUrl":"https://games.example/play?t=xyz"}`)
	})
	reg := newRegistry(t)
	u, err := reg.Launch(context.Background(), route("acme", gateway.ProviderKindJSON, time.Minute, p.URL+"/api/"), launchReq())
	if err != nil {
		t.Fatal(err)
	}
	if u != "https://games.example/play?t=xyz" {
		t.Fatalf("game url %q", u)
	}
	s := <-got
	if s.method != http.MethodPost || s.path != "/api/session" || s.ctype != "application/json" {
		t.Fatalf("request %s %s %s", s.method, s.path, s.ctype)
	}
	if s.sig != hmacHex(testSecret, s.body) {
		t.Fatalf("X-Signature %q does not sign the body %s", s.sig, s.body)
	}
	var body map[string]any
	if err := json.Unmarshal(s.body, &body); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"token": "gs_abc", "operatorId": "casino-1", "playerId": "player-7", "gameCode": "their-slot-42",
		"ccy": "EUR", "lang": "pt-BR", "lobbyUrl": testPublicURL + "/v1/return?session=gs_abc",
		"operatorToken": "client-token-9", "expiresAt": "2026-05-01T12:00:00Z"}
	if len(body) != len(want) {
		t.Fatalf("body %v, want %v", body, want)
	}
	for k, v := range want {
		if body[k] != v {
			t.Fatalf("body[%s] = %v, want %v (body %s)", k, body[k], v, s.body)
		}
	}
}

// formHash is the form-xml signature written out from the protocol's
// description: HMAC-SHA256 of the fields but hash, sorted by name, joined
// as name=value with &.
func formHash(secret string, form url.Values) string {
	var names []string
	for k := range form {
		if k != "hash" {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	for i, k := range names {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(k + "=" + form.Get(k))
	}
	return hmacHex(secret, []byte(b.String()))
}

func TestFormXMLKindTransformsRequestAndAnswer(t *testing.T) {
	forms := make(chan url.Values, 1)
	p := newProvider(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/launch" || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
			http.Error(w, "wrong request", http.StatusTeapot)
			return
		}
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusTeapot)
			return
		}
		forms <- r.PostForm
		w.Header().Set("Content-Type", "text/xml")
		if r.PostForm.Get("hash") != formHash(testSecret, r.PostForm) {
			_, _ = io.WriteString(w, `<launchResponse><result>ERROR</result><errorCode>BAD_HASH</errorCode></launchResponse>`)
			return
		}
		_, _ = io.WriteString(w, `<?xml version="1.0"?><launchResponse><result>OK</result>`+
			`<gameUrl>https://xml.example/g?s=`+r.PostForm.Get("session")+`&amp;l=`+r.PostForm.Get("language")+`</gameUrl></launchResponse>`)
	})
	reg := newRegistry(t)
	u, err := reg.Launch(context.Background(), route("xmlco", gateway.ProviderKindFormXML, time.Minute, p.URL), launchReq())
	if err != nil {
		t.Fatal(err)
	}
	if u != "https://xml.example/g?s=gs_abc&l=pt-BR" {
		t.Fatalf("game url %q", u)
	}
	f := <-forms
	want := map[string]string{"session": "gs_abc", "operator": "casino-1", "user": "player-7", "game": "their-slot-42",
		"currency": "EUR", "language": "pt-BR", "exit_url": testPublicURL + "/v1/return?session=gs_abc",
		"external_token": "client-token-9", "expires": fmt.Sprint(launchReq().ExpiresAt.Unix())}
	for k, v := range want {
		if f.Get(k) != v {
			t.Fatalf("form %s = %q, want %q (form %v)", k, f.Get(k), v, f)
		}
	}
	if len(f) != len(want)+1 {
		t.Fatalf("form has %d fields, want %d: %v", len(f), len(want)+1, f)
	}
}

func TestRefusalsStopFailoverAndKeepTheBreakerClosed(t *testing.T) {
	tests := []struct {
		name     string
		kind     string
		handle   http.HandlerFunc
		status   int
		code     string
		contains string
	}{
		{name: "json 404 with a code", kind: gateway.ProviderKindJSON, status: http.StatusNotFound, code: "GAME_NOT_FOUND",
			handle: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusNotFound)
				_, _ = io.WriteString(w, `{"errorCode":"GAME_NOT_FOUND","message":"no such game"}`)
			}, contains: "no such game"},
		{name: "form-xml ERROR with status 200", kind: gateway.ProviderKindFormXML, status: http.StatusOK, code: "CURRENCY",
			handle: func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, `<launchResponse><result>ERROR</result><errorCode>CURRENCY</errorCode>`+
					`<errorMessage>EUR not offered</errorMessage></launchResponse>`)
			}, contains: "EUR not offered"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			first := newProvider(t, tc.handle)
			second := jsonProvider(t, "https://never.example/")
			reg := newRegistry(t)
			rt := route("refuser", tc.kind, time.Minute, first.URL, second.URL)
			for range 4 { // more than BreakerFailures
				_, err := reg.Launch(context.Background(), rt, launchReq())
				var rej *gateway.ProviderRejectedError
				if !errors.As(err, &rej) {
					t.Fatalf("error %v, want a refusal", err)
				}
				if rej.Status != tc.status || rej.Code != tc.code || !strings.Contains(rej.Message, tc.contains) {
					t.Fatalf("refusal %+v", rej)
				}
			}
			if second.hits.Load() != 0 {
				t.Fatalf("a refusal failed over: second endpoint got %d calls", second.hits.Load())
			}
			if h := reg.Health(rt); h.Status != gateway.ProviderAvailable || h.Available != 2 {
				t.Fatalf("health %+v after refusals, want available", h)
			}
		})
	}
}

func TestFailoverOpensTheBreakerOfTheFailingEndpoint(t *testing.T) {
	tests := []struct {
		name   string
		first  func(t *testing.T) string
		reason string
	}{
		{name: "500", reason: "status_500", first: func(t *testing.T) string {
			return newProvider(t, failing(http.StatusInternalServerError)).URL
		}},
		{name: "connection refused", reason: "connection", first: func(t *testing.T) string {
			s := httptest.NewServer(http.NotFoundHandler())
			s.Close()
			return s.URL
		}},
		{name: "launchUrl that is not http(s)", reason: "bad_response", first: func(t *testing.T) string {
			return jsonProvider(t, "javascript:alert(1)").URL
		}},
		{name: "timeout", reason: "timeout", first: func(t *testing.T) string {
			return newProvider(t, func(w http.ResponseWriter, r *http.Request) {
				// Reading the body lets the server notice the caller
				// hanging up.
				_, _ = io.Copy(io.Discard, r.Body)
				select { // slower than the route's timeout; ends with the call
				case <-r.Context().Done():
				case <-time.After(10 * time.Second):
				}
			}).URL
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			first := tc.first(t)
			second := jsonProvider(t, "https://second.example/play")
			reg := newRegistry(t)
			rt := route("flaky-"+tc.reason, gateway.ProviderKindJSON, time.Hour, first, second.URL)
			if tc.reason == "timeout" {
				rt.Timeout = time.Second
			}
			for i := range 4 {
				u, err := reg.Launch(context.Background(), rt, launchReq())
				if err != nil || u != "https://second.example/play" {
					t.Fatalf("launch %d: %q, %v", i, u, err)
				}
				// Two failures (BreakerFailures) open the first
				// endpoint's breaker; then it is skipped.
				wantStatus := gateway.ProviderDegraded
				if i == 0 {
					wantStatus = gateway.ProviderAvailable
				}
				if h := reg.Health(rt); h.Status != wantStatus {
					t.Fatalf("after launch %d health %+v, want %s", i, h, wantStatus)
				}
			}
			if n := second.hits.Load(); n != 4 {
				t.Fatalf("second endpoint served %d launches, want 4", n)
			}
			if h := reg.Health(rt); h.Endpoints != 2 || h.Available != 1 {
				t.Fatalf("health %+v", h)
			}
		})
	}
}

func TestAllEndpointsDownIsUnavailableWithRetryAfter(t *testing.T) {
	a := newProvider(t, failing(http.StatusBadGateway))
	b := newProvider(t, failing(http.StatusServiceUnavailable))
	reg := newRegistryOn(t, newStoppedClock().Now)
	const cooldown = 20 * time.Second
	rt := route("down", gateway.ProviderKindJSON, cooldown, a.URL, b.URL)

	// The first launch tries both endpoints; neither breaker is open yet,
	// so there is nothing to wait for.
	pu := unavailable(t, func() error { _, err := reg.Launch(context.Background(), rt, launchReq()); return err }())
	if pu.RetryAfter != 0 || len(pu.Endpoints) != 2 || pu.Endpoints[0].Reason != "status_502" ||
		pu.Endpoints[1].Reason != "status_503" || pu.Endpoints[1].Endpoint != 2 {
		t.Fatalf("first failure %+v", pu)
	}
	if err := reg.Ready(rt); err != nil {
		t.Fatalf("ready after one failure each: %v", err)
	}
	// The second failure of each opens both breakers.
	pu = unavailable(t, func() error { _, err := reg.Launch(context.Background(), rt, launchReq()); return err }())
	if pu.RetryAfter != cooldown { // the clock stands still
		t.Fatalf("retry after %s, want %s", pu.RetryAfter, cooldown)
	}
	hitsA, hitsB := a.hits.Load(), b.hits.Load()
	pu = unavailable(t, func() error { _, err := reg.Launch(context.Background(), rt, launchReq()); return err }())
	if a.hits.Load() != hitsA || b.hits.Load() != hitsB {
		t.Fatal("open breakers let a call through")
	}
	for _, f := range pu.Endpoints {
		if f.Reason != "breaker_open" {
			t.Fatalf("endpoint failures %+v, want breaker_open", pu.Endpoints)
		}
	}
	if h := reg.Health(rt); h.Status != gateway.ProviderUnavailable || h.Available != 0 || h.RetryAfter <= 0 {
		t.Fatalf("health %+v", h)
	}
	ready := unavailable(t, reg.Ready(rt))
	if ready.RetryAfter != cooldown {
		t.Fatalf("ready %+v", ready)
	}
}

func TestHalfOpenProbeClosesTheBreakerWhenTheEndpointRecovers(t *testing.T) {
	var healthy atomic.Bool
	p := newProvider(t, func(w http.ResponseWriter, r *http.Request) {
		if !healthy.Load() {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, `{"launchUrl":"https://back.example/"}`)
	})
	clock := newStoppedClock()
	reg := newRegistryOn(t, clock.Now)
	const cooldown = time.Second
	rt := route("recovering", gateway.ProviderKindJSON, cooldown, p.URL)
	for range 2 {
		_, err := reg.Launch(context.Background(), rt, launchReq())
		unavailable(t, err)
	}
	healthy.Store(true)
	// Still open: no call reaches the endpoint until the cooldown ends on
	// the registry's clock, up to its last nanosecond.
	stillOpen := func(when string) {
		t.Helper()
		hits := p.hits.Load()
		h := reg.Health(rt)
		_, err := reg.Launch(context.Background(), rt, launchReq())
		if h.Status != gateway.ProviderUnavailable || err == nil || p.hits.Load() != hits {
			t.Fatalf("open breaker %s: health %+v, err %v, hits %d -> %d", when, h, err, hits, p.hits.Load())
		}
	}
	stillOpen("just opened")
	clock.Advance(cooldown - time.Nanosecond)
	stillOpen("a nanosecond before the cooldown ends")
	clock.Advance(time.Nanosecond)
	if h := reg.Health(rt); h.Status == gateway.ProviderUnavailable {
		t.Fatalf("health %+v once the cooldown passed, want the breaker half-open", h)
	}
	u, err := reg.Launch(context.Background(), rt, launchReq())
	if err != nil || u != "https://back.example/" {
		t.Fatalf("probe: %q, %v", u, err)
	}
	if h := reg.Health(rt); h.Status != gateway.ProviderAvailable {
		t.Fatalf("health %+v after a good probe", h)
	}
}

func TestRoundRobinSpreadsLaunches(t *testing.T) {
	a := jsonProvider(t, "https://a.example/")
	b := jsonProvider(t, "https://b.example/")
	reg := newRegistry(t)
	rt := route("rr", gateway.ProviderKindJSON, time.Minute, a.URL, b.URL)
	rt.Balancing = gateway.BalancingRoundRobin
	seen := map[string]int{}
	for range 6 {
		u, err := reg.Launch(context.Background(), rt, launchReq())
		if err != nil {
			t.Fatal(err)
		}
		seen[u]++
	}
	if seen["https://a.example/"] != 3 || seen["https://b.example/"] != 3 {
		t.Fatalf("launches per endpoint %v, want 3 each", seen)
	}
	// Priority always starts at the first endpoint.
	rt.Balancing, rt.ProviderID = gateway.BalancingPriority, "prio"
	for range 3 {
		if u, err := reg.Launch(context.Background(), rt, launchReq()); err != nil || u != "https://a.example/" {
			t.Fatalf("priority launch %q, %v", u, err)
		}
	}
}

func TestCallerGoingAwayDoesNotCountAgainstTheEndpoint(t *testing.T) {
	release := make(chan struct{})
	p := newProvider(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	reg := newRegistry(t)
	rt := route("slowpoke", gateway.ProviderKindJSON, time.Hour, p.URL)
	rt.BreakerFailures = 1
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := reg.Launch(ctx, rt, launchReq())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want the caller's deadline", err)
	}
	if h := reg.Health(rt); h.Status != gateway.ProviderAvailable {
		t.Fatalf("health %+v: the caller's own deadline opened the breaker", h)
	}
}

func TestDemoAndMisconfiguredProviders(t *testing.T) {
	reg := newRegistry(t)
	demo := route("demo", gateway.ProviderKindDemo, time.Minute)
	u, err := reg.Launch(context.Background(), demo, launchReq())
	if err != nil || u != testPublicURL+"/demo/play?lang=pt-BR&session=gs_abc" {
		t.Fatalf("demo launch %q, %v", u, err)
	}
	if h := reg.Health(demo); h.Status != gateway.ProviderAvailable {
		t.Fatalf("demo health %+v", h)
	}
	for name, rt := range map[string]gateway.ProviderRoute{
		"json without endpoints": route("empty", gateway.ProviderKindJSON, time.Minute),
		"unknown kind":           route("odd", "carrier-pigeon", time.Minute, "http://127.0.0.1:1"),
		"endpoint with a query":  route("q", gateway.ProviderKindJSON, time.Minute, "http://127.0.0.1:1/?x=1"),
	} {
		_, err := reg.Launch(context.Background(), rt, launchReq())
		pu := unavailable(t, err)
		if pu.Reason != "not_configured" || pu.RetryAfter <= 0 {
			t.Fatalf("%s: %+v", name, pu)
		}
		if reg.Ready(rt) == nil || reg.Health(rt).Status != gateway.ProviderUnavailable {
			t.Fatalf("%s: ready or healthy", name)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	for _, u := range []string{"", "pitboss.test", "ftp://pitboss.test"} {
		if _, err := providers.NewRegistryWithConfig(providers.Config{PublicURL: u}); err == nil {
			t.Fatalf("public URL %q accepted", u)
		}
	}
}
