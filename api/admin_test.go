package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/gateway"
)

// The key management, admin API, rate limit, usage, health and metrics
// tests call the admin API with this token; TestAPIKeyStatuses serves a
// sandbox and a production address.
const (
	admSandboxHost    = "sandbox.adm.test"
	admProductionHost = "api.adm.test"
	admToken          = "admin-token-for-tests-0123456789abcdef"
)

type admKey struct {
	ID          string   `json:"id"`
	ClientID    string   `json:"client_id"`
	Prefix      string   `json:"prefix"`
	Label       string   `json:"label"`
	Environment string   `json:"environment"`
	Scopes      []string `json:"scopes"`
	Status      string   `json:"status"`
	CreatedAt   string   `json:"created_at"`
	ExpiresAt   *string  `json:"expires_at"`
	RevokedAt   *string  `json:"revoked_at"`
	LastUsedAt  *string  `json:"last_used_at"`
	ReplacedBy  *string  `json:"replaced_by"`
	Key         string   `json:"key"`
}

// admNewClient creates a client through the admin API and issues it a key
// with scopes; an empty plan is the default one.
func admNewClient(t testing.TB, h *apitest.Harness, env, plan string, scopes ...string) (clientID string, key admKey) {
	t.Helper()
	clientID = apitest.UID("client")
	body := map[string]any{"id": clientID, "name": "Operator " + clientID, "environment": env}
	if plan != "" {
		body["plan"] = plan
	}
	apitest.Data[map[string]any](t, h.Admin(http.MethodPost, "/admin/v1/clients", body))
	return clientID, admIssueKey(t, h, clientID, scopes...)
}

// admIssueKey issues a key through the admin API.
func admIssueKey(t testing.TB, h *apitest.Harness, clientID string, scopes ...string) admKey {
	t.Helper()
	k := apitest.Data[admKey](t, h.Admin(http.MethodPost, "/admin/v1/clients/"+clientID+"/keys", map[string]any{"scopes": scopes}))
	if k.Key == "" || !strings.HasPrefix(k.Key, k.Prefix+"_") {
		t.Fatalf("issued key %+v: the key must start with its prefix", k)
	}
	return k
}

type admClient struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Environment string `json:"environment"`
	Plan        string `json:"plan"`
	RateLimit   struct {
		Tier          string `json:"tier"`
		Limit         int    `json:"limit"`
		WindowSeconds int    `json:"window_seconds"`
	} `json:"rate_limit"`
	CreatedAt    string `json:"created_at"`
	Created      *bool  `json:"created"`
	SignedLaunch *struct {
		RequireSignature   *bool    `json:"require_signature"`
		SignatureRequired  bool     `json:"signature_required"`
		IPAllowList        []string `json:"ip_allow_list"`
		AllowedReturnHosts []string `json:"allowed_return_hosts"`
		DefaultCurrency    string   `json:"default_currency"`
		ClientSecretSet    bool     `json:"client_secret_set"`
	} `json:"signed_launch"`
	ForwardCallback *struct {
		URL       string `json:"url"`
		SecretSet bool   `json:"secret_set"`
	} `json:"forward_callback"`
	Keys *struct {
		Active int `json:"active"`
		Total  int `json:"total"`
	} `json:"keys"`
}

// TestAdminAuthentication: the admin token, constant-time compared; a
// client key is 403; no token configured means no admin API.
func TestAdminAuthentication(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{AdminToken: admToken})
	_, key := admNewClient(t, h, "sandbox", "", gateway.ScopeWalletRead)

	tests := []struct {
		name   string
		token  string
		status int
		code   string
	}{
		{"no token", "", http.StatusUnauthorized, wire.CodeUnauthorized},
		{"wrong token", admToken + "x", http.StatusUnauthorized, wire.CodeUnauthorized},
		{"token prefix", admToken[:20], http.StatusUnauthorized, wire.CodeUnauthorized},
		{"a client API key", key.Key, http.StatusForbidden, wire.CodeForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := h.Do(apitest.Request{Method: http.MethodGet, Path: "/admin/v1/clients", Key: tc.token})
			apitest.WantError(t, rec, tc.status, tc.code)
		})
	}
	t.Run("the admin token", func(t *testing.T) {
		apitest.Data[[]admClient](t, h.Admin(http.MethodGet, "/admin/v1/clients", nil))
	})
	t.Run("unknown admin route", func(t *testing.T) {
		apitest.WantError(t, h.Admin(http.MethodGet, "/admin/v1/nothing-here", nil), http.StatusNotFound, wire.CodeNotFound)
	})
	t.Run("the admin token is not an API key", func(t *testing.T) {
		rec := h.Call(http.MethodGet, "/api/v1/usage", admToken, nil)
		apitest.WantError(t, rec, http.StatusUnauthorized, wire.CodeUnauthorized)
	})

	t.Run("disabled without a token", func(t *testing.T) {
		off := apitest.New(t, apitest.Options{Pool: h.Pool})
		for _, tok := range []string{"", admToken} {
			rec := off.Do(apitest.Request{Method: http.MethodGet, Path: "/admin/v1/clients", Key: tok})
			e := apitest.WantError(t, rec, http.StatusNotFound, wire.CodeNotFound)
			if !strings.Contains(e.Error.Message, "disabled") {
				t.Fatalf("message %q should say the admin API is disabled", e.Error.Message)
			}
		}
	})
}

