package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
)

type dvWebhook struct {
	ID          string   `json:"id"`
	URL         string   `json:"url"`
	Kinds       []string `json:"kinds"`
	Description string   `json:"description"`
	Enabled     bool     `json:"enabled"`
	CreatedAt   string   `json:"created_at"`
	Secret      *string  `json:"secret"`
}

func (h *dvFixture) webhookOf(env apitest.Envelope) dvWebhook {
	h.t.Helper()
	var w dvWebhook
	if err := json.Unmarshal(env.Data, &w); err != nil {
		h.t.Fatal(err)
	}
	return w
}

func TestWebhookEndpoints(t *testing.T) {
	t.Parallel()
	h := newDVFixture(t)

	t.Run("create", func(t *testing.T) {
		tests := []struct {
			name   string
			key    string
			body   string
			status int
			code   string
			field  string
		}{
			{"a valid endpoint", h.full, `{"url":"https://hooks.acme.example/pitboss","kinds":["bet","win","bet"],"description":"ledger"}`, 200, "", ""},
			{"every kind", h.full, `{"url":"https://hooks.acme.example/all","kinds":["*"]}`, 200, "", ""},
			{"no url", h.full, `{"kinds":["bet"]}`, 400, wire.CodeInvalidRequest, "url"},
			{"not http", h.full, `{"url":"ftp://hooks.acme.example","kinds":["bet"]}`, 400, wire.CodeInvalidRequest, "url"},
			{"relative", h.full, `{"url":"/hooks","kinds":["bet"]}`, 400, wire.CodeInvalidRequest, "url"},
			{"credentials", h.full, `{"url":"https://u:p@hooks.acme.example","kinds":["bet"]}`, 400, wire.CodeInvalidRequest, "url"},
			{"loopback", h.full, `{"url":"http://127.0.0.1:9000/hook","kinds":["bet"]}`, 400, wire.CodeInvalidRequest, "url"},
			{"localhost", h.full, `{"url":"http://localhost/hook","kinds":["bet"]}`, 400, wire.CodeInvalidRequest, "url"},
			{"link-local (cloud metadata)", h.full, `{"url":"http://169.254.169.254/latest","kinds":["bet"]}`, 400, wire.CodeInvalidRequest, "url"},
			{"private", h.full, `{"url":"https://10.0.0.7/hook","kinds":["bet"]}`, 400, wire.CodeInvalidRequest, "url"},
			{"no kinds", h.full, `{"url":"https://hooks.acme.example","kinds":[]}`, 400, wire.CodeInvalidRequest, "kinds"},
			{"unknown kind", h.full, `{"url":"https://hooks.acme.example","kinds":["jackpot"]}`, 400, wire.CodeInvalidRequest, "kinds"},
			{"description too long", h.full, `{"url":"https://hooks.acme.example","kinds":["bet"],"description":"` + strings.Repeat("x", 257) + `"}`, 400, wire.CodeInvalidRequest, "description"},
			{"unknown field", h.full, `{"url":"https://hooks.acme.example","kinds":["bet"],"secret":"mine"}`, 400, wire.CodeInvalidRequest, "secret"},
			{"not JSON", h.full, `{"url":`, 400, wire.CodeInvalidJSON, ""},
			{"without a key", "", `{"url":"https://hooks.acme.example","kinds":["bet"]}`, 401, wire.CodeUnauthorized, ""},
			{"with a read-only key", h.readOnly, `{"url":"https://hooks.acme.example","kinds":["bet"]}`, 403, wire.CodeForbidden, ""},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				env := apitest.Expect(t, h.Call("POST", "/api/v1/webhooks", tc.key, tc.body), tc.status, tc.code)
				if tc.field != "" && env.Error.Details["field"] != tc.field {
					t.Fatalf("details %v, want field %s", env.Error.Details, tc.field)
				}
				if tc.code != "" {
					return
				}
				w := h.webhookOf(env)
				if w.Secret == nil || !strings.HasPrefix(*w.Secret, "whsec_") || !w.Enabled || !strings.HasPrefix(w.ID, "wh_") {
					t.Fatalf("created %s: want an id, enabled, and the secret once", env.Data)
				}
				if tc.name == "a valid endpoint" && strings.Join(w.Kinds, ",") != "bet,win" {
					t.Fatalf("kinds %v: want duplicates dropped", w.Kinds)
				}
			})
		}
	})

	created := h.webhookOf(apitest.Expect(t, h.Call("POST", "/api/v1/webhooks", h.full,
		`{"url":"https://hooks.acme.example/x","kinds":["deposit"]}`), 200, ""))
	otherHook := h.webhookOf(apitest.Expect(t, h.Call("POST", "/api/v1/webhooks", h.other,
		`{"url":"https://hooks.other.example/x","kinds":["bet"]}`), 200, ""))

	t.Run("list and get never show the secret", func(t *testing.T) {
		env := apitest.Expect(t, h.Call("GET", "/api/v1/webhooks", h.readOnly, ""), 200, "")
		if strings.Contains(string(env.Data), "whsec_") || strings.Contains(string(env.Data), otherHook.ID) {
			t.Fatalf("list %s: a secret or another client's endpoint", env.Data)
		}
		var list []dvWebhook
		_ = json.Unmarshal(env.Data, &list)
		if len(list) != 3 {
			t.Fatalf("%d endpoints, want 3", len(list))
		}
		got := h.webhookOf(apitest.Expect(t, h.Call("GET", "/api/v1/webhooks/"+created.ID, h.readOnly, ""), 200, ""))
		if got.Secret != nil || got.URL != "https://hooks.acme.example/x" {
			t.Fatalf("get %+v", got)
		}
	})

	for _, tc := range []struct {
		name, method, path, key, body string
		status                        int
		code                          string
	}{
		{"list without a key", "GET", "/api/v1/webhooks", "", "", 401, wire.CodeUnauthorized},
		{"list without the scope", "GET", "/api/v1/webhooks", h.none, "", 403, wire.CodeForbidden},
		{"get an unknown endpoint", "GET", "/api/v1/webhooks/wh_nope", h.full, "", 404, wire.CodeNotFound},
		{"get another client's endpoint", "GET", "/api/v1/webhooks/" + otherHook.ID, h.full, "", 404, wire.CodeNotFound},
		{"update an unknown endpoint", "PATCH", "/api/v1/webhooks/wh_nope", h.full, `{"enabled":false}`, 404, wire.CodeNotFound},
		{"update with an unknown kind", "PATCH", "/api/v1/webhooks/" + created.ID, h.full, `{"kinds":["jackpot"]}`, 400, wire.CodeInvalidRequest},
		{"update to a private url", "PATCH", "/api/v1/webhooks/" + created.ID, h.full, `{"url":"http://[::1]/x"}`, 400, wire.CodeInvalidRequest},
		{"update with a read-only key", "PATCH", "/api/v1/webhooks/" + created.ID, h.readOnly, `{"enabled":false}`, 403, wire.CodeForbidden},
		{"rotate an unknown endpoint's secret", "POST", "/api/v1/webhooks/wh_nope/rotate-secret", h.full, "", 404, wire.CodeNotFound},
		{"delete another client's endpoint", "DELETE", "/api/v1/webhooks/" + otherHook.ID, h.full, "", 404, wire.CodeNotFound},
		{"delete without a key", "DELETE", "/api/v1/webhooks/" + created.ID, "", "", 401, wire.CodeUnauthorized},
		{"rotate the callback secret with a read-only key", "POST", "/api/v1/forward-callback/rotate-secret", h.readOnly, "", 403, wire.CodeForbidden},
		{"forward callback without a key", "GET", "/api/v1/forward-callback", "", "", 401, wire.CodeUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) { apitest.Expect(t, h.Call(tc.method, tc.path, tc.key, tc.body), tc.status, tc.code) })
	}

	t.Run("update changes the given fields only", func(t *testing.T) {
		got := h.webhookOf(apitest.Expect(t, h.Call("PATCH", "/api/v1/webhooks/"+created.ID, h.full,
			`{"kinds":["deposit","withdrawal"],"enabled":false}`), 200, ""))
		if got.URL != created.URL || got.Enabled || strings.Join(got.Kinds, ",") != "deposit,withdrawal" {
			t.Fatalf("updated %+v", got)
		}
	})

	t.Run("rotate gives a new secret", func(t *testing.T) {
		env := apitest.Expect(t, h.Call("POST", "/api/v1/webhooks/"+created.ID+"/rotate-secret", h.full, ""), 200, "")
		var r struct{ ID, Secret string }
		_ = json.Unmarshal(env.Data, &r)
		if r.ID != created.ID || !strings.HasPrefix(r.Secret, "whsec_") || r.Secret == *created.Secret {
			t.Fatalf("rotate %s", env.Data)
		}
	})

	t.Run("delete", func(t *testing.T) {
		apitest.Expect(t, h.Call("DELETE", "/api/v1/webhooks/"+created.ID, h.full, ""), 200, "")
		apitest.Expect(t, h.Call("GET", "/api/v1/webhooks/"+created.ID, h.full, ""), 404, wire.CodeNotFound)
		apitest.Expect(t, h.Call("DELETE", "/api/v1/webhooks/"+created.ID, h.full, ""), 404, wire.CodeNotFound)
	})

	t.Run("forward callback setting and its secret", func(t *testing.T) {
		env := apitest.Expect(t, h.Call("GET", "/api/v1/forward-callback", h.readOnly, ""), 200, "")
		if !strings.Contains(string(env.Data), `"url":"https://acme.example/cb"`) || !strings.Contains(string(env.Data), `"secret_set":false`) {
			t.Fatalf("forward callback %s", env.Data)
		}
		env = apitest.Expect(t, h.Call("POST", "/api/v1/forward-callback/rotate-secret", h.full, ""), 200, "")
		if !strings.Contains(string(env.Data), `"secret":"whsec_`) {
			t.Fatalf("rotate %s", env.Data)
		}
		env = apitest.Expect(t, h.Call("GET", "/api/v1/forward-callback", h.readOnly, ""), 200, "")
		if !strings.Contains(string(env.Data), `"secret_set":true`) || strings.Contains(string(env.Data), "whsec_") {
			t.Fatalf("forward callback after rotate %s", env.Data)
		}
	})
}
