package providers_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/providers"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/gateway/rsasig"
)

// Tests of the caleta, evolution and redtiger launch kinds against real
// provider servers on loopback.

var testLaunchKey = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
})

func launchKeyPEM() string {
	der, err := x509.MarshalPKCS8PrivateKey(testLaunchKey())
	if err != nil {
		panic(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

const testCasinoToken = "casino/token 9" // a path segment that needs escaping

// kindRoute is a route of kind with the launch credentials that kind needs.
func kindRoute(id, kind string, endpoints ...string) gateway.ProviderRoute {
	rt := route(id, kind, time.Hour, endpoints...)
	rt.LaunchOperatorID, rt.LaunchCountry = "op-77", "BR"
	switch kind {
	case gateway.ProviderKindCaleta:
		rt.LaunchSecret = launchKeyPEM()
	case gateway.ProviderKindEvolution:
		rt.LaunchSecret = testCasinoToken
	}
	return rt
}

type seenRequest struct {
	method, path, rawPath, ctype, sig string
	body                              []byte
}

func recordingProvider(t *testing.T, answer func(w http.ResponseWriter)) (*provider, <-chan seenRequest) {
	got := make(chan seenRequest, 16)
	p := newProvider(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seenRequest{r.Method, r.URL.Path, r.URL.EscapedPath(), r.Header.Get("Content-Type"),
			r.Header.Get("X-Auth-Signature"), b}
		w.Header().Set("Content-Type", "application/json")
		answer(w)
	})
	return p, got
}

func decodeBody(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("request body %s: %v", b, err)
	}
	return m
}

func TestCaletaKindSignsTheGameURLRequest(t *testing.T) {
	p, got := recordingProvider(t, func(w http.ResponseWriter) {
		_, _ = io.WriteString(w, `{"url":"https://games.caleta.example/games/?token=abc"}`)
	})
	reg := newRegistry(t)
	u, err := reg.Launch(context.Background(), kindRoute("caleta", gateway.ProviderKindCaleta, p.URL+"/"), launchReq())
	if err != nil {
		t.Fatal(err)
	}
	if u != "https://games.caleta.example/games/?token=abc" {
		t.Fatalf("game url %q", u)
	}
	s := <-got
	if s.method != http.MethodPost || s.path != "/api/game/url" || s.ctype != "application/json" {
		t.Fatalf("request %s %s (%s)", s.method, s.path, s.ctype)
	}
	// The signature is of the exact bytes sent, verifiable with our public
	// half, which is what Caleta holds.
	if err := gateway.VerifyRSASHA256(prepared(t, &testLaunchKey().PublicKey), s.body, s.sig); err != nil {
		t.Fatalf("X-Auth-Signature %q does not verify: %v", s.sig, err)
	}
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	if gateway.VerifyRSASHA256(prepared(t, &other.PublicKey), s.body, s.sig) == nil {
		t.Fatal("the signature verifies with another key")
	}
	want := map[string]any{"operator_id": "op-77", "sub_partner_id": "casino-1", "token": "gs_abc", "user": "player-7",
		"game_code": "their-slot-42", "currency": "EUR", "country": "BR", "lang": "pt",
		"lobby_url": testPublicURL + "/v1/return?session=gs_abc"}
	if m := decodeBody(t, s.body); !reflect.DeepEqual(m, want) {
		t.Fatalf("body %v\nwant %v", m, want)
	}
}

func TestEvolutionKindAuthenticatesTheUser(t *testing.T) {
	p, got := recordingProvider(t, func(w http.ResponseWriter) {
		_, _ = io.WriteString(w, `{"entry":"/entry?params=abc&JSESSIONID=x","entryEmbedded":"/entry?embedded"}`)
	})
	reg := newRegistry(t)
	req := launchReq()
	req.Language = ""
	u, err := reg.Launch(context.Background(), kindRoute("evo", gateway.ProviderKindEvolution, p.URL+"/"), req)
	if err != nil {
		t.Fatal(err)
	}
	if u != p.URL+"/entry?params=abc&JSESSIONID=x" {
		t.Fatalf("game url %q", u)
	}
	s := <-got
	if s.method != http.MethodPost || s.rawPath != "/ua/v1/op-77/"+url.PathEscape(testCasinoToken) ||
		s.ctype != "application/json" {
		t.Fatalf("request %s %s (%s)", s.method, s.rawPath, s.ctype)
	}
	m := decodeBody(t, s.body)
	if id, _ := m["uuid"].(string); len(id) != 36 {
		t.Fatalf("uuid %v", m["uuid"])
	}
	delete(m, "uuid")
	want := map[string]any{
		"player": map[string]any{"id": "player-7", "update": true, "country": "BR", "language": "en",
			"currency": "EUR", "session": map[string]any{"id": "gs_abc"}},
		"config": map[string]any{"game": map[string]any{"table": map[string]any{"id": "their-slot-42"}},
			"channel": map[string]any{"wrapped": false},
			"urls":    map[string]any{"lobby": testPublicURL + "/v1/return?session=gs_abc"}}}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("body %v\nwant %v", m, want)
	}
}

