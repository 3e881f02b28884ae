package api_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/gateway"
)

// TestPrivateCallbacksForSandboxClients is `make run`'s setting
// (PITBOSS_PRIVATE_CALLBACKS=sandbox, issue 17 item 14) over real HTTP: a
// sandbox client may point its callback URL and webhook endpoints at a
// receiver on loopback, through the client API and the admin API; a
// production client may not (400 naming the field), and link-local stays
// refused for the sandbox client too.
func TestPrivateCallbacksForSandboxClients(t *testing.T) {
	t.Parallel()
	const admin = "adm_private_sandbox_0123456789abcdef"
	const prodHost = "api.private-callbacks.test"
	h := apitest.New(t, apitest.Options{AdminToken: admin, Loopback: true, PrivateCallbacks: gateway.PrivateTargetsSandbox,
		HostEnvironments: map[string]string{prodHost: gateway.EnvironmentProduction}})
	h.AddClient("sbx", gateway.EnvironmentSandbox)
	h.AddClient("prod", gateway.EnvironmentProduction)
	sbxKey, _ := h.IssueKey("sbx", gateway.ScopeDeliveriesWrite)
	prodKey, _ := h.IssueKey("prod", gateway.ScopeDeliveriesWrite)
	const receiver = "http://127.0.0.1:9999/webhook"
	hook := func(url string) map[string]any { return map[string]any{"url": url, "kinds": []string{"*"}} }
	type endpoint struct {
		ID  string `json:"id"`
		URL string `json:"url"`
	}
	// prodCall calls the client API with the production key at the
	// production address.
	prodCall := func(method, path string, body any) *httptest.ResponseRecorder {
		return h.Do(apitest.Request{Method: method, Path: path, Key: prodKey, Body: body, Host: prodHost})
	}
	wantField := func(t *testing.T, e apitest.ErrorBody, field string) {
		t.Helper()
		if e.Error.Details["field"] != field {
			t.Fatalf("details %v, want field %s", e.Error.Details, field)
		}
	}

	t.Run("sandbox client", func(t *testing.T) {
		// client API: create, and move an endpoint to loopback
		id := apitest.Data[endpoint](t, h.Call(http.MethodPost, "/api/v1/webhooks", sbxKey, hook(receiver))).ID
		apitest.Expect(t, h.Call(http.MethodPatch, "/api/v1/webhooks/"+id, sbxKey,
			map[string]any{"url": "http://localhost:9999/moved"}), http.StatusOK, "")
		// admin API: the callback URL and an endpoint
		apitest.Expect(t, h.Admin(http.MethodPatch, "/admin/v1/clients/sbx",
			map[string]any{"forward_callback_url": "http://127.0.0.1:9999/callback"}), http.StatusOK, "")
		id = apitest.Data[endpoint](t, h.Admin(http.MethodPost, "/admin/v1/clients/sbx/webhooks", hook(receiver))).ID
		apitest.Expect(t, h.Admin(http.MethodPatch, "/admin/v1/clients/sbx/webhooks/"+id,
			map[string]any{"url": "http://[::1]:9999/webhook"}), http.StatusOK, "")
		// the metadata address stays out of reach
		wantField(t, apitest.WantError(t, h.Call(http.MethodPost, "/api/v1/webhooks", sbxKey,
			hook("http://169.254.169.254/latest/meta-data/")), http.StatusBadRequest, wire.CodeInvalidRequest), "url")
		wantField(t, apitest.WantError(t, h.Admin(http.MethodPatch, "/admin/v1/clients/sbx",
			map[string]any{"forward_callback_url": "http://[::ffff:a9fe:a9fe]/"}), http.StatusBadRequest, wire.CodeInvalidRequest),
			"forward_callback_url")
	})

	t.Run("production client", func(t *testing.T) {
		wantField(t, apitest.WantError(t, prodCall(http.MethodPost, "/api/v1/webhooks", hook(receiver)),
			http.StatusBadRequest, wire.CodeInvalidRequest), "url")
		wantField(t, apitest.WantError(t, h.Admin(http.MethodPost, "/admin/v1/clients/prod/webhooks", hook(receiver)),
			http.StatusBadRequest, wire.CodeInvalidRequest), "url")
		wantField(t, apitest.WantError(t, h.Admin(http.MethodPatch, "/admin/v1/clients/prod",
			map[string]any{"forward_callback_url": "http://127.0.0.1:9999/callback"}), http.StatusBadRequest, wire.CodeInvalidRequest),
			"forward_callback_url")
		// a public endpoint cannot be moved to loopback either
		id := apitest.Data[endpoint](t, prodCall(http.MethodPost, "/api/v1/webhooks", hook("https://hooks.example.com/in"))).ID
		wantField(t, apitest.WantError(t, prodCall(http.MethodPatch, "/api/v1/webhooks/"+id,
			map[string]any{"url": receiver}), http.StatusBadRequest, wire.CodeInvalidRequest), "url")
		wantField(t, apitest.WantError(t, h.Admin(http.MethodPatch, "/admin/v1/clients/prod/webhooks/"+id,
			map[string]any{"url": receiver}), http.StatusBadRequest, wire.CodeInvalidRequest), "url")
		// nothing was stored
		if e := apitest.Data[endpoint](t, h.Admin(http.MethodGet, "/admin/v1/clients/prod/webhooks/"+id, nil)); e.URL != "https://hooks.example.com/in" {
			t.Fatalf("endpoint url %q after refused updates", e.URL)
		}
	})
}