// TestAdminClients covers create, list, get and update of clients with
// every status they answer.
func TestAdminClients(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{AdminToken: admToken, RateTiers: "sandbox:100/60s,standard:1000/60s,enterprise:10000/60s"})
	id := apitest.UID("acme")
	create := map[string]any{"id": id, "name": "Acme Casino", "environment": "production", "plan": "enterprise"}

	t.Run("create", func(t *testing.T) {
		c := apitest.Data[admClient](t, h.Admin(http.MethodPost, "/admin/v1/clients", create))
		if c.ID != id || c.Name != "Acme Casino" || c.Environment != "production" || c.Plan != "enterprise" ||
			c.Created == nil || !*c.Created || c.RateLimit.Limit != 10000 || c.RateLimit.WindowSeconds != 60 {
			t.Fatalf("created %+v", c)
		}
	})
	t.Run("create again with the same settings", func(t *testing.T) {
		c := apitest.Data[admClient](t, h.Admin(http.MethodPost, "/admin/v1/clients", create))
		if c.Created == nil || *c.Created || c.ID != id {
			t.Fatalf("repeat %+v, want the existing client with created false", c)
		}
	})
	t.Run("create the id with other settings", func(t *testing.T) {
		body := map[string]any{"id": id, "name": "Acme Casino", "environment": "sandbox", "plan": "enterprise"}
		e := apitest.WantError(t, h.Admin(http.MethodPost, "/admin/v1/clients", body), http.StatusConflict, wire.CodeClientExists)
		if e.Error.Details["field"] != "environment" || e.Error.Details["existing"] != "production" {
			t.Fatalf("details %v", e.Error.Details)
		}
	})
	t.Run("default plan", func(t *testing.T) {
		c := apitest.Data[admClient](t, h.Admin(http.MethodPost, "/admin/v1/clients",
			map[string]any{"id": apitest.UID("dflt"), "name": "D", "environment": "sandbox"}))
		if c.Plan != "standard" || c.RateLimit.Limit != 1000 {
			t.Fatalf("default plan %+v", c)
		}
	})

	bad := []struct {
		name  string
		body  any
		field string
		code  string
	}{
		{"no id", map[string]any{"name": "x", "environment": "sandbox"}, "id", wire.CodeInvalidRequest},
		{"id with a colon", map[string]any{"id": "a:b", "name": "x", "environment": "sandbox"}, "id", wire.CodeInvalidRequest},
		{"no name", map[string]any{"id": apitest.UID("x"), "environment": "sandbox"}, "name", wire.CodeInvalidRequest},
		{"bad environment", map[string]any{"id": apitest.UID("x"), "name": "x", "environment": "staging"}, "environment", wire.CodeInvalidRequest},
		{"unknown plan", map[string]any{"id": apitest.UID("x"), "name": "x", "environment": "sandbox", "plan": "gold"}, "plan", wire.CodeInvalidRequest},
		{"unknown field", map[string]any{"id": apitest.UID("x"), "name": "x", "environment": "sandbox", "tier": "gold"}, "tier", wire.CodeInvalidRequest},
		{"not JSON", "{", "", wire.CodeInvalidJSON},
	}
	for _, tc := range bad {
		t.Run("create: "+tc.name, func(t *testing.T) {
			e := apitest.WantError(t, h.Admin(http.MethodPost, "/admin/v1/clients", tc.body), http.StatusBadRequest, tc.code)
			if tc.field != "" && e.Error.Details["field"] != tc.field {
				t.Fatalf("details.field %v, want %s", e.Error.Details["field"], tc.field)
			}
		})
	}

	t.Run("list with pagination", func(t *testing.T) {
		rec := h.Admin(http.MethodGet, "/admin/v1/clients?per_page=1&page=1", nil)
		page := apitest.Decode[struct {
			Data       []admClient `json:"data"`
			Pagination struct{ Page, PerPage, Total int }
		}](t, rec)
		if rec.Code != http.StatusOK || len(page.Data) != 1 || page.Pagination.Total != 2 {
			t.Fatalf("page %s", rec.Body)
		}
		apitest.WantError(t, h.Admin(http.MethodGet, "/admin/v1/clients?per_page=0", nil), http.StatusBadRequest, wire.CodeInvalidRequest)
	})
	t.Run("get", func(t *testing.T) {
		c := apitest.Data[admClient](t, h.Admin(http.MethodGet, "/admin/v1/clients/"+id, nil))
		if c.ID != id || c.SignedLaunch == nil || !c.SignedLaunch.SignatureRequired || c.SignedLaunch.RequireSignature != nil ||
			c.ForwardCallback == nil || c.ForwardCallback.URL != "" || c.Keys == nil || c.Keys.Total != 0 {
			t.Fatalf("client %s", h.Admin(http.MethodGet, "/admin/v1/clients/"+id, nil).Body)
		}
	})
	t.Run("get unknown", func(t *testing.T) {
		apitest.WantError(t, h.Admin(http.MethodGet, "/admin/v1/clients/nobody", nil), http.StatusNotFound, wire.CodeNotFound)
		apitest.WantError(t, h.Admin(http.MethodGet, "/admin/v1/clients/bad:id", nil), http.StatusNotFound, wire.CodeNotFound)
	})

	t.Run("update every setting", func(t *testing.T) {
		patch := map[string]any{
			"name": "Acme Casino Ltd", "plan": "standard", "forward_callback_url": "https://acme.example.com/pitboss",
			"require_signature": false, "ip_allow_list": []string{"203.0.113.0/24", "198.51.100.7"},
			"allowed_return_hosts": []string{"Casino.Example.com"}, "default_currency": "eur",
		}
		c := apitest.Data[admClient](t, h.Admin(http.MethodPatch, "/admin/v1/clients/"+id, patch))
		sl, fc := c.SignedLaunch, c.ForwardCallback
		if c.Name != "Acme Casino Ltd" || c.Plan != "standard" || c.RateLimit.Limit != 1000 ||
			fc == nil || fc.URL != "https://acme.example.com/pitboss" ||
			sl == nil || sl.RequireSignature == nil || *sl.RequireSignature || sl.SignatureRequired ||
			strings.Join(sl.IPAllowList, ",") != "203.0.113.0/24,198.51.100.7/32" ||
			strings.Join(sl.AllowedReturnHosts, ",") != "casino.example.com" || sl.DefaultCurrency != "EUR" {
			t.Fatalf("updated %+v %+v %+v", c, sl, fc)
		}
		// a GET reads the same back from the stores
		again := apitest.Data[admClient](t, h.Admin(http.MethodGet, "/admin/v1/clients/"+id, nil))
		if again.Plan != "standard" || again.ForwardCallback.URL != fc.URL || len(again.SignedLaunch.IPAllowList) != 2 {
			t.Fatalf("read back %+v", again)
		}
	})
	t.Run("update: a partial patch keeps the rest; null restores the default", func(t *testing.T) {
		c := apitest.Data[admClient](t, h.Admin(http.MethodPatch, "/admin/v1/clients/"+id,
			map[string]any{"require_signature": nil, "forward_callback_url": ""}))
		sl := c.SignedLaunch
		if sl.RequireSignature != nil || !sl.SignatureRequired || len(sl.IPAllowList) != 2 || c.Name != "Acme Casino Ltd" ||
			c.ForwardCallback.URL != "" {
			t.Fatalf("after patch %+v %+v", c, sl)
		}
	})
	badPatch := []struct {
		name, field, code string
		body              any
	}{
		{"environment", "environment", wire.CodeInvalidRequest, map[string]any{"environment": "sandbox"}},
		{"plan", "plan", wire.CodeInvalidRequest, map[string]any{"plan": "platinum"}},
		{"empty name", "name", wire.CodeInvalidRequest, map[string]any{"name": " "}},
		{"callback URL", "forward_callback_url", wire.CodeInvalidRequest, map[string]any{"forward_callback_url": "ftp://x"}},
		{"private callback URL", "forward_callback_url", wire.CodeInvalidRequest, map[string]any{"forward_callback_url": "http://127.0.0.1/cb"}},
		{"require_signature", "require_signature", wire.CodeInvalidRequest, map[string]any{"require_signature": "yes"}},
		{"ip", "ip_allow_list", wire.CodeInvalidRequest, map[string]any{"ip_allow_list": []string{"10.0.0.300"}}},
		{"currency", "default_currency", wire.CodeUnknownCurrency, map[string]any{"default_currency": "XXQ"}},
		{"return host", "allowed_return_hosts", wire.CodeInvalidRequest, map[string]any{"allowed_return_hosts": []string{"a/b"}}},
		{"return host pattern", "allowed_return_hosts", wire.CodeInvalidRequest, map[string]any{"allowed_return_hosts": []string{"*.casino.example"}}},
		{"return host URL", "allowed_return_hosts", wire.CodeInvalidRequest, map[string]any{"allowed_return_hosts": []string{"https://casino.example"}}},
	}
	for _, tc := range badPatch {
		t.Run("update: bad "+tc.name, func(t *testing.T) {
			e := apitest.WantError(t, h.Admin(http.MethodPatch, "/admin/v1/clients/"+id, tc.body), http.StatusBadRequest, tc.code)
			if tc.field != "" && e.Error.Details["field"] != tc.field {
				t.Fatalf("details %v, want field %s", e.Error.Details, tc.field)
			}
		})
	}
	t.Run("update unknown client", func(t *testing.T) {
		apitest.WantError(t, h.Admin(http.MethodPatch, "/admin/v1/clients/nobody", map[string]any{"plan": "standard"}),
			http.StatusNotFound, wire.CodeNotFound)
	})

	t.Run("client secret", func(t *testing.T) {
		got := apitest.Data[map[string]string](t, h.Admin(http.MethodPost, "/admin/v1/clients/"+id+"/client-secret", nil))
		if !strings.HasPrefix(got["client_secret"], "pbcs_") {
			t.Fatalf("client secret %v", got)
		}
		c := apitest.Data[admClient](t, h.Admin(http.MethodGet, "/admin/v1/clients/"+id, nil))
		if !c.SignedLaunch.ClientSecretSet {
			t.Fatal("client_secret_set false after issuing one")
		}
		apitest.WantError(t, h.Admin(http.MethodPost, "/admin/v1/clients/nobody/client-secret", nil), http.StatusNotFound, wire.CodeNotFound)
	})
	t.Run("tiers", func(t *testing.T) {
		got := apitest.Data[struct {
			Tiers []struct {
				Tier  string `json:"tier"`
				Limit int    `json:"limit"`
			} `json:"tiers"`
			DefaultTier string `json:"default_tier"`
		}](t, h.Admin(http.MethodGet, "/admin/v1/tiers", nil))
		if len(got.Tiers) != 3 || got.Tiers[0].Tier != "sandbox" || got.Tiers[0].Limit != 100 || got.DefaultTier != "standard" {
			t.Fatalf("tiers %+v", got)
		}
	})
}

