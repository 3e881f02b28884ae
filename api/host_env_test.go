package api_test

import (
	"net/http"
	"testing"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/gateway"
)

// TestHostChoosesTheEnvironmentWhateverItsSpelling: the host a request
// names is normalised (case, a trailing dot, a port) before it chooses the
// environment, in the table the operator configured as well as in the
// request. A production key works at every spelling of the production
// host, and is refused (401) at the sandbox's; before, a trailing dot made
// the production host unknown, and so sandbox.
func TestHostChoosesTheEnvironmentWhateverItsSpelling(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{HostEnvironments: map[string]string{
		"API.Pitboss.Local.": "production", "sandbox.pitboss.local": "sandbox"}})
	prod := h.NewClientIn("production", gateway.ScopeWalletRead)
	sandbox := h.NewClientIn("sandbox", gateway.ScopeWalletRead)
	tests := []struct {
		host string
		key  string
		want int
	}{
		{"api.pitboss.local", prod.Key, http.StatusOK},
		{"API.PITBOSS.LOCAL.", prod.Key, http.StatusOK},
		{"api.pitboss.local.:443", prod.Key, http.StatusOK},
		{"Api.Pitboss.Local:8080", prod.Key, http.StatusOK},
		{"API.PITBOSS.LOCAL.", sandbox.Key, http.StatusUnauthorized},
		{"sandbox.pitboss.local.", sandbox.Key, http.StatusOK},
		{"SANDBOX.PITBOSS.LOCAL.:80", prod.Key, http.StatusUnauthorized},
		{"unknown.example.", sandbox.Key, http.StatusOK}, // any other host is the default, sandbox
	}
	for _, tc := range tests {
		t.Run(tc.host, func(t *testing.T) {
			t.Parallel()
			rec := h.With(t).Do(apitest.Request{Method: http.MethodGet, Path: "/api/v1/wallet/balance", Key: tc.key,
				Host: tc.host})
			if tc.want == http.StatusOK {
				apitest.Expect(t, rec, http.StatusOK, "")
				return
			}
			apitest.WantError(t, rec, tc.want, wire.CodeUnauthorized)
		})
	}
}
