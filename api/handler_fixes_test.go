package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/api/wire"
)

// fxError is the error body as a client reads it.
type fxError struct {
	Success *bool `json:"success"`
	Error   struct {
		Code      string         `json:"code"`
		Message   string         `json:"message"`
		RequestID string         `json:"request_id"`
		Details   map[string]any `json:"details"`
	} `json:"error"`
}

func fxDecodeError(t *testing.T, rec *httptest.ResponseRecorder) fxError {
	t.Helper()
	var e fxError
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Success == nil || *e.Success ||
		e.Error.Code == "" || e.Error.RequestID == "" {
		t.Fatalf("not the error shape (%v): %d %s", err, rec.Code, rec.Body)
	}
	return e
}

// TestWrongMethod: a known path with another method is 405
// METHOD_NOT_ALLOWED with an Allow header listing the path's methods, in
// and outside the route groups; an unknown path stays 404; under /api/v1
// authentication still comes first.
func TestWrongMethod(t *testing.T) {
	t.Parallel()
	s := fzHarness(t)
	cases := []struct {
		name, method, path, auth string
		status                   int
		code, allow              string
	}{
		{"DELETE transactions", http.MethodDelete, "/api/v1/transactions", "bearer", 405, wire.CodeMethodNotAllowed, "GET, POST"},
		{"PUT a webhook", http.MethodPut, "/api/v1/webhooks/" + s.webhookID, "bearer", 405, wire.CodeMethodNotAllowed, "GET, PATCH, DELETE"},
		{"POST wallet balance", http.MethodPost, "/api/v1/wallet/balance", "bearer", 405, wire.CodeMethodNotAllowed, "GET"},
		{"GET provider bet", http.MethodGet, "/provider/v1/wallet/bet", "none", 405, wire.CodeMethodNotAllowed, "POST"},
		{"PUT admin clients", http.MethodPut, "/admin/v1/clients", "admin", 405, wire.CodeMethodNotAllowed, "GET, POST"},
		{"DELETE an admin client", http.MethodDelete, "/admin/v1/clients/" + s.client, "admin", 405, wire.CodeMethodNotAllowed, "GET, PATCH"},
		{"POST the signed launch (outside a group)", http.MethodPost, "/v1/launch", "none", 405, wire.CodeMethodNotAllowed, ""},
		{"DELETE transactions without a key", http.MethodDelete, "/api/v1/transactions", "none", 401, wire.CodeUnauthorized, ""},
		{"unknown path under /api/v1", http.MethodGet, "/api/v1/no-such-route", "bearer", 404, wire.CodeNotFound, ""},
		{"unknown path under /api/v1, other method", http.MethodDelete, "/api/v1/nothing/here", "bearer", 404, wire.CodeNotFound, ""},
		{"unknown wallet call", http.MethodPost, "/provider/v1/wallet/refund", "none", 404, wire.CodeNotFound, ""},
		{"unknown admin path", http.MethodPut, "/admin/v1/nothing", "admin", 404, wire.CodeNotFound, ""},
		{"unknown top-level path", http.MethodGet, "/no/such/thing", "none", 404, wire.CodeNotFound, ""},
		{"a real 404 of a handler stays 404", http.MethodGet, "/api/v1/webhooks/no-such-webhook", "bearer", 404, wire.CodeNotFound, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := s.send(t, fzRoute{method: tc.method, path: tc.path, auth: tc.auth}, nil)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if e := fxDecodeError(t, rec); e.Error.Code != tc.code {
				t.Errorf("code %s, want %s", e.Error.Code, tc.code)
			}
			allow := rec.Header().Get("Allow")
			switch {
			case tc.allow != "" && allow != tc.allow:
				t.Errorf("Allow %q, want %q", allow, tc.allow)
			case tc.status == 405 && allow == "":
				t.Error("405 without an Allow header")
			case tc.status != 405 && allow != "":
				t.Errorf("%d with Allow %q", tc.status, allow)
			}
		})
	}
}

