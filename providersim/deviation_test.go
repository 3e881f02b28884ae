package providersim_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/providersim"
)

// fakeWallet is a server that launches a session and answers every wallet
// call with wallet: what a Pitboss that does not keep its document would
// answer.
func fakeWallet(t *testing.T, wallet http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/launch" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"ok":true,"session_id":"gs_fake","game_url":"http://x/","expires_at":"2030-01-01T00:00:00Z"}`))
			return
		}
		wallet(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func answer(code int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}
}

// TestSimulatorNamesDeviations points the simulator at servers that answer
// a wrong shape: it reports each deviation, naming the step and the field.
func TestSimulatorNamesDeviations(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, protocol string
		wallet         http.HandlerFunc
		want           string // a deviation, as printed
	}{
		{"pitboss balance as a string", "pitboss", answer(200, `{"status":"OK","balance":"100.00","currency":"EUR"}`),
			`balance: balance answer: balance is "100.00", not a JSON number`},
		{"pitboss error code with the wrong HTTP status", "pitboss",
			answer(400, `{"success":false,"error":{"code":"BET_ROLLED_BACK","message":"m","request_id":"r","details":{"retryable":false}}}`),
			`balance: balance answer: HTTP 400 with code BET_ROLLED_BACK, want 409`},
		{"redtiger auth without its balance", "redtiger",
			answer(200, `{"success":true,"result":{"token":"gs_fake","currency":"EUR","userId":"sim-player","casino":"sim"}}`),
			`balance: balance answer: balance is missing`},
		{"redtiger refusal on HTTP 200", "redtiger",
			answer(200, `{"success":false,"error":{"message":"Insufficient funds","code":304}}`),
			`balance: balance answer: HTTP 200 with code 304, want 400`},
		{"caleta answer on HTTP 500", "caleta", answer(500, `{"status":"RS_ERROR_UNKNOWN","request_uuid":"x"}`),
			`open: open answer: HTTP 500; every Caleta answer is HTTP 200`},
		{"evolution answer without bonus", "evolution", answer(200, `{"status":"OK","balance":100.00,"uuid":"u"}`),
			`balance: balance answer: bonus is missing`},
		{"evolution balance not the launch's", "evolution", answer(200, `{"status":"OK","balance":99.00,"bonus":0.00,"uuid":"u"}`),
			`balance: balance: balance 99.00, want 100.00`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeWallet(t, tc.wallet)
			rep, err := providersim.Run(context.Background(), providersim.Config{Protocol: tc.protocol, BaseURL: srv.URL,
				Provider: "acme", Game: "slot", APIKey: "k", Player: "sim-player", Currency: "EUR", Balance: "100.00",
				Spins: 2, Seed: 1, Secret: "s", PrivateKey: key})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range rep.Deviations {
				got = append(got, d.String())
			}
			found := false
			for _, g := range got {
				found = found || strings.HasPrefix(g, tc.want)
			}
			if !found {
				t.Fatalf("no deviation %q among %d:\n%s", tc.want, len(got), strings.Join(got, "\n"))
			}
		})
	}
}

// TestSimulatorRefusesConfigurations: what cannot run is ErrConfig (the
// command's exit 2), before any call.
func TestSimulatorRefusesConfigurations(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ok := providersim.Config{Protocol: "pitboss", BaseURL: "http://127.0.0.1:1", Provider: "p", Game: "g", APIKey: "k",
		Player: "p", Currency: "EUR", Balance: "10", Secret: "s"}
	for name, change := range map[string]func(*providersim.Config){
		"unknown protocol":        func(c *providersim.Config) { c.Protocol = "hub99" },
		"caleta without its key":  func(c *providersim.Config) { c.Protocol = "caleta" },
		"evolution without token": func(c *providersim.Config) { c.Protocol, c.Secret = "evolution", "" },
		"unknown currency":        func(c *providersim.Config) { c.Currency = "XXQ" },
		"balance too precise":     func(c *providersim.Config) { c.Balance = "1.001" },
		"no game":                 func(c *providersim.Config) { c.Game = "" },
		"base URL not http":       func(c *providersim.Config) { c.BaseURL = "127.0.0.1:8080" },
		"negative spins":          func(c *providersim.Config) { c.Spins = -1 },
		"caleta in BTC":           func(c *providersim.Config) { c.Protocol, c.Currency, c.PrivateKey = "caleta", "BTC", key },
	} {
		t.Run(name, func(t *testing.T) {
			c := ok
			change(&c)
			if _, err := providersim.Run(context.Background(), c); !errors.Is(err, providersim.ErrConfig) {
				t.Fatalf("err %v, want ErrConfig", err)
			}
		})
	}
}