// TestAdminKeys covers issue, list, get, rotate and revoke with every
// status they answer, and what each does to authentication.
func TestAdminKeys(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{AdminToken: admToken})
	clientID, first := admNewClient(t, h, "sandbox", "", gateway.ScopeWalletRead, gateway.ScopeTransactionsRead)
	other, otherKey := admNewClient(t, h, "sandbox", "", gateway.ScopeWalletRead)
	keys := "/admin/v1/clients/" + clientID + "/keys"

	works := func(t *testing.T, key string) {
		t.Helper()
		if rec := h.Call(http.MethodGet, "/api/v1/wallet/balance", key, nil); rec.Code != http.StatusOK {
			t.Fatalf("key refused: %d %s", rec.Code, rec.Body)
		}
	}
	refused := func(t *testing.T, key string) {
		t.Helper()
		apitest.WantError(t, h.Call(http.MethodGet, "/api/v1/wallet/balance", key, nil), http.StatusUnauthorized, wire.CodeUnauthorized)
	}

	t.Run("issue", func(t *testing.T) {
		if first.ClientID != clientID || first.Environment != "sandbox" || !strings.HasPrefix(first.Prefix, "pb_test_") ||
			first.Status != "active" || first.ExpiresAt != nil || len(first.Scopes) != 2 {
			t.Fatalf("issued %+v", first)
		}
		works(t, first.Key)
	})
	t.Run("issue with label and expiry", func(t *testing.T) {
		exp := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
		k := apitest.Data[admKey](t, h.Admin(http.MethodPost, keys,
			map[string]any{"scopes": []string{"launch", "launch"}, "label": "backend", "expires_at": exp.Format(time.RFC3339)}))
		if k.Label != "backend" || k.ExpiresAt == nil || !strings.HasPrefix(*k.ExpiresAt, exp.Format("2006-01-02T15:04:05")) ||
			len(k.Scopes) != 1 {
			t.Fatalf("issued %+v", k)
		}
	})
	badIssue := []struct {
		name  string
		body  any
		field string
	}{
		{"no scopes", map[string]any{}, "scopes"},
		{"unknown scope", map[string]any{"scopes": []string{"everything"}}, "scopes"},
		{"past expiry", map[string]any{"scopes": []string{"launch"}, "expires_at": "2001-01-01T00:00:00Z"}, "expires_at"},
		{"long label", map[string]any{"scopes": []string{"launch"}, "label": strings.Repeat("x", 101)}, "label"},
	}
	for _, tc := range badIssue {
		t.Run("issue: "+tc.name, func(t *testing.T) {
			e := apitest.WantError(t, h.Admin(http.MethodPost, keys, tc.body), http.StatusBadRequest, wire.CodeInvalidRequest)
			if e.Error.Details["field"] != tc.field {
				t.Fatalf("details %v", e.Error.Details)
			}
		})
	}
	t.Run("issue for an unknown client", func(t *testing.T) {
		apitest.WantError(t, h.Admin(http.MethodPost, "/admin/v1/clients/nobody/keys", map[string]any{"scopes": []string{"launch"}}),
			http.StatusNotFound, wire.CodeNotFound)
	})

	t.Run("list never shows a key", func(t *testing.T) {
		rec := h.Admin(http.MethodGet, keys, nil)
		list := apitest.Data[[]admKey](t, rec)
		if len(list) != 2 || strings.Contains(rec.Body.String(), first.Key) || strings.Contains(rec.Body.String(), `"key":`) {
			t.Fatalf("list %s", rec.Body)
		}
		for _, k := range list {
			if k.Prefix == "" || k.CreatedAt == "" || k.Status != "active" {
				t.Fatalf("listed key %+v", k)
			}
		}
		apitest.WantError(t, h.Admin(http.MethodGet, "/admin/v1/clients/nobody/keys", nil), http.StatusNotFound, wire.CodeNotFound)
	})
	t.Run("last used appears after a usage flush", func(t *testing.T) {
		works(t, first.Key)
		if err := h.Meter.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		k := apitest.Data[admKey](t, h.Admin(http.MethodGet, keys+"/"+first.ID, nil))
		if k.LastUsedAt == nil {
			t.Fatalf("last_used_at missing: %+v", k)
		}
	})
	t.Run("get", func(t *testing.T) {
		k := apitest.Data[admKey](t, h.Admin(http.MethodGet, keys+"/"+first.ID, nil))
		if k.ID != first.ID || k.Key != "" {
			t.Fatalf("got %+v", k)
		}
		apitest.WantError(t, h.Admin(http.MethodGet, keys+"/000000000000", nil), http.StatusNotFound, wire.CodeNotFound)
		// another client's key is not found under this client
		apitest.WantError(t, h.Admin(http.MethodGet, keys+"/"+otherKey.ID, nil), http.StatusNotFound, wire.CodeNotFound)
	})

	var rotated admKey
	t.Run("rotate", func(t *testing.T) {
		rec := h.Admin(http.MethodPost, keys+"/"+first.ID+"/rotate", nil) // no body: default grace
		got := apitest.Data[struct {
			admKey
			Replaced admKey `json:"replaced"`
		}](t, rec)
		rotated = got.admKey
		if rotated.Key == "" || rotated.ID == first.ID || strings.Join(rotated.Scopes, ",") != strings.Join(first.Scopes, ",") ||
			got.Replaced.ID != first.ID || got.Replaced.ReplacedBy == nil || *got.Replaced.ReplacedBy != rotated.ID ||
			got.Replaced.ExpiresAt == nil || got.Replaced.Status != "active" {
			t.Fatalf("rotation %s", rec.Body)
		}
		exp, err := time.Parse(time.RFC3339, *got.Replaced.ExpiresAt)
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Until(exp); d < 23*time.Hour || d > 25*time.Hour {
			t.Fatalf("old key expires in %s, want the default grace of 24h", d)
		}
		works(t, rotated.Key)
		works(t, first.Key) // within the grace period
	})
	t.Run("rotate again", func(t *testing.T) {
		apitest.WantError(t, h.Admin(http.MethodPost, keys+"/"+first.ID+"/rotate", nil), http.StatusConflict, wire.CodeKeyAlreadyRotated)
	})
	t.Run("rotate: bad grace", func(t *testing.T) {
		e := apitest.WantError(t, h.Admin(http.MethodPost, keys+"/"+rotated.ID+"/rotate", map[string]any{"grace_period_seconds": -1}),
			http.StatusBadRequest, wire.CodeInvalidRequest)
		if e.Error.Details["field"] != "grace_period_seconds" {
			t.Fatalf("details %v", e.Error.Details)
		}
		apitest.WantError(t, h.Admin(http.MethodPost, keys+"/"+rotated.ID+"/rotate", map[string]any{"grace_period_seconds": 31 * 86400}),
			http.StatusBadRequest, wire.CodeInvalidRequest)
	})
	t.Run("rotate unknown", func(t *testing.T) {
		apitest.WantError(t, h.Admin(http.MethodPost, keys+"/000000000000/rotate", nil), http.StatusNotFound, wire.CodeNotFound)
		apitest.WantError(t, h.Admin(http.MethodPost, "/admin/v1/clients/"+other+"/keys/"+first.ID+"/rotate", nil),
			http.StatusNotFound, wire.CodeNotFound)
	})

	t.Run("revoke", func(t *testing.T) {
		k := apitest.Data[admKey](t, h.Admin(http.MethodPost, keys+"/"+rotated.ID+"/revoke", nil))
		if k.Status != "revoked" || k.RevokedAt == nil {
			t.Fatalf("revoked %+v", k)
		}
		refused(t, rotated.Key)
		again := apitest.Data[admKey](t, h.Admin(http.MethodPost, keys+"/"+rotated.ID+"/revoke", nil))
		if *again.RevokedAt != *k.RevokedAt {
			t.Fatalf("second revoke moved revoked_at: %s then %s", *k.RevokedAt, *again.RevokedAt)
		}
		works(t, first.Key) // revoking the new key leaves the old one's grace alone
	})
	t.Run("rotate a revoked key", func(t *testing.T) {
		apitest.WantError(t, h.Admin(http.MethodPost, keys+"/"+rotated.ID+"/rotate", nil), http.StatusConflict, wire.CodeKeyNotActive)
	})
	t.Run("revoke unknown", func(t *testing.T) {
		apitest.WantError(t, h.Admin(http.MethodPost, keys+"/000000000000/revoke", nil), http.StatusNotFound, wire.CodeNotFound)
	})
	t.Run("client view counts keys", func(t *testing.T) {
		c := apitest.Data[admClient](t, h.Admin(http.MethodGet, "/admin/v1/clients/"+clientID, nil))
		if c.Keys == nil || c.Keys.Total != 3 || c.Keys.Active != 2 {
			t.Fatalf("keys %+v", c.Keys)
		}
	})
}