// TestBodyMustBeAnObject: on every route that reads a JSON body, a body
// that is valid JSON but not an object is 400 INVALID_JSON, like every
// other malformed body; the route's valid body still passes.
func TestBodyMustBeAnObject(t *testing.T) {
	t.Parallel()
	s := fzHarness(t)
	for _, r := range s.routes() {
		for _, body := range []string{`null`, ` null `, `[]`, `[{}]`, `"x"`, `1`, `true`, "\n[" + r.valid + "]"} {
			t.Run(r.method+" "+r.path+" "+body, func(t *testing.T) {
				rec := s.send(t, r, []byte(body))
				if rec.Code != http.StatusBadRequest {
					t.Fatalf("status %d, want 400: %s", rec.Code, rec.Body)
				}
				if e := fxDecodeError(t, rec); e.Error.Code != wire.CodeInvalidJSON {
					t.Errorf("code %s, want %s", e.Error.Code, wire.CodeInvalidJSON)
				}
			})
		}
	}
	// A PATCH of null used to be a 200 no-op; an object still updates.
	rec := s.send(t, fzRoute{method: http.MethodPatch, path: "/api/v1/webhooks/" + s.webhookID, auth: "bearer"},
		[]byte(`{"description":"still an object"}`))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "still an object") {
		t.Errorf("PATCH with an object: %d %s", rec.Code, rec.Body)
	}
}

// TestEmptyQueryValues: an empty query value is the same as leaving the
// parameter out, for every optional parameter of the list and report
// routes: the answer is the one without it. A required parameter left
// empty is 400 naming it.
func TestEmptyQueryValues(t *testing.T) {
	t.Parallel()
	s := fzHarness(t)
	routes := []struct {
		path   string
		params []string
	}{
		{"/api/v1/transactions", []string{"page", "per_page", "player_id", "provider", "game", "type", "status", "currency",
			"from", "to", "min_position"}},
		{"/api/v1/games", []string{"provider", "category", "search", "page", "per_page"}},
		{"/api/v1/deliveries", []string{"status", "endpoint_id", "event_id", "page", "per_page"}},
		{"/api/v1/audit/events", []string{"after", "limit"}},
		{"/api/v1/reports/ggr", []string{"from", "to", "group_by", "min_position"}},
		{"/api/v1/reports/commission", []string{"from", "to", "group_by", "min_position"}},
		{"/api/v1/wallet/balance", []string{"player_id", "currency", "min_position"}},
	}
	for _, r := range routes {
		base := s.do(t, http.MethodGet, r.path, nil)
		if base.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", r.path, base.Code, base.Body)
		}
		all := make([]string, len(r.params))
		for i, p := range r.params {
			all[i] = p + "="
		}
		queries := append([]string{strings.Join(all, "&")}, all...)
		for _, q := range queries {
			t.Run(r.path+"?"+q, func(t *testing.T) {
				rec := s.do(t, http.MethodGet, r.path+"?"+q, nil)
				if rec.Code != http.StatusOK {
					t.Fatalf("status %d, want 200: %s", rec.Code, rec.Body)
				}
				if got, want := fxData(t, rec), fxData(t, base); got != want {
					t.Errorf("answer differs from the one without the parameter:\n got %s\nwant %s", got, want)
				}
			})
		}
	}
	t.Run("required parameter empty", func(t *testing.T) {
		rec := s.do(t, http.MethodGet, "/api/v1/game/launch?provider=&game_id=fzgame&player_id=fzp&currency=EUR", nil)
		if rec.Code != http.StatusBadRequest {
			t.Fatalf("status %d, want 400: %s", rec.Code, rec.Body)
		}
		if e := fxDecodeError(t, rec); e.Error.Code != wire.CodeInvalidRequest || e.Error.Details["field"] != "provider" {
			t.Errorf("error %+v, want INVALID_REQUEST naming provider", e.Error)
		}
	})
	t.Run("a given value is still validated", func(t *testing.T) {
		for _, q := range []string{"/api/v1/transactions?page=0", "/api/v1/transactions?from=yesterday",
			"/api/v1/audit/events?limit=x", "/api/v1/reports/ggr?to=2025-02-30", "/api/v1/games?per_page=-1"} {
			if rec := s.do(t, http.MethodGet, q, nil); rec.Code != http.StatusBadRequest {
				t.Errorf("%s: status %d, want 400", q, rec.Code)
			}
		}
	})
}

// fxData is an answer without what differs between two identical reads
// (nothing but the body's data and pagination are compared).
func fxData(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var v map[string]json.RawMessage
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("decode %s: %v", rec.Body, err)
	}
	return string(v["data"]) + " " + string(v["pagination"])
}