func TestRedTigerKindBuildsTheGameAddressWithoutACall(t *testing.T) {
	p := newProvider(t, failing(http.StatusInternalServerError))
	reg := newRegistry(t)
	u, err := reg.Launch(context.Background(), kindRoute("rt", gateway.ProviderKindRedTiger, p.URL+"/launch/"), launchReq())
	if err != nil {
		t.Fatal(err)
	}
	if p.hits.Load() != 0 {
		t.Fatalf("the redtiger kind called its endpoint %d times", p.hits.Load())
	}
	gu, err := url.Parse(u)
	if err != nil || gu.Scheme+"://"+gu.Host+gu.Path != p.URL+"/launch/their-slot-42" {
		t.Fatalf("game url %q", u)
	}
	want := url.Values{"token": {"gs_abc"}, "currency": {"EUR"}, "userId": {"player-7"}, "casino": {"op-77"},
		"lobbyUrl": {testPublicURL + "/v1/return?session=gs_abc"}, "playMode": {"real"}}
	if !reflect.DeepEqual(gu.Query(), want) {
		t.Fatalf("query %v\nwant %v", gu.Query(), want)
	}
}

func TestKindRefusalsStopFailover(t *testing.T) {
	tests := []struct {
		name, kind, code, contains string
		status                     int
		handle                     http.HandlerFunc
	}{
		{name: "caleta 404", kind: gateway.ProviderKindCaleta, status: http.StatusNotFound, contains: "operator_id",
			handle: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusNotFound)
				_, _ = io.WriteString(w, `{"error":"The operator_id does not correspond to any existing Operator."}`)
			}},
		{name: "evolution G.1 with 200", kind: gateway.ProviderKindEvolution, status: http.StatusOK, code: "G.1",
			contains: "Unknown casino", handle: func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, `{"errors":[{"code":"G.1","message":"Unknown casino op-77"}]}`)
			}},
		{name: "evolution G.2 with 401", kind: gateway.ProviderKindEvolution, status: http.StatusUnauthorized, code: "G.2",
			contains: "incorrect", handle: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = io.WriteString(w, `{"errors":[{"code":"G.2","message":"token is incorrect"}]}`)
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			first := newProvider(t, tc.handle)
			second := jsonProvider(t, "https://never.example/")
			reg := newRegistry(t)
			rt := kindRoute("refuser", tc.kind, first.URL, second.URL)
			for range 3 { // more than BreakerFailures
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
			if h := reg.Health(rt); h.Status != gateway.ProviderAvailable {
				t.Fatalf("health %+v after refusals, want available", h)
			}
		})
	}
}

func TestKindFailuresFailOverAndOpenTheBreaker(t *testing.T) {
	caletaOK := func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"url":"https://second.example/play"}`)
	}
	evoOK := func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"entry":"https://second.example/play"}`)
	}
	tests := []struct {
		name, kind    string
		first, second http.HandlerFunc
	}{
		{name: "caleta 500", kind: gateway.ProviderKindCaleta, first: failing(http.StatusInternalServerError), second: caletaOK},
		{name: "caleta 429", kind: gateway.ProviderKindCaleta, first: failing(http.StatusTooManyRequests), second: caletaOK},
		{name: "caleta without url", kind: gateway.ProviderKindCaleta, second: caletaOK,
			first: func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, `{}`) }},
		{name: "evolution system error G.5", kind: gateway.ProviderKindEvolution, second: evoOK,
			first: func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, `{"errors":[{"code":"G.5","message":"Unable to authenticate user"}]}`)
			}},
		{name: "evolution 503", kind: gateway.ProviderKindEvolution, first: failing(http.StatusServiceUnavailable), second: evoOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			first, second := newProvider(t, tc.first), newProvider(t, tc.second)
			reg := newRegistry(t)
			rt := kindRoute("flaky", tc.kind, first.URL, second.URL)
			for i := range 3 {
				u, err := reg.Launch(context.Background(), rt, launchReq())
				if err != nil || u != "https://second.example/play" {
					t.Fatalf("launch %d: %q, %v", i, u, err)
				}
			}
			// Two failures (BreakerFailures) opened the first endpoint's
			// breaker: the third launch skipped it.
			if n := first.hits.Load(); n != 2 {
				t.Fatalf("first endpoint called %d times, want 2", n)
			}
			if h := reg.Health(rt); h.Status != gateway.ProviderDegraded || h.Available != 1 {
				t.Fatalf("health %+v, want degraded", h)
			}
		})
	}
}

