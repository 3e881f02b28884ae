package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/projector/projectortest"
	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/gateway"
)

// rqHarness is the API over read models holding the projectortest session
// (16 events, stamped by its clock and named by its ids), with keys of
// every relevant kind; reports are asked on the session's second day.
type rqHarness struct {
	*apitest.Harness
	full, noRead, other string
}

func newRQHarness(t *testing.T) *rqHarness {
	t.Helper()
	clock := &projectortest.Clock{}
	h := &rqHarness{Harness: apitest.New(t, apitest.Options{Clock: apitest.StoppedAt(projectortest.Day2), AdminToken: admToken,
		LedgerClock: clock, IDs: projectortest.IDs{}, ReadWait: 200 * time.Millisecond})}
	ctx := t.Context()
	if _, err := projectortest.Session(ctx, h.Commands, clock); err != nil {
		t.Fatal(err)
	}
	h.Pump() // the projector's store path, without Kafka
	for _, r := range []struct{ client, rate, from string }{{"", "0.10", "2025-01-01"}, {projectortest.Client, "0.20", "2025-03-02"}} {
		from, _ := time.Parse(time.DateOnly, r.from)
		if err := h.ReadModels.SetCommissionRate(ctx, projectortest.Provider, r.client, r.rate, from); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []string{projectortest.Client, "other"} {
		h.AddClient(c, "sandbox")
	}
	h.full, _ = h.IssueKey(projectortest.Client, gateway.ScopeTransactionsRead, gateway.ScopeReportsRead, gateway.ScopeWalletRead)
	h.noRead, _ = h.IssueKey(projectortest.Client, gateway.ScopeWalletRead, gateway.ScopeTransactionsWrite)
	h.other, _ = h.IssueKey("other", gateway.ScopeTransactionsRead, gateway.ScopeReportsRead)
	return h
}

// get is a GET with key, asking for accept when it is set.
func (h *rqHarness) get(path, key, accept string) *httptest.ResponseRecorder {
	r := apitest.Request{Method: http.MethodGet, Path: path, Key: key}
	if accept != "" {
		r.Header = map[string]string{"Accept": accept}
	}
	return h.Do(r)
}

type rqItem struct {
	ID           string       `json:"id"`
	Type         string       `json:"type"`
	Amount       json.Number  `json:"amount"`
	Currency     string       `json:"currency"`
	Status       string       `json:"status"`
	CreatedAt    string       `json:"created_at"`
	Provider     *string      `json:"provider"`
	Game         *string      `json:"game"`
	PlayerID     *string      `json:"player_id"`
	RoundID      *string      `json:"round_id"`
	ExternalID   *string      `json:"external_id"`
	BalanceAfter *json.Number `json:"balance_after"`
	Position     int64        `json:"position"`
}

type rqList struct {
	Success    bool               `json:"success"`
	Data       []rqItem           `json:"data"`
	Pagination apitest.Pagination `json:"pagination"`
}

func str(p *string) string {
	if p == nil {
		return "-"
	}
	return *p
}

func (it rqItem) line() string {
	return strings.Join([]string{it.Type, it.Amount.String(), it.Status, str(it.PlayerID), str(it.RoundID)}, " ")
}

func TestTransactionsEndpoint(t *testing.T) {
	t.Parallel()
	h := newRQHarness(t)
	day2 := url.QueryEscape("2025-03-02T00:00:00Z")

	t.Run("200 first page, defaults", func(t *testing.T) {
		rec := h.get("/api/v1/transactions", h.full, "")
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		if got := rec.Header().Get(api.HeaderLedgerPosition); got != "16" {
			t.Errorf("%s = %q, want 16", api.HeaderLedgerPosition, got)
		}
		body := apitest.Decode[rqList](t, rec)
		p := body.Pagination
		if !body.Success || p.Page != 1 || p.PerPage != 50 || p.Total != 21 || !p.TotalExact || len(body.Data) != 21 {
			t.Fatalf("envelope = %+v with %d rows, want page 1, per_page 50, total 21 exact, 21 rows", p, len(body.Data))
		}
		first := body.Data[0]
		// The session's clock ticks a microsecond on every reading; the
		// reversal of w1 reads it three times: its first decision asks for
		// the bet w1 settled, and was made from the ledger writer's cache,
		// which did not hold the reversal's own record — a record read and
		// not created — so the writer decided it again from the store.
		if first.line() != "transfer -50.00 settled p1 -" || first.Currency != "EUR" || first.Position != 16 ||
			str(first.ExternalID) != "tr-3" || first.BalanceAfter == nil || first.BalanceAfter.String() != "144.00" ||
			first.Provider != nil || first.CreatedAt != "2025-03-02T10:00:00.000008Z" || len(first.ID) != 36 {
			t.Errorf("first row = %+v", first)
		}
		last := body.Data[20]
		if last.line() != "deposit 1000.00 settled - -" || last.Position != 1 || last.PlayerID != nil {
			t.Errorf("last row = %+v", last)
		}
		// A game result: provider and game of its round, no balance.
		gr := body.Data[4]
		if gr.line() != "game_result 4.00 settled p1 r5" || str(gr.Game) != "slot-2" || str(gr.Provider) != "prov-a" ||
			gr.BalanceAfter != nil || gr.Position != 13 {
			t.Errorf("game result row = %+v", gr)
		}
	})

	pages := []struct {
		name      string
		query     string
		wantLines []string
		wantTotal int64
	}{
		{name: "page 2 of 5", query: "page=2&per_page=5", wantTotal: 21, wantLines: []string{
			"bet 0.00 settled p1 r5", "game_result -7.00 pending p2 r4", "bet -7.00 settled p2 r4",
			"win 0.00 settled p2 r3", "bet -5.00 settled p2 r3"}},
		{name: "last page", query: "page=5&per_page=5", wantTotal: 21, wantLines: []string{"deposit 1000.00 settled - -"}},
		{name: "past the end", query: "page=6&per_page=5", wantTotal: 21},
		{name: "game results", query: "type=game_result", wantTotal: 5, wantLines: []string{
			"game_result 4.00 settled p1 r5", "game_result -7.00 pending p2 r4", "game_result -10.00 settled p2 r3",
			"game_result 0.00 rolled_back p1 r2", "game_result -10.00 settled p1 r1"}},
		{name: "rolled back", query: "status=rolled_back", wantTotal: 3, wantLines: []string{
			"game_result 0.00 rolled_back p1 r2", "bet -20.00 rolled_back p1 r2", "win 25.00 rolled_back p1 r1"}},
		{name: "player, page 2", query: "player_id=p2&per_page=3&page=2", wantTotal: 8, wantLines: []string{
			"win 0.00 settled p2 r3", "bet -5.00 settled p2 r3", "game_result -10.00 settled p2 r3"}},
		{name: "provider and game", query: "provider=prov-a&game=slot-2&type=win", wantTotal: 2, wantLines: []string{
			"win 4.00 settled p1 r5", "win 0.00 settled p2 r3"}},
		{name: "currency", query: "currency=EUR&per_page=1", wantTotal: 21, wantLines: []string{"transfer -50.00 settled p1 -"}},
		{name: "from day 2", query: "from=" + day2 + "&type=bet", wantTotal: 2, wantLines: []string{
			"bet 0.00 settled p1 r5", "bet -7.00 settled p2 r4"}},
		{name: "to day 2", query: "to=" + day2 + "&type=transfer", wantTotal: 2, wantLines: []string{
			"transfer 100.00 settled p2 -", "transfer 200.00 settled p1 -"}},
	}
	for _, tc := range pages {
		t.Run("200 "+tc.name, func(t *testing.T) {
			rec := h.get("/api/v1/transactions?"+tc.query, h.full, "")
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			body := apitest.Decode[rqList](t, rec)
			var lines []string
			for _, it := range body.Data {
				lines = append(lines, it.line())
			}
			if strings.Join(lines, "|") != strings.Join(tc.wantLines, "|") || body.Pagination.Total != tc.wantTotal {
				t.Errorf("got total %d\n  %s\nwant total %d\n  %s", body.Pagination.Total, strings.Join(lines, "\n  "),
					tc.wantTotal, strings.Join(tc.wantLines, "\n  "))
			}
			if body.Data == nil {
				t.Error("data is null, want []")
			}
		})
	}

	t.Run("200 another client sees nothing of acme", func(t *testing.T) {
		body := apitest.Decode[rqList](t, h.get("/api/v1/transactions", h.other, ""))
		if len(body.Data) != 0 || body.Pagination.Total != 0 {
			t.Errorf("other client sees %d rows, total %d", len(body.Data), body.Pagination.Total)
		}
	})

	errs := []struct {
		name, query, key string
		status           int
		code, field      string
	}{
		{"page 0", "page=0", h.full, 400, wire.CodeInvalidRequest, "page"},
		{"page not a number", "page=abc", h.full, 400, wire.CodeInvalidRequest, "page"},
		{"page beyond the limit", "page=1000001", h.full, 400, wire.CodeInvalidRequest, "page"},
		{"per_page 0", "per_page=0", h.full, 400, wire.CodeInvalidRequest, "per_page"},
		{"per_page above 500", "per_page=501", h.full, 400, wire.CodeInvalidRequest, "per_page"},
		{"per_page fractional", "per_page=1.5", h.full, 400, wire.CodeInvalidRequest, "per_page"},
		{"unknown type", "type=refund", h.full, 400, wire.CodeInvalidRequest, "type"},
		{"unknown status", "status=done", h.full, 400, wire.CodeInvalidRequest, "status"},
		{"unknown currency", "currency=XXQ", h.full, 400, wire.CodeUnknownCurrency, "currency"},
		{"bad player id", "player_id=a%3Ab", h.full, 400, wire.CodeInvalidRequest, "player_id"},
		{"bad provider", "provider=a%20b", h.full, 400, wire.CodeInvalidRequest, "provider"},
		{"from not RFC 3339", "from=2025-03-01", h.full, 400, wire.CodeInvalidRequest, "from"},
		{"to before from", "from=" + day2 + "&to=2025-03-01T00:00:00Z", h.full, 400, wire.CodeInvalidRequest, "to"},
		{"negative min_position", "min_position=-1", h.full, 400, wire.CodeInvalidRequest, "min_position"},
		{"no key", "", "", 401, wire.CodeUnauthorized, ""},
		{"unknown key", "", "pb_test_nope", 401, wire.CodeUnauthorized, ""},
		{"key without transactions:read", "", h.noRead, 403, wire.CodeForbidden, ""},
		{"beyond the ledger's head", "min_position=17", h.full, 400, wire.CodePositionBeyondHead, "min_position"},
	}
	for _, tc := range errs {
		t.Run(http.StatusText(tc.status)+" "+tc.name, func(t *testing.T) {
			rec := h.get("/api/v1/transactions?"+tc.query, tc.key, "")
			if rec.Code != tc.status {
				t.Fatalf("status = %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			body := apitest.Decode[apitest.ErrorBody](t, rec)
			if body.Success || body.Error.Code != tc.code {
				t.Errorf("error = %+v, want code %s", body.Error, tc.code)
			}
			if tc.field != "" && body.Error.Details["field"] != tc.field {
				t.Errorf("details = %v, want field %q", body.Error.Details, tc.field)
			}
			if tc.code == wire.CodePositionBeyondHead && body.Error.Details["head"] != json.Number("16") {
				t.Errorf("details %v, want head 16", body.Error.Details)
			}
		})
	}

	t.Run("200 min_position reached", func(t *testing.T) {
		rec := h.get("/api/v1/transactions?min_position=16&per_page=1", h.full, "")
		if rec.Code != http.StatusOK || rec.Header().Get(api.HeaderLedgerPosition) != "16" {
			t.Errorf("status %d, position %q", rec.Code, rec.Header().Get(api.HeaderLedgerPosition))
		}
	})
}

func TestReportsEndpoints(t *testing.T) {
	t.Parallel()
	h := newRQHarness(t)
	const days = "from=2025-03-01&to=2025-03-02"

	type ggrRow map[string]any
	ggr := func(t *testing.T, query string) []ggrRow {
		t.Helper()
		rec := h.get("/api/v1/reports/ggr?"+query, h.full, "")
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		if rec.Header().Get(api.HeaderLedgerPosition) != "16" {
			t.Errorf("position = %q", rec.Header().Get(api.HeaderLedgerPosition))
		}
		return apitest.Decode[struct {
			Data []ggrRow `json:"data"`
		}](t, rec).Data
	}
	t.Run("200 GGR by provider", func(t *testing.T) {
		rows := ggr(t, days+"&group_by=provider")
		want := `[map[bet_refunds:20.00 bets:47.00 currency:EUR ggr:27.00 jackpot_ggr:0.00 jackpot_win_reversals:0.00 jackpot_wins:0.00 ` +
			`net_bets:27.00 net_wins:0.00 players:2 ` +
			`promo_bet_refunds:0.00 promo_bets:0.00 promo_ggr:-4.00 promo_win_reversals:0.00 promo_wins:4.00 ` +
			`provider:prov-a rounds:5 win_reversals:25.00 wins:25.00]]`
		if got := fmt.Sprint(rows); got != want {
			t.Errorf("rows\n got %s\nwant %s", got, want)
		}
	})
	t.Run("200 GGR by month", func(t *testing.T) {
		rows := ggr(t, days+"&group_by=month&group_by=currency")
		if len(rows) != 1 || rows[0]["month"] != "2025-03" || rows[0]["ggr"] != json.Number("27.00") || rows[0]["players"] != json.Number("2") {
			t.Errorf("rows = %v", rows)
		}
	})
	t.Run("200 GGR of one day, default grouping", func(t *testing.T) {
		rows := ggr(t, "from=2025-03-02&to=2025-03-02")
		if len(rows) != 1 || rows[0]["ggr"] != json.Number("32.00") || rows[0]["promo_ggr"] != json.Number("-4.00") ||
			rows[0]["rounds"] != json.Number("2") || rows[0]["day"] != nil {
			t.Errorf("rows = %v", rows)
		}
	})
	t.Run("200 GGR defaults to the 30 days to today", func(t *testing.T) {
		if rows := ggr(t, ""); len(rows) != 1 || rows[0]["ggr"] != json.Number("27.00") {
			t.Errorf("rows = %v", rows)
		}
	})
	t.Run("200 GGR as CSV", func(t *testing.T) {
		rec := h.get("/api/v1/reports/ggr?"+days+"&group_by=day,game", h.full, "text/csv")
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/csv") {
			t.Fatalf("status %d, content type %q", rec.Code, rec.Header().Get("Content-Type"))
		}
		want := `day,provider,game,currency,bets,bet_refunds,net_bets,wins,win_reversals,net_wins,ggr,promo_bets,promo_bet_refunds,promo_wins,promo_win_reversals,promo_ggr,jackpot_wins,jackpot_win_reversals,jackpot_ggr,rounds,players
2025-03-01,prov-a,slot-1,EUR,30.00,20.00,10.00,25.00,0.00,25.00,-15.00,0.00,0.00,0.00,0.00,0.00,0.00,0.00,0.00,2,1
2025-03-01,prov-a,slot-2,EUR,10.00,0.00,10.00,0.00,0.00,0.00,10.00,0.00,0.00,0.00,0.00,0.00,0.00,0.00,0.00,1,1
2025-03-02,prov-a,slot-1,EUR,7.00,0.00,7.00,0.00,25.00,-25.00,32.00,0.00,0.00,0.00,0.00,0.00,0.00,0.00,0.00,1,1
2025-03-02,prov-a,slot-2,EUR,0.00,0.00,0.00,0.00,0.00,0.00,0.00,0.00,0.00,4.00,0.00,-4.00,0.00,0.00,0.00,1,1
`
		if rec.Body.String() != want {
			t.Errorf("csv\n%s\nwant\n%s", rec.Body, want)
		}
		if rec.Header().Get(api.HeaderLedgerPosition) != "16" {
			t.Errorf("position = %q", rec.Header().Get(api.HeaderLedgerPosition))
		}
	})
	t.Run("200 commission per month", func(t *testing.T) {
		rec := h.get("/api/v1/reports/commission?"+days, h.full, "")
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		// 0.10 x -5.00 on day 1 (default deal) + 0.20 x 32.00 on day 2 (acme's deal).
		want := `{"success":true,"data":[{"month":"2025-03","provider":"prov-a","currency":"EUR","ggr":27.00,"rate":0.2,"rate_changed":true,"commission":5.90,"deal_id":2,"deal_kind":"flat"}]}`
		if got := strings.TrimSpace(rec.Body.String()); got != want {
			t.Errorf("body\n got %s\nwant %s", got, want)
		}
	})
	t.Run("200 commission per day as CSV", func(t *testing.T) {
		rec := h.get("/api/v1/reports/commission?"+days+"&group_by=day,provider", h.full, "text/csv, application/json;q=0.5")
		want := "day,provider,currency,ggr,rate,rate_changed,commission\n" +
			"2025-03-01,prov-a,EUR,-5.00,0.1,false,0.00\n" + // a negative day owes nothing
			"2025-03-02,prov-a,EUR,32.00,0.2,false,6.40\n"
		if rec.Code != http.StatusOK || rec.Body.String() != want {
			t.Errorf("status %d\n%s\nwant\n%s", rec.Code, rec.Body, want)
		}
	})
	t.Run("200 commission of a client without GGR is empty", func(t *testing.T) {
		rec := h.get("/api/v1/reports/commission?"+days, h.other, "")
		if got := strings.TrimSpace(rec.Body.String()); rec.Code != http.StatusOK || got != `{"success":true,"data":[]}` {
			t.Errorf("status %d: %s", rec.Code, got)
		}
	})

	errs := []struct {
		name, path, key string
		status          int
		code, field     string
	}{
		{"unknown dimension", "/api/v1/reports/ggr?group_by=week", h.full, 400, wire.CodeInvalidRequest, "group_by"},
		{"day and month", "/api/v1/reports/ggr?group_by=day,month", h.full, 400, wire.CodeInvalidRequest, "group_by"},
		{"game in a commission report", "/api/v1/reports/commission?group_by=game", h.full, 400, wire.CodeInvalidRequest, "group_by"},
		{"bad from", "/api/v1/reports/ggr?from=2025-13-01", h.full, 400, wire.CodeInvalidRequest, "from"},
		{"timestamp instead of a day", "/api/v1/reports/commission?to=2025-03-01T00:00:00Z", h.full, 400, wire.CodeInvalidRequest, "to"},
		{"from after to", "/api/v1/reports/ggr?from=2025-03-03&to=2025-03-01", h.full, 400, wire.CodeInvalidRequest, "from"},
		{"more than three years", "/api/v1/reports/ggr?from=2020-01-01&to=2025-03-01", h.full, 400, wire.CodeInvalidRequest, "to"},
		{"bad min_position", "/api/v1/reports/ggr?min_position=x", h.full, 400, wire.CodeInvalidRequest, "min_position"},
		{"no key", "/api/v1/reports/ggr", "", 401, wire.CodeUnauthorized, ""},
		{"commission without a key", "/api/v1/reports/commission", "", 401, wire.CodeUnauthorized, ""},
		{"key without reports:read", "/api/v1/reports/ggr", h.noRead, 403, wire.CodeForbidden, ""},
		{"commission without reports:read", "/api/v1/reports/commission", h.noRead, 403, wire.CodeForbidden, ""},
		{"beyond the ledger's head", "/api/v1/reports/commission?min_position=100", h.full, 400, wire.CodePositionBeyondHead, "min_position"},
	}
	for _, tc := range errs {
		t.Run(http.StatusText(tc.status)+" "+tc.name, func(t *testing.T) {
			rec := h.get(tc.path, tc.key, "")
			if rec.Code != tc.status {
				t.Fatalf("status = %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			body := apitest.Decode[apitest.ErrorBody](t, rec)
			if body.Error.Code != tc.code || (tc.field != "" && body.Error.Details["field"] != tc.field) {
				t.Errorf("error = %+v, want code %s field %q", body.Error, tc.code, tc.field)
			}
		})
	}
}

// The wallet balance reads committed state: it reflects the chain head.
func TestWalletBalancePosition(t *testing.T) {
	t.Parallel()
	h := newRQHarness(t)
	rec := h.get("/api/v1/wallet/balance?player_id=p1", h.full, "")
	if rec.Code != http.StatusOK || rec.Header().Get(api.HeaderLedgerPosition) != "16" ||
		!strings.Contains(rec.Body.String(), `"balance":144.00`) {
		t.Errorf("status %d, position %q: %s", rec.Code, rec.Header().Get(api.HeaderLedgerPosition), rec.Body)
	}
	rec = h.get("/api/v1/wallet/balance?min_position=17", h.full, "")
	if rec.Code != http.StatusBadRequest || apitest.Decode[apitest.ErrorBody](t, rec).Error.Code != wire.CodePositionBeyondHead {
		t.Errorf("min_position beyond the head: status %d: %s", rec.Code, rec.Body)
	}
}
