package providers_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/pitboss/pitboss/gateway"
)

// TestLaunchCountryReachesTheProvider: the player's country a launch
// names is the country caleta and evolution launches send; without one,
// the provider's launch country (BR in kindRoute).
func TestLaunchCountryReachesTheProvider(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind, answer string
		country      func(map[string]any) any
	}{
		{gateway.ProviderKindCaleta, `{"url":"https://games.caleta.example/g"}`,
			func(m map[string]any) any { return m["country"] }},
		{gateway.ProviderKindEvolution, `{"entry":"/entry?params=abc"}`,
			func(m map[string]any) any { return m["player"].(map[string]any)["country"] }},
	} {
		p, got := recordingProvider(t, func(w http.ResponseWriter) { _, _ = io.WriteString(w, tc.answer) })
		rt := kindRoute("p-"+tc.kind, tc.kind, p.URL)
		for _, country := range []string{"PL", ""} {
			req := launchReq()
			req.Country = country
			if _, err := newRegistry(t).Launch(context.Background(), rt, req); err != nil {
				t.Fatalf("%s: %v", tc.kind, err)
			}
			want := map[string]string{"PL": "PL", "": "BR"}[country]
			if sent := tc.country(decodeBody(t, (<-got).body)); sent != want {
				t.Errorf("%s with country %q sent %v, want %s", tc.kind, country, sent, want)
			}
		}
	}
}
