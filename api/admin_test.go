package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/internal/eventually"
)

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
	h := newAdmHarness(t, admOptions{adminToken: admToken})
	_, key := h.newClient("sandbox", "", gateway.ScopeWalletRead)

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
			rec := h.do(admReq{method: http.MethodGet, path: "/admin/v1/clients", token: tc.token})
			wantAdmError(t, rec, tc.status, tc.code)
		})
	}
	t.Run("the admin token", func(t *testing.T) {
		admData[[]admClient](t, h.admin(http.MethodGet, "/admin/v1/clients", nil))
	})
	t.Run("unknown admin route", func(t *testing.T) {
		wantAdmError(t, h.admin(http.MethodGet, "/admin/v1/nothing-here", nil), http.StatusNotFound, wire.CodeNotFound)
	})
	t.Run("the admin token is not an API key", func(t *testing.T) {
		rec := h.call(http.MethodGet, "/api/v1/usage", admToken, nil)
		wantAdmError(t, rec, http.StatusUnauthorized, wire.CodeUnauthorized)
	})

	t.Run("disabled without a token", func(t *testing.T) {
		off := newAdmHarnessOn(t, h.pool, admOptions{})
		for _, tok := range []string{"", admToken} {
			rec := off.do(admReq{method: http.MethodGet, path: "/admin/v1/clients", token: tok})
			e := wantAdmError(t, rec, http.StatusNotFound, wire.CodeNotFound)
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
	h := newAdmHarness(t, admOptions{adminToken: admToken, tiers: "sandbox:100/60s,standard:1000/60s,enterprise:10000/60s"})
	id := admUID("acme")
	create := map[string]any{"id": id, "name": "Acme Casino", "environment": "production", "plan": "enterprise"}

	t.Run("create", func(t *testing.T) {
		c := admData[admClient](t, h.admin(http.MethodPost, "/admin/v1/clients", create))
		if c.ID != id || c.Name != "Acme Casino" || c.Environment != "production" || c.Plan != "enterprise" ||
			c.Created == nil || !*c.Created || c.RateLimit.Limit != 10000 || c.RateLimit.WindowSeconds != 60 {
			t.Fatalf("created %+v", c)
		}
	})
	t.Run("create again with the same settings", func(t *testing.T) {
		c := admData[admClient](t, h.admin(http.MethodPost, "/admin/v1/clients", create))
		if c.Created == nil || *c.Created || c.ID != id {
			t.Fatalf("repeat %+v, want the existing client with created false", c)
		}
	})
	t.Run("create the id with other settings", func(t *testing.T) {
		body := map[string]any{"id": id, "name": "Acme Casino", "environment": "sandbox", "plan": "enterprise"}
		e := wantAdmError(t, h.admin(http.MethodPost, "/admin/v1/clients", body), http.StatusConflict, wire.CodeClientExists)
		if e.Error.Details["field"] != "environment" || e.Error.Details["existing"] != "production" {
			t.Fatalf("details %v", e.Error.Details)
		}
	})
	t.Run("default plan", func(t *testing.T) {
		c := admData[admClient](t, h.admin(http.MethodPost, "/admin/v1/clients",
			map[string]any{"id": admUID("dflt"), "name": "D", "environment": "sandbox"}))
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
		{"no name", map[string]any{"id": admUID("x"), "environment": "sandbox"}, "name", wire.CodeInvalidRequest},
		{"bad environment", map[string]any{"id": admUID("x"), "name": "x", "environment": "staging"}, "environment", wire.CodeInvalidRequest},
		{"unknown plan", map[string]any{"id": admUID("x"), "name": "x", "environment": "sandbox", "plan": "gold"}, "plan", wire.CodeInvalidRequest},
		{"unknown field", map[string]any{"id": admUID("x"), "name": "x", "environment": "sandbox", "tier": "gold"}, "tier", wire.CodeInvalidRequest},
		{"not JSON", "{", "", wire.CodeInvalidJSON},
	}
	for _, tc := range bad {
		t.Run("create: "+tc.name, func(t *testing.T) {
			e := wantAdmError(t, h.admin(http.MethodPost, "/admin/v1/clients", tc.body), http.StatusBadRequest, tc.code)
			if tc.field != "" && e.Error.Details["field"] != tc.field {
				t.Fatalf("details.field %v, want %s", e.Error.Details["field"], tc.field)
			}
		})
	}

	t.Run("list with pagination", func(t *testing.T) {
		rec := h.admin(http.MethodGet, "/admin/v1/clients?per_page=1&page=1", nil)
		page := admDecode[struct {
			Data       []admClient `json:"data"`
			Pagination struct{ Page, PerPage, Total int }
		}](t, rec)
		if rec.Code != http.StatusOK || len(page.Data) != 1 || page.Pagination.Total != 2 {
			t.Fatalf("page %s", rec.Body)
		}
		wantAdmError(t, h.admin(http.MethodGet, "/admin/v1/clients?per_page=0", nil), http.StatusBadRequest, wire.CodeInvalidRequest)
	})
	t.Run("get", func(t *testing.T) {
		c := admData[admClient](t, h.admin(http.MethodGet, "/admin/v1/clients/"+id, nil))
		if c.ID != id || c.SignedLaunch == nil || !c.SignedLaunch.SignatureRequired || c.SignedLaunch.RequireSignature != nil ||
			c.ForwardCallback == nil || c.ForwardCallback.URL != "" || c.Keys == nil || c.Keys.Total != 0 {
			t.Fatalf("client %s", h.admin(http.MethodGet, "/admin/v1/clients/"+id, nil).Body)
		}
	})
	t.Run("get unknown", func(t *testing.T) {
		wantAdmError(t, h.admin(http.MethodGet, "/admin/v1/clients/nobody", nil), http.StatusNotFound, wire.CodeNotFound)
		wantAdmError(t, h.admin(http.MethodGet, "/admin/v1/clients/bad:id", nil), http.StatusNotFound, wire.CodeNotFound)
	})

	t.Run("update every setting", func(t *testing.T) {
		patch := map[string]any{
			"name": "Acme Casino Ltd", "plan": "standard", "forward_callback_url": "https://acme.example.com/pitboss",
			"require_signature": false, "ip_allow_list": []string{"203.0.113.0/24", "198.51.100.7"},
			"allowed_return_hosts": []string{"Casino.Example.com"}, "default_currency": "eur",
		}
		c := admData[admClient](t, h.admin(http.MethodPatch, "/admin/v1/clients/"+id, patch))
		sl, fc := c.SignedLaunch, c.ForwardCallback
		if c.Name != "Acme Casino Ltd" || c.Plan != "standard" || c.RateLimit.Limit != 1000 ||
			fc == nil || fc.URL != "https://acme.example.com/pitboss" ||
			sl == nil || sl.RequireSignature == nil || *sl.RequireSignature || sl.SignatureRequired ||
			strings.Join(sl.IPAllowList, ",") != "203.0.113.0/24,198.51.100.7/32" ||
			strings.Join(sl.AllowedReturnHosts, ",") != "casino.example.com" || sl.DefaultCurrency != "EUR" {
			t.Fatalf("updated %+v %+v %+v", c, sl, fc)
		}
		// a GET reads the same back from the stores
		again := admData[admClient](t, h.admin(http.MethodGet, "/admin/v1/clients/"+id, nil))
		if again.Plan != "standard" || again.ForwardCallback.URL != fc.URL || len(again.SignedLaunch.IPAllowList) != 2 {
			t.Fatalf("read back %+v", again)
		}
	})
	t.Run("update: a partial patch keeps the rest; null restores the default", func(t *testing.T) {
		c := admData[admClient](t, h.admin(http.MethodPatch, "/admin/v1/clients/"+id,
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
		{"return host", "", wire.CodeInvalidRequest, map[string]any{"allowed_return_hosts": []string{"a/b"}}},
	}
	for _, tc := range badPatch {
		t.Run("update: bad "+tc.name, func(t *testing.T) {
			e := wantAdmError(t, h.admin(http.MethodPatch, "/admin/v1/clients/"+id, tc.body), http.StatusBadRequest, tc.code)
			if tc.field != "" && e.Error.Details["field"] != tc.field {
				t.Fatalf("details %v, want field %s", e.Error.Details, tc.field)
			}
		})
	}
	t.Run("update unknown client", func(t *testing.T) {
		wantAdmError(t, h.admin(http.MethodPatch, "/admin/v1/clients/nobody", map[string]any{"plan": "standard"}),
			http.StatusNotFound, wire.CodeNotFound)
	})

	t.Run("client secret", func(t *testing.T) {
		got := admData[map[string]string](t, h.admin(http.MethodPost, "/admin/v1/clients/"+id+"/client-secret", nil))
		if !strings.HasPrefix(got["client_secret"], "pbcs_") {
			t.Fatalf("client secret %v", got)
		}
		c := admData[admClient](t, h.admin(http.MethodGet, "/admin/v1/clients/"+id, nil))
		if !c.SignedLaunch.ClientSecretSet {
			t.Fatal("client_secret_set false after issuing one")
		}
		wantAdmError(t, h.admin(http.MethodPost, "/admin/v1/clients/nobody/client-secret", nil), http.StatusNotFound, wire.CodeNotFound)
	})
	t.Run("tiers", func(t *testing.T) {
		got := admData[struct {
			Tiers []struct {
				Tier  string `json:"tier"`
				Limit int    `json:"limit"`
			} `json:"tiers"`
			DefaultTier string `json:"default_tier"`
		}](t, h.admin(http.MethodGet, "/admin/v1/tiers", nil))
		if len(got.Tiers) != 3 || got.Tiers[0].Tier != "sandbox" || got.Tiers[0].Limit != 100 || got.DefaultTier != "standard" {
			t.Fatalf("tiers %+v", got)
		}
	})
}

// TestAdminKeys covers issue, list, get, rotate and revoke with every
// status they answer, and what each does to authentication.
func TestAdminKeys(t *testing.T) {
	t.Parallel()
	h := newAdmHarness(t, admOptions{adminToken: admToken})
	clientID, first := h.newClient("sandbox", "", gateway.ScopeWalletRead, gateway.ScopeTransactionsRead)
	other, otherKey := h.newClient("sandbox", "", gateway.ScopeWalletRead)
	keys := "/admin/v1/clients/" + clientID + "/keys"

	works := func(t *testing.T, key string) {
		t.Helper()
		if rec := h.call(http.MethodGet, "/api/v1/wallet/balance", key, nil); rec.Code != http.StatusOK {
			t.Fatalf("key refused: %d %s", rec.Code, rec.Body)
		}
	}
	refused := func(t *testing.T, key string) {
		t.Helper()
		wantAdmError(t, h.call(http.MethodGet, "/api/v1/wallet/balance", key, nil), http.StatusUnauthorized, wire.CodeUnauthorized)
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
		k := admData[admKey](t, h.admin(http.MethodPost, keys,
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
			e := wantAdmError(t, h.admin(http.MethodPost, keys, tc.body), http.StatusBadRequest, wire.CodeInvalidRequest)
			if e.Error.Details["field"] != tc.field {
				t.Fatalf("details %v", e.Error.Details)
			}
		})
	}
	t.Run("issue for an unknown client", func(t *testing.T) {
		wantAdmError(t, h.admin(http.MethodPost, "/admin/v1/clients/nobody/keys", map[string]any{"scopes": []string{"launch"}}),
			http.StatusNotFound, wire.CodeNotFound)
	})

	t.Run("list never shows a key", func(t *testing.T) {
		rec := h.admin(http.MethodGet, keys, nil)
		list := admData[[]admKey](t, rec)
		if len(list) != 2 || strings.Contains(rec.Body.String(), first.Key) || strings.Contains(rec.Body.String(), `"key":`) {
			t.Fatalf("list %s", rec.Body)
		}
		for _, k := range list {
			if k.Prefix == "" || k.CreatedAt == "" || k.Status != "active" {
				t.Fatalf("listed key %+v", k)
			}
		}
		wantAdmError(t, h.admin(http.MethodGet, "/admin/v1/clients/nobody/keys", nil), http.StatusNotFound, wire.CodeNotFound)
	})
	t.Run("last used appears after a usage flush", func(t *testing.T) {
		works(t, first.Key)
		if err := h.meter.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		k := admData[admKey](t, h.admin(http.MethodGet, keys+"/"+first.ID, nil))
		if k.LastUsedAt == nil {
			t.Fatalf("last_used_at missing: %+v", k)
		}
	})
	t.Run("get", func(t *testing.T) {
		k := admData[admKey](t, h.admin(http.MethodGet, keys+"/"+first.ID, nil))
		if k.ID != first.ID || k.Key != "" {
			t.Fatalf("got %+v", k)
		}
		wantAdmError(t, h.admin(http.MethodGet, keys+"/000000000000", nil), http.StatusNotFound, wire.CodeNotFound)
		// another client's key is not found under this client
		wantAdmError(t, h.admin(http.MethodGet, keys+"/"+otherKey.ID, nil), http.StatusNotFound, wire.CodeNotFound)
	})

	var rotated admKey
	t.Run("rotate", func(t *testing.T) {
		rec := h.admin(http.MethodPost, keys+"/"+first.ID+"/rotate", nil) // no body: default grace
		got := admData[struct {
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
		wantAdmError(t, h.admin(http.MethodPost, keys+"/"+first.ID+"/rotate", nil), http.StatusConflict, wire.CodeKeyAlreadyRotated)
	})
	t.Run("rotate: bad grace", func(t *testing.T) {
		e := wantAdmError(t, h.admin(http.MethodPost, keys+"/"+rotated.ID+"/rotate", map[string]any{"grace_period_seconds": -1}),
			http.StatusBadRequest, wire.CodeInvalidRequest)
		if e.Error.Details["field"] != "grace_period_seconds" {
			t.Fatalf("details %v", e.Error.Details)
		}
		wantAdmError(t, h.admin(http.MethodPost, keys+"/"+rotated.ID+"/rotate", map[string]any{"grace_period_seconds": 31 * 86400}),
			http.StatusBadRequest, wire.CodeInvalidRequest)
	})
	t.Run("rotate unknown", func(t *testing.T) {
		wantAdmError(t, h.admin(http.MethodPost, keys+"/000000000000/rotate", nil), http.StatusNotFound, wire.CodeNotFound)
		wantAdmError(t, h.admin(http.MethodPost, "/admin/v1/clients/"+other+"/keys/"+first.ID+"/rotate", nil),
			http.StatusNotFound, wire.CodeNotFound)
	})

	t.Run("revoke", func(t *testing.T) {
		k := admData[admKey](t, h.admin(http.MethodPost, keys+"/"+rotated.ID+"/revoke", nil))
		if k.Status != "revoked" || k.RevokedAt == nil {
			t.Fatalf("revoked %+v", k)
		}
		refused(t, rotated.Key)
		again := admData[admKey](t, h.admin(http.MethodPost, keys+"/"+rotated.ID+"/revoke", nil))
		if *again.RevokedAt != *k.RevokedAt {
			t.Fatalf("second revoke moved revoked_at: %s then %s", *k.RevokedAt, *again.RevokedAt)
		}
		works(t, first.Key) // revoking the new key leaves the old one's grace alone
	})
	t.Run("rotate a revoked key", func(t *testing.T) {
		wantAdmError(t, h.admin(http.MethodPost, keys+"/"+rotated.ID+"/rotate", nil), http.StatusConflict, wire.CodeKeyNotActive)
	})
	t.Run("revoke unknown", func(t *testing.T) {
		wantAdmError(t, h.admin(http.MethodPost, keys+"/000000000000/revoke", nil), http.StatusNotFound, wire.CodeNotFound)
	})
	t.Run("client view counts keys", func(t *testing.T) {
		c := admData[admClient](t, h.admin(http.MethodGet, "/admin/v1/clients/"+clientID, nil))
		if c.Keys == nil || c.Keys.Total != 3 || c.Keys.Active != 2 {
			t.Fatalf("keys %+v", c.Keys)
		}
	})
}

// TestKeyRotationGracePeriod: the old key works until the end of its grace
// period and is refused after it; the new key goes on working.
func TestKeyRotationGracePeriod(t *testing.T) {
	t.Parallel()
	h := newAdmHarness(t, admOptions{adminToken: admToken})
	clientID, old := h.newClient("sandbox", "", gateway.ScopeWalletRead)
	const grace = 3 * time.Second

	before := time.Now()
	rec := h.admin(http.MethodPost, "/admin/v1/clients/"+clientID+"/keys/"+old.ID+"/rotate",
		map[string]any{"grace_period_seconds": int(grace / time.Second)})
	fresh := admData[admKey](t, rec)

	balance := func(key string) int {
		return h.call(http.MethodGet, "/api/v1/wallet/balance", key, nil).Code
	}
	if st := balance(old.Key); st != http.StatusOK {
		// Only a machine stalled for the whole grace period could get here.
		if time.Since(before) < grace {
			t.Fatalf("old key refused (%d) %s into a %s grace period", st, time.Since(before), grace)
		}
	}
	eventually.True(t, 60*time.Second, "the old key to be refused after its grace period", func() bool {
		return balance(old.Key) != http.StatusOK
	})
	if since := time.Since(before); since < grace-100*time.Millisecond {
		t.Fatalf("old key refused after %s, before its grace period of %s ended", since, grace)
	}
	wantAdmError(t, h.call(http.MethodGet, "/api/v1/wallet/balance", old.Key, nil), http.StatusUnauthorized, wire.CodeUnauthorized)
	if st := balance(fresh.Key); st != http.StatusOK {
		t.Fatalf("new key refused: %d", st)
	}
	k := admData[admKey](t, h.admin(http.MethodGet, "/admin/v1/clients/"+clientID+"/keys/"+old.ID, nil))
	if k.Status != "expired" {
		t.Fatalf("old key status %s, want expired", k.Status)
	}
}

// TestAPIKeyStatuses: the /api/v1 authentication answers.
func TestAPIKeyStatuses(t *testing.T) {
	t.Parallel()
	h := newAdmHarness(t, admOptions{adminToken: admToken})
	_, sandboxKey := h.newClient("sandbox", "", gateway.AllScopes...)
	_, prodKey := h.newClient("production", "", gateway.AllScopes...)
	_, readOnly := h.newClient("sandbox", "", gateway.ScopeTransactionsRead, gateway.ScopeWalletRead)

	tests := []struct {
		name   string
		req    admReq
		status int
		code   string
		// limited: the answer comes after authentication, so it carries
		// the rate-limit headers.
		limited bool
	}{
		{"no key", admReq{method: "GET", path: "/api/v1/wallet/balance"}, 401, wire.CodeUnauthorized, false},
		{"unknown key", admReq{method: "GET", path: "/api/v1/wallet/balance", token: "pb_test_000000000000_nope"}, 401, wire.CodeUnauthorized, false},
		{"basic scheme", admReq{method: "GET", path: "/api/v1/wallet/balance", header: map[string]string{"Authorization": "Basic " + sandboxKey.Key}}, 401, wire.CodeUnauthorized, false},
		{"sandbox key at the production address", admReq{method: "GET", path: "/api/v1/wallet/balance", token: sandboxKey.Key, host: admProductionHost}, 401, wire.CodeUnauthorized, false},
		{"production key at the sandbox address", admReq{method: "GET", path: "/api/v1/wallet/balance", token: prodKey.Key, host: admSandboxHost}, 401, wire.CodeUnauthorized, false},
		{"production key at the production address", admReq{method: "GET", path: "/api/v1/wallet/balance", token: prodKey.Key, host: admProductionHost + ":443"}, 200, "", true},
		{"read-only key launching a game", admReq{method: "POST", path: "/api/v1/game/launch", token: readOnly.Key,
			body: map[string]any{"provider": "demo", "game_id": "demo-slot", "player_id": "p1", "currency": "EUR"}}, 403, wire.CodeForbidden, true},
		{"read-only key moving money", admReq{method: "POST", path: "/api/v1/transactions", token: readOnly.Key, body: map[string]any{}}, 403, wire.CodeForbidden, true},
		{"bad request after authentication", admReq{method: "POST", path: "/api/v1/transactions", token: sandboxKey.Key, body: "{"}, 400, wire.CodeInvalidJSON, true},
		{"unknown route after authentication", admReq{method: "GET", path: "/api/v1/nothing", token: sandboxKey.Key}, 404, wire.CodeNotFound, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := h.do(tc.req)
			if tc.status == http.StatusOK {
				if rec.Code != http.StatusOK {
					t.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			} else {
				e := wantAdmError(t, rec, tc.status, tc.code)
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
	h := newAdmHarness(t, admOptions{adminToken: admToken})
	clientID, key := h.newClient("sandbox", "", gateway.ScopeDeliveriesRead)
	hooks := "/admin/v1/clients/" + clientID + "/webhooks"
	type hook struct {
		ID      string   `json:"id"`
		URL     string   `json:"url"`
		Kinds   []string `json:"kinds"`
		Enabled bool     `json:"enabled"`
		Secret  string   `json:"secret"`
	}

	created := admData[hook](t, h.admin(http.MethodPost, hooks, map[string]any{"url": "https://hooks.example.com/a", "kinds": []string{"bet", "win"}}))
	if created.ID == "" || created.Secret == "" || !created.Enabled || len(created.Kinds) != 2 {
		t.Fatalf("created %+v", created)
	}
	t.Run("the client sees it", func(t *testing.T) {
		list := admData[[]hook](t, h.call(http.MethodGet, "/api/v1/webhooks", key.Key, nil))
		if len(list) != 1 || list[0].ID != created.ID || list[0].Secret != "" {
			t.Fatalf("client's list %+v", list)
		}
	})
	t.Run("list and get", func(t *testing.T) {
		if list := admData[[]hook](t, h.admin(http.MethodGet, hooks, nil)); len(list) != 1 || list[0].Secret != "" {
			t.Fatalf("list %+v", list)
		}
		if got := admData[hook](t, h.admin(http.MethodGet, hooks+"/"+created.ID, nil)); got.URL != created.URL {
			t.Fatalf("get %+v", got)
		}
	})
	t.Run("update", func(t *testing.T) {
		got := admData[hook](t, h.admin(http.MethodPatch, hooks+"/"+created.ID, map[string]any{"enabled": false, "kinds": []string{"*"}}))
		if got.Enabled || len(got.Kinds) != 1 || got.Kinds[0] != "*" {
			t.Fatalf("updated %+v", got)
		}
	})
	t.Run("bad requests", func(t *testing.T) {
		wantAdmError(t, h.admin(http.MethodPost, hooks, map[string]any{"url": "https://hooks.example.com/a", "kinds": []string{"nope"}}),
			http.StatusBadRequest, wire.CodeInvalidRequest)
		wantAdmError(t, h.admin(http.MethodPost, hooks, map[string]any{"kinds": []string{"bet"}}), http.StatusBadRequest, wire.CodeInvalidRequest)
		wantAdmError(t, h.admin(http.MethodPatch, hooks+"/"+created.ID, map[string]any{"url": "http://10.0.0.1/x"}),
			http.StatusBadRequest, wire.CodeInvalidRequest)
	})
	t.Run("unknown", func(t *testing.T) {
		wantAdmError(t, h.admin(http.MethodGet, "/admin/v1/clients/nobody/webhooks", nil), http.StatusNotFound, wire.CodeNotFound)
		wantAdmError(t, h.admin(http.MethodPost, "/admin/v1/clients/nobody/webhooks",
			map[string]any{"url": "https://hooks.example.com/a", "kinds": []string{"bet"}}), http.StatusNotFound, wire.CodeNotFound)
		wantAdmError(t, h.admin(http.MethodGet, hooks+"/wh_nothing", nil), http.StatusNotFound, wire.CodeNotFound)
	})
	t.Run("delete", func(t *testing.T) {
		admData[map[string]any](t, h.admin(http.MethodDelete, hooks+"/"+created.ID, nil))
		wantAdmError(t, h.admin(http.MethodGet, hooks+"/"+created.ID, nil), http.StatusNotFound, wire.CodeNotFound)
		wantAdmError(t, h.admin(http.MethodDelete, hooks+"/"+created.ID, nil), http.StatusNotFound, wire.CodeNotFound)
	})
}
