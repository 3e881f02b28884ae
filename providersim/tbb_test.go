package providersim_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/providersim"
)

// TestTBBDialectNamesDeviations: answers not as the document says are
// reported, naming the field.
func TestTBBDialectNamesDeviations(t *testing.T) {
	for _, tc := range []struct {
		name   string
		wallet http.HandlerFunc
		want   string
	}{
		{"balance as a string", answer(200, `{"token":"gs_fake","balance":"100.00"}`),
			`balance: balance answer: balance is "100.00", not a JSON number`},
		{"balance as a decimal", answer(200, `{"token":"gs_fake","balance":100.00}`),
			`balance: balance answer: balance 100.00 is not an integer of EUR minor units`},
		{"another token", answer(200, `{"token":"gs_other","balance":10000}`),
			`balance: balance answer: token is "gs_other", want "gs_fake"`},
		{"a field the document has not", answer(200, `{"token":"gs_fake","balance":10000,"currency":"EUR"}`),
			`balance: balance answer: field currency is not in the document`},
		{"code and HTTP status apart", answer(400, `{"code":403,"message":"signature mismatch"}`),
			`balance: balance answer: HTTP 400 with code 403, want 403`},
		{"a code the addendum has not", answer(409, `{"code":409,"message":"conflict"}`),
			`balance: balance answer: code 409 is not in the addendum`},
		{"a code as a string", answer(403, `{"code":"403","message":"signature mismatch"}`),
			`balance: balance answer: code is "403", not a JSON number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeWallet(t, tc.wallet)
			rep, err := providersim.Run(context.Background(), providersim.Config{Protocol: "tbb", BaseURL: srv.URL,
				Provider: "acme", Game: "slot", APIKey: "k", Player: "sim-player", Currency: "EUR", Balance: "100.00",
				Spins: 1, Seed: 1, Secret: "s"})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range rep.Deviations {
				got = append(got, d.String())
			}
			if !slices.ContainsFunc(got, func(g string) bool { return strings.HasPrefix(g, tc.want) }) {
				t.Fatalf("no deviation %q among %d:\n%s", tc.want, len(got), strings.Join(got, "\n"))
			}
		})
	}
}

// TestTBBDialectNeedsTheSecret: tbb signs with the provider's secret; a
// run without one is a configuration error.
func TestTBBDialectNeedsTheSecret(t *testing.T) {
	_, err := providersim.Run(context.Background(), providersim.Config{Protocol: "tbb", BaseURL: "http://127.0.0.1:1",
		Provider: "p", Game: "g", APIKey: "k", Player: "p", Currency: "EUR", Balance: "10"})
	if !errors.Is(err, providersim.ErrConfig) {
		t.Fatalf("err %v, want ErrConfig", err)
	}
}
