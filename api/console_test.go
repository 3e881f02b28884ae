package api_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres/auditstore"
	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/audit"
	"github.com/pitboss/pitboss/console"
	"github.com/pitboss/pitboss/gateway"
)

// TestConsoleRoutes covers every status of the routes the console added
// (GET /api/v1/me, /console/overview, /transactions/{id}, /audit/head)
// and the static pages, on the real server with real Postgres, Kafka, the
// relay and the projectors.
func TestConsoleRoutes(t *testing.T) {
	t.Parallel()
	h := newConsoleHarness(t)
	full := h.newClient(gateway.AllScopes...)
	other := h.newClient(gateway.AllScopes...)
	reportsOnly := h.newClient(gateway.ScopeReportsRead)
	walletOnly := h.newClient(gateway.ScopeWalletRead)
	h.webhook(full)
	h.deposit(full, "p1", "20.00", "EUR")
	h.deposit(full, "", "100.00", "EUR")
	b := h.bet(full, "p1", "2.50")
	otherBet := h.bet2(other)
	h.waitHistory(full, b.position)
	parked := h.park(full)

	t.Run("me", func(t *testing.T) {
		type me struct {
			ClientID    string   `json:"client_id"`
			KeyID       string   `json:"key_id"`
			Environment string   `json:"environment"`
			Scopes      []string `json:"scopes"`
		}
		for _, c := range []struct {
			key    ctClient
			scopes []string
		}{{full, gateway.AllScopes}, {walletOnly, []string{gateway.ScopeWalletRead}}} {
			got := ctOK[me](t, h.do(http.MethodGet, "/api/v1/me", c.key.key, ""))
			if got.ClientID != c.key.id || got.Environment != "sandbox" || got.KeyID == "" || !strings.Contains(c.key.key, got.KeyID) ||
				!slices.Equal(slices.Sorted(slices.Values(got.Scopes)), slices.Sorted(slices.Values(c.scopes))) {
				t.Errorf("me %+v for client %s with %v", got, c.key.id, c.scopes)
			}
		}
		ctWantError(t, h.do(http.MethodGet, "/api/v1/me", "", ""), http.StatusUnauthorized, wire.CodeUnauthorized)
		ctWantError(t, h.do(http.MethodGet, "/api/v1/me", "pb_test_nope_nope", ""), http.StatusUnauthorized, wire.CodeUnauthorized)
	})

	t.Run("overview", func(t *testing.T) {
		type overview struct {
			Day   string `json:"day"`
			Today []struct {
				Currency string      `json:"currency"`
				Bets     json.Number `json:"bets"`
				Wins     json.Number `json:"wins"`
				GGR      json.Number `json:"ggr"`
				Rounds   int64       `json:"rounds"`
			} `json:"today"`
			Balances []struct {
				Currency string      `json:"currency"`
				Balance  json.Number `json:"balance"`
			} `json:"balances"`
			Lag *struct {
				Head        int64 `json:"head"`
				Projections []struct {
					Name     string `json:"name"`
					Position int64  `json:"position"`
				} `json:"projections"`
			} `json:"lag"`
			FailedDeliveries []struct {
				ID     string `json:"id"`
				Status string `json:"status"`
			} `json:"failed_deliveries"`
			FailedTotal *int64 `json:"failed_deliveries_total"`
		}
		r := h.do(http.MethodGet, "/api/v1/console/overview", full.key, "")
		o := ctOK[overview](t, r)
		if o.Day != time.Now().UTC().Format(time.DateOnly) || len(o.Today) != 1 || o.Today[0].Currency != "EUR" ||
			o.Today[0].Bets != "2.50" || o.Today[0].Wins != "0.00" || o.Today[0].GGR != "2.50" || o.Today[0].Rounds != 1 {
			t.Errorf("today %+v", o)
		}
		if len(o.Balances) != 1 || o.Balances[0].Balance != "100.00" {
			t.Errorf("balances %+v, want the client wallet's EUR 100.00", o.Balances)
		}
		if o.Lag == nil || o.Lag.Head < b.position || len(o.Lag.Projections) != 2 {
			t.Errorf("lag %+v", o.Lag)
		}
		if o.FailedTotal == nil || *o.FailedTotal != 1 || len(o.FailedDeliveries) != 1 || o.FailedDeliveries[0].ID != parked ||
			o.FailedDeliveries[0].Status != gateway.DeliveryParked {
			t.Errorf("failed deliveries %+v (total %v), want %s", o.FailedDeliveries, o.FailedTotal, parked)
		}
		if r.header.Get(api.HeaderLedgerPosition) == "" {
			t.Error("no X-Ledger-Position")
		}
		// A past day has nothing; a key without wallet:read and
		// deliveries:read gets null for those parts.
		if o := ctOK[overview](t, h.do(http.MethodGet, "/api/v1/console/overview?day=2020-01-31", full.key, "")); len(o.Today) != 0 {
			t.Errorf("2020-01-31: %+v", o.Today)
		}
		raw := h.do(http.MethodGet, "/api/v1/console/overview", reportsOnly.key, "")
		var env struct {
			Data map[string]json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(raw.body, &env); err != nil || string(env.Data["balances"]) != "null" ||
			string(env.Data["failed_deliveries"]) != "null" || string(env.Data["today"]) != "[]" {
			t.Errorf("reports-only overview: %s (%v)", raw.body, err)
		}
		for _, c := range []struct {
			name, query, key string
			status           int
			code             string
		}{
			{"bad day", "?day=31.01.2020", full.key, 400, wire.CodeInvalidRequest},
			{"bad min_position", "?min_position=-1", full.key, 400, wire.CodeInvalidRequest},
			{"no key", "", "", 401, wire.CodeUnauthorized},
			{"no reports:read", "", walletOnly.key, 403, wire.CodeForbidden},
		} {
			t.Run(c.name, func(t *testing.T) {
				ctWantError(t, h.do(http.MethodGet, "/api/v1/console/overview"+c.query, c.key, ""), c.status, c.code)
			})
		}
	})

	t.Run("transaction detail", func(t *testing.T) {
		type detail struct {
			ID       string       `json:"id"`
			Type     string       `json:"type"`
			Amount   json.Number  `json:"amount"`
			RoundID  *string      `json:"round_id"`
			Position int64        `json:"position"`
			Events   []audit.Line `json:"events"`
		}
		type row struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		}
		rows := ctOK[[]row](t, h.do(http.MethodGet, "/api/v1/transactions?player_id=p1&provider=demo", full.key, ""))
		ids := map[string]string{}
		for _, r := range rows {
			ids[r.Type] = r.ID
		}
		if ids["bet"] == "" || ids["game_result"] == "" {
			t.Fatalf("history rows %+v", rows)
		}
		var wantHash []byte
		if err := h.pool.QueryRow(context.Background(), `SELECT hash FROM events WHERE event_id = $1`, ids["bet"]).Scan(&wantHash); err != nil {
			t.Fatal(err)
		}
		d := ctOK[detail](t, h.do(http.MethodGet, "/api/v1/transactions/"+ids["bet"], full.key, ""))
		if d.ID != ids["bet"] || d.Type != "bet" || d.Amount != "-2.50" || len(d.Events) != 1 ||
			d.Events[0].EventID != ids["bet"] || d.Events[0].Hash != hex.EncodeToString(wantHash) || d.Events[0].Position != b.position {
			t.Errorf("bet detail %+v, want its one event with hash %x", d, wantHash)
		}
		g := ctOK[detail](t, h.do(http.MethodGet, "/api/v1/transactions/"+ids["game_result"], full.key, ""))
		if g.Type != "game_result" || g.RoundID == nil || *g.RoundID != b.round || len(g.Events) != 1 || g.Events[0].EventID != ids["bet"] {
			t.Errorf("game result detail %+v, want the round's bet event", g)
		}
		for _, c := range []struct {
			name, id, key string
			status        int
			code          string
		}{
			{"not a uuid", "bet-1", full.key, 400, wire.CodeInvalidRequest},
			{"no key", ids["bet"], "", 401, wire.CodeUnauthorized},
			{"no transactions:read", ids["bet"], walletOnly.key, 403, wire.CodeForbidden},
			{"unknown", "00000000-0000-4000-8000-000000000000", full.key, 404, wire.CodeNotFound},
			{"another client's", otherBet, full.key, 404, wire.CodeNotFound},
		} {
			t.Run(c.name, func(t *testing.T) {
				ctWantError(t, h.do(http.MethodGet, "/api/v1/transactions/"+c.id, c.key, ""), c.status, c.code)
			})
		}
	})

	t.Run("audit head", func(t *testing.T) {
		type head struct {
			Position   int64  `json:"position"`
			Hash       string `json:"hash"`
			EventsPath string `json:"events_path"`
			LastVerify *struct {
				OK           bool   `json:"ok"`
				HeadPosition int64  `json:"head_position"`
				HeadHash     string `json:"head_hash"`
				Checks       []struct {
					Name string `json:"name"`
					OK   bool   `json:"ok"`
				} `json:"checks"`
			} `json:"last_verify"`
		}
		var pos int64
		var hash []byte
		if err := h.pool.QueryRow(context.Background(), `SELECT position, hash FROM events ORDER BY position DESC LIMIT 1`).
			Scan(&pos, &hash); err != nil {
			t.Fatal(err)
		}
		got := ctOK[head](t, h.do(http.MethodGet, "/api/v1/audit/head", full.key, ""))
		if got.Position < pos || got.Hash == "" || got.EventsPath != "/api/v1/audit/events" || got.LastVerify != nil {
			t.Errorf("head %+v, want at least %d and no verification yet", got, pos)
		}
		rep, err := h.audit.Verify(context.Background(), auditstore.VerifyOptions{SkipReadModels: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.audit.SaveRun(context.Background(), rep); err != nil {
			t.Fatal(err)
		}
		got = ctOK[head](t, h.do(http.MethodGet, "/api/v1/audit/head", full.key, ""))
		if got.LastVerify == nil || got.LastVerify.OK != rep.OK || got.LastVerify.HeadPosition != rep.HeadPosition ||
			got.LastVerify.HeadHash != rep.HeadHash || len(got.LastVerify.Checks) != len(rep.Checks) {
			t.Errorf("last verify %+v, want %+v", got.LastVerify, rep)
		}
		ctWantError(t, h.do(http.MethodGet, "/api/v1/audit/head", "", ""), http.StatusUnauthorized, wire.CodeUnauthorized)
		ctWantError(t, h.do(http.MethodGet, "/api/v1/audit/head", walletOnly.key, ""), http.StatusForbidden, wire.CodeForbidden)
	})

	t.Run("static pages", func(t *testing.T) {
		noRedirect := &http.Client{Timeout: 10 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		get := func(path string) (*http.Response, string) {
			t.Helper()
			res, err := noRedirect.Get(h.base + path)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			return res, string(b)
		}
		res, body := get("/console/")
		if res.StatusCode != 200 || !strings.Contains(body, `<script type="module" src="app.js">`) ||
			res.Header.Get("Content-Security-Policy") != console.ContentSecurityPolicy ||
			!strings.Contains(res.Header.Get("Content-Security-Policy"), "default-src 'self'") ||
			!strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			t.Errorf("/console/: %d %v", res.StatusCode, res.Header)
		}
		if res, _ := get("/console"); res.StatusCode != http.StatusMovedPermanently || res.Header.Get("Location") != "/console/" {
			t.Errorf("/console: %d %s", res.StatusCode, res.Header.Get("Location"))
		}
		for path, ctype := range map[string]string{"/console/app.js": "text/javascript", "/console/style.css": "text/css"} {
			if res, _ := get(path); res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), ctype) ||
				res.Header.Get("Content-Security-Policy") == "" {
				t.Errorf("%s: %d %v", path, res.StatusCode, res.Header)
			}
		}
		if res, _ := get("/console/vendor/uPlot.iife.min.js"); (res.StatusCode == 200) != console.ChartsVendored() {
			t.Errorf("uPlot: %d, vendored %v", res.StatusCode, console.ChartsVendored())
		}
		for _, p := range []string{"/console/nope.js", "/console/../go.mod", "/console/vendor/"} {
			if res, _ := get(p); res.StatusCode != http.StatusNotFound && res.StatusCode != http.StatusMovedPermanently {
				t.Errorf("%s: %d", p, res.StatusCode)
			}
		}
	})
}

// bet2 is a bet of another client, whose history row id is returned once
// the read model has it.
func (h *csHarness) bet2(c ctClient) string {
	h.t.Helper()
	h.deposit(c, "q1", "5.00", "EUR")
	b := h.bet(c, "q1", "1.00")
	h.waitHistory(c, b.position)
	type row struct {
		ID string `json:"id"`
	}
	rows := ctOK[[]row](h.t, h.do(http.MethodGet, "/api/v1/transactions?type=bet", c.key, ""))
	if len(rows) != 1 {
		h.t.Fatalf("other client's bets: %+v", rows)
	}
	return rows[0].ID
}
