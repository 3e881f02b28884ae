package api_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
)

type dealOut struct {
	ID           int64   `json:"id"`
	Provider     string  `json:"provider"`
	ClientID     *string `json:"client_id"`
	Currency     *string `json:"currency"`
	ValidFrom    string  `json:"valid_from"`
	Kind         string  `json:"kind"`
	Rate         string  `json:"rate"`
	Mode         string  `json:"mode"`
	CarryForward bool    `json:"carry_forward"`
	Actor        string  `json:"actor"`
	Backdated    bool    `json:"backdated"`
	Note         string  `json:"note"`
	Status       string  `json:"status"`
	Bands        []struct {
		From, To, Rate string
	} `json:"bands"`
}

// TestCommissionDealsAdmin: deals as data through the admin API on the
// report harness (today is 2025-03-02; acme's GGR is -5.00 on 03-01 and
// 32.00 on 03-02, with a flat default of 0.10 and acme's 0.20 from 03-02
// set from Go): a version is added, a past start needs backdate, the list
// shows current and scheduled versions, the history every version with its
// actor, and the commission report follows a tiered deal.
func TestCommissionDealsAdmin(t *testing.T) {
	t.Parallel()
	h := newRQHarness(t)
	add := func(body map[string]any) dealOut {
		t.Helper()
		return apitest.Data[dealOut](t, h.Admin(http.MethodPost, "/admin/v1/deals", body))
	}
	scheduled := add(map[string]any{"provider": "prov-a", "valid_from": "2025-04-01", "kind": "flat", "rate": "0.125"})
	if scheduled.ClientID != nil || scheduled.Currency != nil || scheduled.Rate != "0.125" || scheduled.Backdated ||
		!strings.HasPrefix(scheduled.Actor, "admin-token:") {
		t.Fatalf("scheduled %+v", scheduled)
	}
	tiered := map[string]any{"provider": "prov-a", "client_id": "acme", "currency": "EUR", "valid_from": "2025-03-01",
		"kind": "tiered", "mode": "marginal", "note": "March deal",
		"bands": []any{map[string]any{"from": "0", "to": "10.00", "rate": "0.1"}, map[string]any{"from": "10", "rate": "0.30"}}}

	t.Run("400 a start before today without backdate", func(t *testing.T) {
		e := apitest.WantError(t, h.Admin(http.MethodPost, "/admin/v1/deals", tiered), http.StatusBadRequest, wire.CodeInvalidRequest)
		if e.Error.Details["field"] != "valid_from" || !strings.Contains(e.Error.Message, "backdate") {
			t.Fatalf("error %+v", e.Error)
		}
	})
	tiered["backdate"] = true
	v := add(tiered)
	if !v.Backdated || v.Kind != "tiered" || v.Mode != "marginal" || len(v.Bands) != 2 || v.Bands[0].To != "10.00" ||
		v.Bands[1].To != "" || v.Bands[1].Rate != "0.3" || v.Note != "March deal" {
		t.Fatalf("tiered %+v", v)
	}

	t.Run("200 the report follows the tiered deal", func(t *testing.T) {
		// March to date: 27.00 EUR, marginal: 10 × 0.1 + 17 × 0.3 = 6.10,
		// due on the month's last day with GGR.
		rec := h.get("/api/v1/reports/commission?from=2025-03-01&to=2025-03-02", h.full, "")
		want := fmt.Sprintf(`{"success":true,"data":[{"month":"2025-03","provider":"prov-a","currency":"EUR","ggr":27.00,`+
			`"rate":0.3,"rate_changed":false,"commission":6.10,"deal_id":%d,"deal_kind":"tiered"}]}`, v.ID)
		if got := strings.TrimSpace(rec.Body.String()); rec.Code != http.StatusOK || got != want {
			t.Errorf("status %d\n got %s\nwant %s", rec.Code, got, want)
		}
		rec = h.get("/api/v1/reports/commission?from=2025-03-01&to=2025-03-02&group_by=day", h.full, "text/csv")
		wantCSV := "day,provider,currency,ggr,rate,rate_changed,commission\n" +
			"2025-03-01,prov-a,EUR,-5.00,0.3,false,0.00\n" +
			"2025-03-02,prov-a,EUR,32.00,0.3,false,6.10\n"
		if rec.Code != http.StatusOK || rec.Body.String() != wantCSV {
			t.Errorf("status %d\n%s\nwant\n%s", rec.Code, rec.Body, wantCSV)
		}
	})

	t.Run("200 the tiered month in a reporting currency", func(t *testing.T) {
		// The month's commission is due on 03-02, so converted at that
		// day's rate: 6.10 × 1.2 = 7.32 USD; the GGR day by day.
		putRates(t, h, fxRate("EUR", "USD", "2025-03-01", "1.1"), fxRate("EUR", "USD", "2025-03-02", "1.2"))
		rec := h.get("/api/v1/reports/commission?from=2025-03-01&to=2025-03-02&reporting_currency=USD", h.full, "")
		want := `"reporting":{"currency":"USD","complete":true,"ggr":32.90,"commission":7.32}`
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("status %d\n got %s\nwant %s", rec.Code, rec.Body, want)
		}
	})

	t.Run("200 current and scheduled deals", func(t *testing.T) {
		list := apitest.Data[[]dealOut](t, h.Admin(http.MethodGet, "/admin/v1/deals?provider=prov-a", nil))
		var got []string
		for _, d := range list {
			client, cur := "-", "-"
			if d.ClientID != nil {
				client = *d.ClientID
			}
			if d.Currency != nil {
				cur = *d.Currency
			}
			got = append(got, fmt.Sprintf("%s/%s %s %s %s", client, cur, d.ValidFrom, d.Kind, d.Status))
		}
		want := "-/- 2025-01-01 flat current|-/- 2025-04-01 flat scheduled|acme/- 2025-03-02 flat current|acme/EUR 2025-03-01 tiered current"
		if strings.Join(got, "|") != want {
			t.Fatalf("deals\n got %s\nwant %s", strings.Join(got, "|"), want)
		}
		own := apitest.Data[[]dealOut](t, h.Admin(http.MethodGet, "/admin/v1/deals?client_id=acme", nil))
		withDefaults := apitest.Data[[]dealOut](t, h.Admin(http.MethodGet, "/admin/v1/deals?client_id=acme&with_defaults=true", nil))
		if len(own) != 2 || len(withDefaults) != 4 {
			t.Fatalf("acme's own %d, with defaults %d", len(own), len(withDefaults))
		}
	})

	t.Run("200 the history, newest first, paged", func(t *testing.T) {
		rec := h.Admin(http.MethodGet, "/admin/v1/deals/history?provider=prov-a&per_page=2&page=1", nil)
		hist := apitest.Data[[]dealOut](t, rec)
		if len(hist) != 2 || hist[0].ID != v.ID || hist[1].ID != scheduled.ID || !strings.Contains(rec.Body.String(), `"total":4`) {
			t.Fatalf("history %s", rec.Body)
		}
		// A page past the end is empty, and still counts (schemathesis
		// found it was a 500 with a filter).
		rec = h.Admin(http.MethodGet, "/admin/v1/deals/history?provider=prov-a&client_id=acme&page=1073741823&per_page=50", nil)
		if len(apitest.Data[[]dealOut](t, rec)) != 0 || !strings.Contains(rec.Body.String(), `"total":2`) {
			t.Fatalf("a page past the end: %s", rec.Body)
		}
		last := apitest.Data[[]dealOut](t, h.Admin(http.MethodGet, "/admin/v1/deals/history?client_id=acme", nil))
		if len(last) != 2 || last[1].Actor != "go" {
			t.Fatalf("acme's history %+v", last)
		}
	})

	refused := []struct {
		name  string
		body  any
		field string
	}{
		{"a gap between bands", map[string]any{"provider": "prov-a", "currency": "EUR", "valid_from": "2025-03-05", "kind": "tiered", "mode": "whole",
			"bands": []any{map[string]any{"from": "0", "to": "10", "rate": "0.1"}, map[string]any{"from": "11", "rate": "0.2"}}}, "bands[1].from"},
		{"a rate above 1", map[string]any{"provider": "prov-a", "valid_from": "2025-03-05", "kind": "flat", "rate": "1.5"}, "rate"},
		{"a rate as a JSON number", map[string]any{"provider": "prov-a", "valid_from": "2025-03-05", "kind": "flat", "rate": 0.1}, "rate"},
		{"an unknown kind", map[string]any{"provider": "prov-a", "valid_from": "2025-03-05", "kind": "stepped"}, "kind"},
		{"no such client", map[string]any{"provider": "prov-a", "client_id": "nobody", "valid_from": "2025-03-05", "kind": "flat", "rate": "0.1"}, "client_id"},
		{"a note of two lines", map[string]any{"provider": "prov-a", "valid_from": "2025-03-05", "kind": "flat", "rate": "0.1", "note": "a\nb"}, "note"},
		{"an unknown field", map[string]any{"provider": "prov-a", "valid_from": "2025-03-05", "kind": "flat", "rate": "0.1", "rates": "0.1"}, "rates"},
	}
	for _, tc := range refused {
		t.Run("400 "+tc.name, func(t *testing.T) {
			e := apitest.WantError(t, h.Admin(http.MethodPost, "/admin/v1/deals", tc.body), http.StatusBadRequest, wire.CodeInvalidRequest)
			if e.Error.Details["field"] != tc.field {
				t.Fatalf("details %v, want field %s", e.Error.Details, tc.field)
			}
		})
	}
	t.Run("400 bad filters", func(t *testing.T) {
		for path, field := range map[string]string{"/admin/v1/deals?provider=a%20b": "provider", "/admin/v1/deals?with_defaults=yes": "with_defaults",
			"/admin/v1/deals/history?client_id=a%20b": "client_id", "/admin/v1/deals/history?per_page=500": "per_page"} {
			e := apitest.WantError(t, h.Admin(http.MethodGet, path, nil), http.StatusBadRequest, wire.CodeInvalidRequest)
			if e.Error.Details["field"] != field {
				t.Errorf("%s: details %v, want field %s", path, e.Error.Details, field)
			}
		}
	})
	t.Run("nothing refused was stored", func(t *testing.T) {
		rec := h.Admin(http.MethodGet, "/admin/v1/deals/history", nil)
		if !strings.Contains(rec.Body.String(), `"total":4`) {
			t.Fatalf("history %s", rec.Body)
		}
	})
	t.Run("401 without the admin token, 403 with a client key", func(t *testing.T) {
		for _, path := range []string{"/admin/v1/deals", "/admin/v1/deals/history"} {
			apitest.WantError(t, h.Call(http.MethodGet, path, "", nil), http.StatusUnauthorized, wire.CodeUnauthorized)
			apitest.WantError(t, h.Call(http.MethodGet, path, h.full, nil), http.StatusForbidden, wire.CodeForbidden)
		}
		apitest.WantError(t, h.Call(http.MethodPost, "/admin/v1/deals", "", tiered), http.StatusUnauthorized, wire.CodeUnauthorized)
	})
	t.Run("404 when the admin API is disabled", func(t *testing.T) {
		off := apitest.New(t, apitest.Options{Pool: h.Pool})
		apitest.WantError(t, off.Get("/admin/v1/deals", admToken), http.StatusNotFound, wire.CodeNotFound)
		apitest.WantError(t, off.Get("/admin/v1/deals/history", admToken), http.StatusNotFound, wire.CodeNotFound)
	})
	t.Run("503 without the deal store", func(t *testing.T) {
		srv := api.NewServer(api.Config{AdminToken: admToken, DefaultEnvironment: "sandbox"},
			api.Deps{Keys: h.Gateway, Admin: api.AdminDeps{Clients: h.Gateway}, Logger: slog.New(slog.DiscardHandler)})
		for _, r := range []*http.Request{httptest.NewRequest(http.MethodPost, "/admin/v1/deals", strings.NewReader(`{}`)),
			httptest.NewRequest(http.MethodGet, "/admin/v1/deals", nil), httptest.NewRequest(http.MethodGet, "/admin/v1/deals/history", nil)} {
			r.Header.Set("Authorization", "Bearer "+admToken)
			r.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			srv.Handler().ServeHTTP(rec, r)
			apitest.WantError(t, rec, http.StatusServiceUnavailable, wire.CodeUnavailable)
		}
	})
}