// TestKeyRotationGracePeriod: the old key works until the end of its grace
// period and is refused after it; the new key goes on working. The
// server's clock (which API keys expire on) stands still, so the grace
// period ends when the test moves it, however slow the machine.
func TestKeyRotationGracePeriod(t *testing.T) {
	t.Parallel()
	// A whole second: the database keeps microseconds.
	clock := apitest.StoppedAt(time.Now().Truncate(time.Second))
	h := apitest.New(t, apitest.Options{AdminToken: admToken, Clock: clock})
	clientID, old := admNewClient(t, h, "sandbox", "", gateway.ScopeWalletRead)
	const grace = 3 * time.Second

	rec := h.Admin(http.MethodPost, "/admin/v1/clients/"+clientID+"/keys/"+old.ID+"/rotate",
		map[string]any{"grace_period_seconds": int(grace / time.Second)})
	fresh := apitest.Data[admKey](t, rec)

	balance := func(key string) int {
		return h.Call(http.MethodGet, "/api/v1/wallet/balance", key, nil).Code
	}
	if st := balance(old.Key); st != http.StatusOK {
		t.Fatalf("old key refused (%d) at the start of a %s grace period", st, grace)
	}
	clock.Advance(grace - time.Microsecond)
	if st := balance(old.Key); st != http.StatusOK {
		t.Fatalf("old key refused (%d) a microsecond before its %s grace period ended", st, grace)
	}
	clock.Advance(time.Microsecond)
	apitest.WantError(t, h.Call(http.MethodGet, "/api/v1/wallet/balance", old.Key, nil), http.StatusUnauthorized, wire.CodeUnauthorized)
	if st := balance(fresh.Key); st != http.StatusOK {
		t.Fatalf("new key refused: %d", st)
	}
	k := apitest.Data[admKey](t, h.Admin(http.MethodGet, "/admin/v1/clients/"+clientID+"/keys/"+old.ID, nil))
	if k.Status != "expired" {
		t.Fatalf("old key status %s, want expired", k.Status)
	}
}

