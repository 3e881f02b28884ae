package api_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/gateway"
)

// admReveal is one record of the client secret's reveal trail as the
// admin API shows it.
type admReveal struct {
	ID         int64  `json:"id"`
	ClientID   string `json:"client_id"`
	RevealedAt string `json:"revealed_at"`
	Actor      string `json:"actor"`
	RemoteAddr string `json:"remote_addr"`
	UserAgent  string `json:"user_agent"`
	Reason     string `json:"reason"`
}

// TestAdminClientSecretReveal: the tokens area's reveal answers the
// client's signed-launch secret, unchanged, never cached, and records who
// asked, from where, when and why; the trail lists those records newest
// first; a reveal that is refused records nothing.
func TestAdminClientSecretReveal(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2031, 5, 6, 7, 8, 9, 123_000_000, time.UTC)
	h := apitest.New(t, apitest.Options{AdminToken: admToken, Clock: apitest.StoppedAt(t0)})
	ctx := context.Background()
	clientID, key := admNewClient(t, h, "sandbox", "", gateway.ScopeWalletRead)
	secret := apitest.Data[map[string]string](t, h.Admin(http.MethodPost, "/admin/v1/clients/"+clientID+"/client-secret", nil))["client_secret"]
	withoutSecret, _ := admNewClient(t, h, "sandbox", "", gateway.ScopeWalletRead)
	revealPath := "/admin/v1/clients/" + clientID + "/client-secret/reveal"
	trailPath := "/admin/v1/clients/" + clientID + "/client-secret/reveals"

	reveal := func(token string, body any) *httptest.ResponseRecorder {
		t.Helper()
		return h.Do(apitest.Request{Method: http.MethodPost, Path: revealPath, Key: token, Body: body,
			RemoteAddr: "203.0.113.9:50123", Header: map[string]string{"User-Agent": "tokens-test/1.0"}})
	}
	recorded := func() int {
		t.Helper()
		var n int
		if err := h.Pool.QueryRow(ctx, `SELECT count(*) FROM client_secret_reveals WHERE client_id = $1`, clientID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	type revealed struct {
		ClientID     string    `json:"client_id"`
		ClientSecret string    `json:"client_secret"`
		Reveal       admReveal `json:"reveal"`
	}

	var first admReveal
	t.Run("reveal with a reason", func(t *testing.T) {
		rec := reveal(admToken, map[string]any{"reason": "onboarding call with Acme — ticket #42"})
		got := apitest.Data[revealed](t, rec)
		if got.ClientID != clientID || got.ClientSecret != secret {
			t.Fatalf("revealed %+v, want client %s's secret %s", got, clientID, secret)
		}
		if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
			t.Fatalf("Cache-Control %q, want no-store", cc)
		}
		r := got.Reveal
		if r.ID == 0 || r.ClientID != clientID || r.Reason != "onboarding call with Acme — ticket #42" ||
			r.RevealedAt != wire.FormatTime(t0) || r.RemoteAddr != "203.0.113.9" || r.UserAgent != "tokens-test/1.0" ||
			!strings.HasPrefix(r.Actor, "admin-token:") || len(r.Actor) != len("admin-token:")+12 {
			t.Fatalf("reveal record %+v", r)
		}
		// The row itself, as stored.
		var (
			reason, actor, addr, ua string
			at                      time.Time
		)
		if err := h.Pool.QueryRow(ctx, `SELECT reason, actor, remote_addr, user_agent, revealed_at
			FROM client_secret_reveals WHERE id = $1 AND client_id = $2`, r.ID, clientID).Scan(&reason, &actor, &addr, &ua, &at); err != nil {
			t.Fatalf("the trail has no row %d: %v", r.ID, err)
		}
		if reason != r.Reason || actor != r.Actor || addr != "203.0.113.9" || ua != "tokens-test/1.0" || !at.Equal(t0) {
			t.Fatalf("stored %q %q %q %q %v", reason, actor, addr, ua, at)
		}
		first = r
	})

	t.Run("revealing never changes the secret", func(t *testing.T) {
		h.Clock.Advance(time.Minute)
		got := apitest.Data[revealed](t, reveal(admToken, nil)) // no body: no reason
		if got.ClientSecret != secret || got.Reveal.Reason != "" || got.Reveal.RevealedAt != wire.FormatTime(t0.Add(time.Minute)) {
			t.Fatalf("second reveal %+v", got)
		}
		lc, err := h.LaunchClients.LaunchClient(ctx, clientID)
		if err != nil || string(lc.Secret) != secret {
			t.Fatalf("the stored secret is %q (%v), want %q", lc.Secret, err, secret)
		}
		if got.Reveal.Actor != first.Actor {
			t.Fatalf("one admin token, two actors: %q and %q", first.Actor, got.Reveal.Actor)
		}
	})

	t.Run("the trail, newest first", func(t *testing.T) {
		rec := h.Admin(http.MethodGet, trailPath, nil)
		list := apitest.Data[[]admReveal](t, rec)
		env := apitest.Decode[apitest.Envelope](t, rec)
		if len(list) != 2 || list[1] != first || list[0].ID <= first.ID || list[0].Reason != "" ||
			env.Pagination == nil || env.Pagination.Total != 2 || env.Pagination.Page != 1 || env.Pagination.PerPage != 50 {
			t.Fatalf("trail %+v, pagination %+v", list, env.Pagination)
		}
		page2 := apitest.Data[[]admReveal](t, h.Admin(http.MethodGet, trailPath+"?page=2&per_page=1", nil))
		if len(page2) != 1 || page2[0] != first {
			t.Fatalf("page 2 of 1 per page: %+v, want the first reveal", page2)
		}
		other := apitest.Data[[]admReveal](t, h.Admin(http.MethodGet, "/admin/v1/clients/"+withoutSecret+"/client-secret/reveals", nil))
		if len(other) != 0 {
			t.Fatalf("another client's trail: %+v", other)
		}
	})

	before := recorded()
	bad := []struct {
		name  string
		body  any
		code  string
		field string
	}{
		{"reason with a line break", map[string]any{"reason": "line one\nline two"}, wire.CodeInvalidRequest, "reason"},
		{"reason too long", map[string]any{"reason": strings.Repeat("x", 201)}, wire.CodeInvalidRequest, "reason"},
		{"reason not text", map[string]any{"reason": 42}, wire.CodeInvalidRequest, "reason"},
		{"unknown field", map[string]any{"why": "x"}, wire.CodeInvalidRequest, "why"},
		{"not JSON", `{"reason":`, wire.CodeInvalidJSON, ""},
	}
	for _, tc := range bad {
		t.Run("400: "+tc.name, func(t *testing.T) {
			e := apitest.WantError(t, reveal(admToken, tc.body), http.StatusBadRequest, tc.code)
			if tc.field != "" && e.Error.Details["field"] != tc.field {
				t.Fatalf("details %v, want field %s", e.Error.Details, tc.field)
			}
		})
	}
	t.Run("400: bad paging", func(t *testing.T) {
		apitest.WantError(t, h.Admin(http.MethodGet, trailPath+"?per_page=201", nil), http.StatusBadRequest, wire.CodeInvalidRequest)
		apitest.WantError(t, h.Admin(http.MethodGet, trailPath+"?page=0", nil), http.StatusBadRequest, wire.CodeInvalidRequest)
	})
	t.Run("401 without the admin token", func(t *testing.T) {
		apitest.WantError(t, reveal("", nil), http.StatusUnauthorized, wire.CodeUnauthorized)
		apitest.WantError(t, reveal(admToken+"x", nil), http.StatusUnauthorized, wire.CodeUnauthorized)
		apitest.WantError(t, h.Get(trailPath, ""), http.StatusUnauthorized, wire.CodeUnauthorized)
	})
	t.Run("403 with a client key", func(t *testing.T) {
		apitest.WantError(t, reveal(key.Key, nil), http.StatusForbidden, wire.CodeForbidden)
		apitest.WantError(t, h.Get(trailPath, key.Key), http.StatusForbidden, wire.CodeForbidden)
	})
	t.Run("404 for an unknown client", func(t *testing.T) {
		for _, id := range []string{"nobody", "a:b"} {
			apitest.WantError(t, h.Admin(http.MethodPost, "/admin/v1/clients/"+id+"/client-secret/reveal", nil),
				http.StatusNotFound, wire.CodeNotFound)
			apitest.WantError(t, h.Admin(http.MethodGet, "/admin/v1/clients/"+id+"/client-secret/reveals", nil),
				http.StatusNotFound, wire.CodeNotFound)
		}
	})
	t.Run("409 when no secret was issued", func(t *testing.T) {
		apitest.WantError(t, h.Admin(http.MethodPost, "/admin/v1/clients/"+withoutSecret+"/client-secret/reveal", nil),
			http.StatusConflict, wire.CodeClientSecretNotIssued)
		var n int
		if err := h.Pool.QueryRow(ctx, `SELECT count(*) FROM client_secret_reveals WHERE client_id = $1`, withoutSecret).Scan(&n); err != nil || n != 0 {
			t.Fatalf("a refused reveal left %d records (%v)", n, err)
		}
	})
	if n := recorded(); n != before {
		t.Fatalf("refused reveals were recorded: %d records, want %d", n, before)
	}

	t.Run("404 when the admin API is disabled", func(t *testing.T) {
		off := apitest.New(t, apitest.Options{Pool: h.Pool})
		apitest.WantError(t, off.Do(apitest.Request{Method: http.MethodPost, Path: revealPath, Key: admToken}),
			http.StatusNotFound, wire.CodeNotFound)
		apitest.WantError(t, off.Get(trailPath, admToken), http.StatusNotFound, wire.CodeNotFound)
	})
	t.Run("503 without the trail's store", func(t *testing.T) {
		srv := api.NewServer(api.Config{AdminToken: admToken, DefaultEnvironment: "sandbox"},
			api.Deps{Keys: h.Gateway, Admin: api.AdminDeps{Clients: h.Gateway}, Logger: slog.New(slog.DiscardHandler)})
		for _, r := range []*http.Request{httptest.NewRequest(http.MethodPost, revealPath, nil), httptest.NewRequest(http.MethodGet, trailPath, nil)} {
			r.Header.Set("Authorization", "Bearer "+admToken)
			rec := httptest.NewRecorder()
			srv.Handler().ServeHTTP(rec, r)
			apitest.WantError(t, rec, http.StatusServiceUnavailable, wire.CodeUnavailable)
		}
	})
	t.Run("the address is the peer's unless it is a trusted proxy", func(t *testing.T) {
		rec := h.Do(apitest.Request{Method: http.MethodPost, Path: revealPath, Key: admToken, RemoteAddr: "192.0.2.77:4444",
			Header: map[string]string{"X-Forwarded-For": "198.51.100.1"}})
		if got := apitest.Data[revealed](t, rec).Reveal.RemoteAddr; got != "192.0.2.77" {
			t.Fatalf("remote_addr %q: X-Forwarded-For from a peer that is not a trusted proxy was believed", got)
		}
	})
	t.Run("answers that carry a secret are not cached", func(t *testing.T) {
		issued := h.Admin(http.MethodPost, "/admin/v1/clients/"+clientID+"/keys", map[string]any{"scopes": []string{gateway.ScopeLaunch}})
		k := apitest.Data[admKey](t, issued)
		rotated := h.Admin(http.MethodPost, "/admin/v1/clients/"+clientID+"/keys/"+k.ID+"/rotate", nil)
		apitest.Data[admKey](t, rotated)
		for name, rec := range map[string]*httptest.ResponseRecorder{"issue key": issued, "rotate key": rotated} {
			if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
				t.Errorf("%s: Cache-Control %q, want no-store", name, cc)
			}
		}
		if cc := h.Admin(http.MethodGet, trailPath, nil).Header().Get("Cache-Control"); cc != "" {
			t.Errorf("the trail (no secret in it): Cache-Control %q", cc)
		}
	})
	t.Run("a reissued secret is what the next reveal shows", func(t *testing.T) {
		rec := h.Admin(http.MethodPost, "/admin/v1/clients/"+clientID+"/client-secret", nil)
		next := apitest.Data[map[string]string](t, rec)["client_secret"]
		if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
			t.Errorf("issue client secret: Cache-Control %q, want no-store", cc)
		}
		if got := apitest.Data[revealed](t, reveal(admToken, nil)); next == secret || got.ClientSecret != next {
			t.Fatalf("after reissuing, revealed %q, want the new secret %q", got.ClientSecret, next)
		}
	})
}
