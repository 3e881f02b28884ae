package api_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// TestCSVExportsNeutraliseFormulas (issue 37, item 4): ids may start with
// '-' or '@', and a spreadsheet would run such a cell as a formula. Every
// CSV file the service serves — the provider's round export, the GGR and
// commission reports, a statement — writes a text cell that starts with
// '=', '+', '-', '@', a tab or a carriage return with a leading "'", while
// a negative amount stays a number (wire.CSVCell, the one writer).
func TestCSVExportsNeutraliseFormulas(t *testing.T) {
	h := newSLHarnessWith(t, func(o *apitest.Options) { o.AdminToken = csAdminToken })
	h.Clock.Set(time.Date(2026, 10, 10, 12, 0, 0, 0, time.UTC))
	h.provider, h.game = "@"+apitest.UID("prov"), "-"+apitest.UID("game")
	if err := h.Gateway.UpsertProvider(context.Background(), gateway.Provider{ID: h.provider, Name: "Formula games",
		Secret: h.providerSecret, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	h.AddGame(h.game, h.provider, "Formula slot", "slots", true)
	c := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch, gateway.ScopeReportsRead}, gateway.LaunchSettings{})
	player := "-2-3-" + apitest.UID("p")
	w := slWallet{h: h, session: h.mustLaunch(c, player, "100", nil).SessionID, wallet: domain.PlayerWallet(c.ID, player, slEUR)}
	wantOK(t, w.call("bet", map[string]any{"transaction_id": "b-1", "round_id": "@A1", "amount": "10.00"}), "90.00")
	wantOK(t, w.call("win", map[string]any{"transaction_id": "w-1", "round_id": "@A1", "amount": "25.00",
		"reference_transaction_id": "b-1", "round_closed": true}), "115.00")
	h.Pump()

	csvGet := func(path string) *httptest.ResponseRecorder {
		return h.Do(apitest.Request{Method: http.MethodGet, Path: path, Key: c.Key, Header: map[string]string{"Accept": "text/csv"}})
	}
	day := "2026-10-10"
	exports := []struct {
		name string
		rec  *httptest.ResponseRecorder
		want []string // neutralised cells the file must hold
	}{
		{"the provider's round export", getRounds(h, h.provider, h.providerSecret, day),
			[]string{"'" + h.game, "'" + player, "'@A1", "-15.00"}},
		{"the GGR report", csvGet("/api/v1/reports/ggr?from=" + day + "&to=" + day + "&group_by=game"),
			[]string{"'" + h.provider, "'" + h.game, "-15.00"}},
		{"the commission report", csvGet("/api/v1/reports/commission?from=" + day + "&to=" + day),
			[]string{"'" + h.provider, "-15.00"}},
	}
	h.Clock.Set(time.Date(2026, 10, 11, 1, 0, 0, 0, time.UTC)) // the day has ended
	rec := h.Admin(http.MethodPost, "/admin/v1/clients/"+c.ID+"/statements",
		map[string]any{"provider": h.provider, "period": "day", "start": day})
	if rec.Code != http.StatusCreated {
		t.Fatalf("close the day: %d %s", rec.Code, rec.Body)
	}
	closed := apitest.Decode[struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}](t, rec)
	exports = append(exports, struct {
		name string
		rec  *httptest.ResponseRecorder
		want []string
	}{"a statement", csvGet("/api/v1/statements/" + closed.Data.ID), []string{"'" + h.provider, "-15.00"}})

	for _, e := range exports {
		t.Run(e.name, func(t *testing.T) {
			if e.rec.Code != http.StatusOK {
				t.Fatalf("%d %s", e.rec.Code, e.rec.Body)
			}
			rows, err := csv.NewReader(strings.NewReader(e.rec.Body.String())).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, row := range rows {
				for _, cell := range row {
					seen[cell] = true
					if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) && !negativeAmount(cell) {
						t.Errorf("cell %q would be read as a formula", cell)
					}
				}
			}
			for _, want := range e.want {
				if !seen[want] {
					t.Errorf("no cell %q in:\n%s", want, e.rec.Body)
				}
			}
		})
	}
}

// negativeAmount reports whether cell is a negative decimal amount.
func negativeAmount(cell string) bool {
	rest, ok := strings.CutPrefix(cell, "-")
	if !ok || rest == "" {
		return false
	}
	for _, r := range rest {
		if (r < '0' || r > '9') && r != '.' {
			return false
		}
	}
	return true
}