// TestAPIKeyStatuses: the /api/v1 authentication answers.
func TestAPIKeyStatuses(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{AdminToken: admToken,
		HostEnvironments: map[string]string{admSandboxHost: "sandbox", admProductionHost: "production"}})
	_, sandboxKey := admNewClient(t, h, "sandbox", "", gateway.AllScopes...)
	_, prodKey := admNewClient(t, h, "production", "", gateway.AllScopes...)
	_, readOnly := admNewClient(t, h, "sandbox", "", gateway.ScopeTransactionsRead, gateway.ScopeWalletRead)

	tests := []struct {
		name   string
		req    apitest.Request
		status int
		code   string
		// limited: the answer comes after authentication, so it carries
		// the rate-limit headers.
		limited bool
	}{
		{"no key", apitest.Request{Method: "GET", Path: "/api/v1/wallet/balance"}, 401, wire.CodeUnauthorized, false},
		{"unknown key", apitest.Request{Method: "GET", Path: "/api/v1/wallet/balance", Key: "pb_test_000000000000_nope"}, 401, wire.CodeUnauthorized, false},
		{"basic scheme", apitest.Request{Method: "GET", Path: "/api/v1/wallet/balance", Header: map[string]string{"Authorization": "Basic " + sandboxKey.Key}}, 401, wire.CodeUnauthorized, false},
		{"sandbox key at the production address", apitest.Request{Method: "GET", Path: "/api/v1/wallet/balance", Key: sandboxKey.Key, Host: admProductionHost}, 401, wire.CodeUnauthorized, false},
		{"production key at the sandbox address", apitest.Request{Method: "GET", Path: "/api/v1/wallet/balance", Key: prodKey.Key, Host: admSandboxHost}, 401, wire.CodeUnauthorized, false},
		{"production key at the production address", apitest.Request{Method: "GET", Path: "/api/v1/wallet/balance", Key: prodKey.Key, Host: admProductionHost + ":443"}, 200, "", true},
		{"read-only key launching a game", apitest.Request{Method: "POST", Path: "/api/v1/game/launch", Key: readOnly.Key,
			Body: map[string]any{"provider": "demo", "game_id": "demo-slot", "player_id": "p1", "currency": "EUR"}}, 403, wire.CodeForbidden, true},
		{"read-only key moving money", apitest.Request{Method: "POST", Path: "/api/v1/transactions", Key: readOnly.Key, Body: map[string]any{}}, 403, wire.CodeForbidden, true},
		{"bad request after authentication", apitest.Request{Method: "POST", Path: "/api/v1/transactions", Key: sandboxKey.Key, Body: "{"}, 400, wire.CodeInvalidJSON, true},
		{"unknown route after authentication", apitest.Request{Method: "GET", Path: "/api/v1/nothing", Key: sandboxKey.Key}, 404, wire.CodeNotFound, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := h.Do(tc.req)
			if tc.status == http.StatusOK {
				if rec.Code != http.StatusOK {
					t.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			} else {
				e := apitest.WantError(t, rec, tc.status, tc.code)
				if tc.status == http.StatusForbidden && e.Error.Details["scope"] == nil {
					t.Fatalf("403 without details.scope: %s", rec.Body)
				}
			}
			has := rec.Header().Get(api.HeaderRateRemaining) != "" && rec.Header().Get(api.HeaderRateReset) != ""
			if has != tc.limited {
				t.Fatalf("rate-limit headers present %v, want %v: %v", has, tc.limited, rec.Header())
			}
		})
	}
}