func TestKindsWithoutCredentialsAreNotConfigured(t *testing.T) {
	p := jsonProvider(t, "https://never.example/")
	for _, tc := range []struct {
		name  string
		route func() gateway.ProviderRoute
	}{
		{"caleta without key", func() gateway.ProviderRoute {
			rt := kindRoute("c", gateway.ProviderKindCaleta, p.URL)
			rt.LaunchSecret = ""
			return rt
		}},
		{"caleta with a token for a key", func() gateway.ProviderRoute {
			rt := kindRoute("c", gateway.ProviderKindCaleta, p.URL)
			rt.LaunchSecret = testCasinoToken
			return rt
		}},
		{"caleta without country", func() gateway.ProviderRoute {
			rt := kindRoute("c", gateway.ProviderKindCaleta, p.URL)
			rt.LaunchCountry = ""
			return rt
		}},
		{"evolution without casino key", func() gateway.ProviderRoute {
			rt := kindRoute("e", gateway.ProviderKindEvolution, p.URL)
			rt.LaunchOperatorID = ""
			return rt
		}},
		{"evolution without token", func() gateway.ProviderRoute {
			rt := kindRoute("e", gateway.ProviderKindEvolution, p.URL)
			rt.LaunchSecret = ""
			return rt
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := newRegistry(t)
			_, err := reg.Launch(context.Background(), tc.route(), launchReq())
			if pu := unavailable(t, err); pu.Reason != "not_configured" {
				t.Fatalf("error %+v, want not_configured", pu)
			}
			if h := reg.Health(tc.route()); h.Status != gateway.ProviderUnavailable {
				t.Fatalf("health %+v", h)
			}
		})
	}
	if p.hits.Load() != 0 {
		t.Fatalf("a provider without credentials was called %d times", p.hits.Load())
	}
}

// The evolution kind's URL carries the casino token: a connection failure
// must not write it to our log.
func TestEvolutionCasinoTokenStaysOutOfTheLog(t *testing.T) {
	s := httptest.NewServer(http.NotFoundHandler())
	s.Close()
	var logs bytes.Buffer
	reg, err := providers.NewRegistryWithConfig(providers.Config{PublicURL: testPublicURL,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	rt := kindRoute("evo", gateway.ProviderKindEvolution, s.URL)
	rt.LaunchSecret = "evo-casino-token-42"
	_, err = reg.Launch(context.Background(), rt, launchReq())
	if pu := unavailable(t, err); len(pu.Endpoints) != 1 || pu.Endpoints[0].Reason != "connection" {
		t.Fatalf("error %+v", pu)
	}
	if !strings.Contains(logs.String(), "provider endpoint failed") {
		t.Fatalf("no failure logged: %s", logs.String())
	}
	if strings.Contains(logs.String(), "evo-casino-token-42") {
		t.Fatalf("the casino token is in the log: %s", logs.String())
	}
}

// A listing's route carries no secret: its health is judged by the stored
// fingerprint of the launch secret.
func TestKindHealthOfAListingWithoutSecret(t *testing.T) {
	reg := newRegistry(t)
	for _, tc := range []struct {
		kind, fingerprint, want string
	}{
		{gateway.ProviderKindCaleta, "ab12", gateway.ProviderAvailable},
		{gateway.ProviderKindCaleta, "set", gateway.ProviderUnavailable},
		{gateway.ProviderKindCaleta, "", gateway.ProviderUnavailable},
		{gateway.ProviderKindEvolution, "set", gateway.ProviderAvailable},
		{gateway.ProviderKindEvolution, "", gateway.ProviderUnavailable},
	} {
		rt := kindRoute("listed-"+tc.kind, tc.kind, "https://a.example")
		rt.LaunchSecret, rt.LaunchKeyFingerprint = "", tc.fingerprint
		if h := reg.Health(rt); h.Status != tc.want {
			t.Errorf("%s with fingerprint %q: %s, want %s", tc.kind, tc.fingerprint, h.Status, tc.want)
		}
	}
}

// prepared is pub ready for gateway.VerifyRSASHA256.
func prepared(t *testing.T, pub *rsa.PublicKey) *rsasig.Key {
	t.Helper()
	k, err := rsasig.Prepare(pub)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
