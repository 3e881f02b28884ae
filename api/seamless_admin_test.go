package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
)

type admClientWallet struct {
	ID     string `json:"id"`
	Wallet *struct {
		Mode          string `json:"mode"`
		URL           string `json:"url"`
		Protocol      string `json:"protocol"`
		OperatorID    string `json:"operator_id"`
		CredentialSet bool   `json:"credential_set"`
	} `json:"wallet"`
}

// TestAdminClientWallet: PUT /admin/v1/clients/{id}/wallet sets a
// client's wallet mode (docs/seamless-wallet.md); the client shows it, the
// credential never; every bad setting is a 400 naming its field.
func TestAdminClientWallet(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{AdminToken: admToken, AllowPrivateCallbacks: true})
	id, _ := admNewClient(t, h, "sandbox", "", "launch")
	path := "/admin/v1/clients/" + id + "/wallet"
	const credential = "pam-api-token-for-tests-0123456789"

	t.Run("a new client keeps its players' money in the ledger", func(t *testing.T) {
		c := apitest.Data[admClientWallet](t, h.Admin(http.MethodGet, "/admin/v1/clients/"+id, nil))
		if c.Wallet == nil || c.Wallet.Mode != "ledger" || c.Wallet.CredentialSet {
			t.Fatalf("wallet %+v, want mode ledger", c.Wallet)
		}
	})
	t.Run("seamless on valkyrie-pam", func(t *testing.T) {
		rec := h.Admin(http.MethodPut, path, map[string]any{"mode": "seamless", "url": "http://127.0.0.1:9/pam",
			"protocol": "valkyrie-pam", "credential": credential})
		if strings.Contains(rec.Body.String(), credential) {
			t.Fatal("the answer shows the credential")
		}
		c := apitest.Data[admClientWallet](t, rec)
		if w := c.Wallet; w == nil || w.Mode != "seamless" || w.URL != "http://127.0.0.1:9/pam" ||
			w.Protocol != "valkyrie-pam" || !w.CredentialSet {
			t.Fatalf("wallet %+v", c.Wallet)
		}
	})
	t.Run("the credential may be left out once set", func(t *testing.T) {
		c := apitest.Data[admClientWallet](t, h.Admin(http.MethodPut, path, map[string]any{"mode": "seamless",
			"url": "http://127.0.0.1:9/pam2", "protocol": "valkyrie-pam"}))
		if w := c.Wallet; w == nil || w.URL != "http://127.0.0.1:9/pam2" || !w.CredentialSet {
			t.Fatalf("wallet %+v", c.Wallet)
		}
	})
	t.Run("back to the ledger drops the credential", func(t *testing.T) {
		c := apitest.Data[admClientWallet](t, h.Admin(http.MethodPut, path, map[string]any{"mode": "ledger"}))
		if w := c.Wallet; w == nil || w.Mode != "ledger" || w.CredentialSet || w.URL != "" {
			t.Fatalf("wallet %+v", c.Wallet)
		}
	})

	bad := []struct {
		name  string
		body  any
		field string
		code  string
	}{
		{"no mode", map[string]any{}, "mode", wire.CodeInvalidRequest},
		{"unknown mode", map[string]any{"mode": "hybrid"}, "mode", wire.CodeInvalidRequest},
		{"a ledger client with a URL", map[string]any{"mode": "ledger", "url": "http://127.0.0.1:9"}, "mode", wire.CodeInvalidRequest},
		{"unknown protocol", map[string]any{"mode": "seamless", "url": "http://127.0.0.1:9", "protocol": "soap",
			"credential": credential}, "protocol", wire.CodeInvalidRequest},
		{"no URL", map[string]any{"mode": "seamless", "protocol": "tbb", "credential": credential}, "url", wire.CodeInvalidRequest},
		{"a URL that is no http URL", map[string]any{"mode": "seamless", "url": "ftp://x", "protocol": "tbb",
			"credential": credential}, "url", wire.CodeInvalidRequest},
		{"no credential", map[string]any{"mode": "seamless", "url": "http://127.0.0.1:9", "protocol": "tbb"},
			"credential", wire.CodeInvalidRequest},
		{"a credential of two lines", map[string]any{"mode": "seamless", "url": "http://127.0.0.1:9", "protocol": "tbb",
			"credential": "a\nb"}, "credential", wire.CodeInvalidRequest},
		{"unknown field", map[string]any{"mode": "ledger", "secret": "x"}, "secret", wire.CodeInvalidRequest},
		{"not JSON", "{", "", wire.CodeInvalidJSON},
	}
	for _, tc := range bad {
		t.Run("refused: "+tc.name, func(t *testing.T) {
			e := apitest.WantError(t, h.Admin(http.MethodPut, path, tc.body), http.StatusBadRequest, tc.code)
			if tc.field != "" && e.Error.Details["field"] != tc.field {
				t.Fatalf("details.field %v, want %s", e.Error.Details["field"], tc.field)
			}
		})
	}
	t.Run("unknown client", func(t *testing.T) {
		apitest.WantError(t, h.Admin(http.MethodPut, "/admin/v1/clients/"+apitest.UID("nobody")+"/wallet",
			map[string]any{"mode": "ledger"}), http.StatusNotFound, wire.CodeNotFound)
	})
	t.Run("a production client's wallet may not be on loopback", func(t *testing.T) {
		h := apitest.New(t, apitest.Options{AdminToken: admToken})
		prod, _ := admNewClient(t, h, "production", "", "launch")
		e := apitest.WantError(t, h.Admin(http.MethodPut, "/admin/v1/clients/"+prod+"/wallet", map[string]any{
			"mode": "seamless", "url": "http://127.0.0.1:9", "protocol": "tbb", "credential": credential}),
			http.StatusBadRequest, wire.CodeInvalidRequest)
		if e.Error.Details["field"] != "url" {
			t.Fatalf("details %v", e.Error.Details)
		}
	})
}