// TestAdminWebhooks: a client's webhook endpoints through the admin API,
// on the deliveries' own store.
func TestAdminWebhooks(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{AdminToken: admToken})
	clientID, key := admNewClient(t, h, "sandbox", "", gateway.ScopeDeliveriesRead)
	hooks := "/admin/v1/clients/" + clientID + "/webhooks"
	type hook struct {
		ID      string   `json:"id"`
		URL     string   `json:"url"`
		Kinds   []string `json:"kinds"`
		Enabled bool     `json:"enabled"`
		Secret  string   `json:"secret"`
	}

	created := apitest.Data[hook](t, h.Admin(http.MethodPost, hooks, map[string]any{"url": "https://hooks.example.com/a", "kinds": []string{"bet", "win"}}))
	if created.ID == "" || created.Secret == "" || !created.Enabled || len(created.Kinds) != 2 {
		t.Fatalf("created %+v", created)
	}
	t.Run("the client sees it", func(t *testing.T) {
		list := apitest.Data[[]hook](t, h.Call(http.MethodGet, "/api/v1/webhooks", key.Key, nil))
		if len(list) != 1 || list[0].ID != created.ID || list[0].Secret != "" {
			t.Fatalf("client's list %+v", list)
		}
	})
	t.Run("list and get", func(t *testing.T) {
		if list := apitest.Data[[]hook](t, h.Admin(http.MethodGet, hooks, nil)); len(list) != 1 || list[0].Secret != "" {
			t.Fatalf("list %+v", list)
		}
		if got := apitest.Data[hook](t, h.Admin(http.MethodGet, hooks+"/"+created.ID, nil)); got.URL != created.URL {
			t.Fatalf("get %+v", got)
		}
	})
	t.Run("update", func(t *testing.T) {
		got := apitest.Data[hook](t, h.Admin(http.MethodPatch, hooks+"/"+created.ID, map[string]any{"enabled": false, "kinds": []string{"*"}}))
		if got.Enabled || len(got.Kinds) != 1 || got.Kinds[0] != "*" {
			t.Fatalf("updated %+v", got)
		}
	})
	t.Run("bad requests", func(t *testing.T) {
		apitest.WantError(t, h.Admin(http.MethodPost, hooks, map[string]any{"url": "https://hooks.example.com/a", "kinds": []string{"nope"}}),
			http.StatusBadRequest, wire.CodeInvalidRequest)
		apitest.WantError(t, h.Admin(http.MethodPost, hooks, map[string]any{"kinds": []string{"bet"}}), http.StatusBadRequest, wire.CodeInvalidRequest)
		apitest.WantError(t, h.Admin(http.MethodPatch, hooks+"/"+created.ID, map[string]any{"url": "http://10.0.0.1/x"}),
			http.StatusBadRequest, wire.CodeInvalidRequest)
	})
	t.Run("unknown", func(t *testing.T) {
		apitest.WantError(t, h.Admin(http.MethodGet, "/admin/v1/clients/nobody/webhooks", nil), http.StatusNotFound, wire.CodeNotFound)
		apitest.WantError(t, h.Admin(http.MethodPost, "/admin/v1/clients/nobody/webhooks",
			map[string]any{"url": "https://hooks.example.com/a", "kinds": []string{"bet"}}), http.StatusNotFound, wire.CodeNotFound)
		apitest.WantError(t, h.Admin(http.MethodGet, hooks+"/wh_nothing", nil), http.StatusNotFound, wire.CodeNotFound)
	})
	t.Run("delete", func(t *testing.T) {
		apitest.Data[map[string]any](t, h.Admin(http.MethodDelete, hooks+"/"+created.ID, nil))
		apitest.WantError(t, h.Admin(http.MethodGet, hooks+"/"+created.ID, nil), http.StatusNotFound, wire.CodeNotFound)
		apitest.WantError(t, h.Admin(http.MethodDelete, hooks+"/"+created.ID, nil), http.StatusNotFound, wire.CodeNotFound)
	})
}
