package api_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/statement"
)

// stmtView is a statement as GET /api/v1/statements/{id} answers it.
type stmtView struct {
	ID        string            `json:"id"`
	Provider  string            `json:"provider"`
	From      string            `json:"from"`
	To        string            `json:"to"`
	Statement statement.Payload `json:"statement"`
	Signed    statement.Record  `json:"signed"`
}

type stmtHarness struct {
	*slHarness
	w roundsWallet
}

func newStmtHarness(t *testing.T) *stmtHarness {
	t.Helper()
	h := newSLHarnessWith(t, func(o *apitest.Options) { o.AdminToken = csAdminToken })
	h.Clock.Set(time.Date(2026, 10, 10, 12, 0, 0, 0, time.UTC))
	return &stmtHarness{slHarness: h, w: newRoundsWallet(t, h, "100")}
}

// at moves the clock and opens a new session of the same player (a
// session takes bets for an hour).
func (h *stmtHarness) at(t *testing.T, when time.Time, balance string) {
	t.Helper()
	h.Clock.Set(when)
	a := h.mustLaunch(h.w.client, h.w.player, balance, nil)
	h.w.session = a.SessionID
}

func (h *stmtHarness) close(t *testing.T, body map[string]any) *stmtHarnessAnswer {
	t.Helper()
	rec := h.Admin(http.MethodPost, "/admin/v1/clients/"+h.w.client.ID+"/statements", body)
	return &stmtHarnessAnswer{rec.Code, rec.Body.String()}
}

type stmtHarnessAnswer struct {
	code int
	body string
}

func (h *stmtHarness) mustClose(t *testing.T, period, start string) stmtView {
	t.Helper()
	h.Pump()
	rec := h.Admin(http.MethodPost, "/admin/v1/clients/"+h.w.client.ID+"/statements",
		map[string]any{"provider": h.provider, "period": period, "start": start, "reporting_currency": "USD"})
	if rec.Code != http.StatusCreated {
		t.Fatalf("close %s %s: %d %s", period, start, rec.Code, rec.Body)
	}
	var env struct {
		Data stmtView `json:"data"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil {
		t.Fatal(err)
	}
	return env.Data
}

func (h *stmtHarness) get(t *testing.T, id string) stmtView {
	t.Helper()
	rec := h.Get("/api/v1/statements/"+id, h.w.client.Key)
	if rec.Code != http.StatusOK {
		t.Fatalf("get %s: %d %s", id, rec.Code, rec.Body)
	}
	return apitest.Data[stmtView](t, rec)
}

// ggrFromEvents recomputes the provider's real-money GGR of [from, to) up
// to position from the client's ledger events alone: bets, wins and
// rollbacks move the player's wallet, and GGR is what the players lost —
// the negated sum of those postings on the players' wallets.
func (h *stmtHarness) ggrFromEvents(t *testing.T, from, to time.Time, position int64) string {
	t.Helper()
	rows, err := h.Pool.Query(context.Background(), `SELECT body::text FROM events WHERE position <= $1
		AND occurred_at >= $2 AND occurred_at < $3 AND event_type IN ($4, $5, $6, $7) ORDER BY position`,
		position, from, to, domain.EventBetPlaced, domain.EventWinCredited, domain.EventBetRolledBack, domain.EventWinReversed)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var sum int64
	for rows.Next() {
		var b string
		if err := rows.Scan(&b); err != nil {
			t.Fatal(err)
		}
		e, err := domain.DecodeBody([]byte(b))
		if err != nil {
			t.Fatal(err)
		}
		if e.Data.ClientID != h.w.client.ID || e.Data.Provider != h.provider || e.Data.Promo {
			continue
		}
		for _, p := range e.Data.Postings {
			if p.Account == e.StreamID {
				m, err := domain.ParseMoney(p.Amount, domain.MustCurrency("EUR"))
				if err != nil {
					t.Fatal(err)
				}
				sum -= m.Minor()
			}
		}
	}
	return domain.FormatMinor(sum, 2)
}

func line(v stmtView) statement.Line {
	if len(v.Statement.Lines) != 1 {
		return statement.Line{}
	}
	return v.Statement.Lines[0]
}

// TestMonthEndStatements is a month-end run as a finance user does it
// (issue 18): a deal, rates, close October, change the deal, close
// November — October's statement is unchanged by November's deal, totals
// are recomputed from the events alone, an event booked into October
// after its close is carried once into the next statement, and the
// statements verify (and fail when a byte changes).
func TestMonthEndStatements(t *testing.T) {
	h := newStmtHarness(t)
	ctx := context.Background()
	// A tiered deal from October 1 (set before October), marginal: 10 % of
	// the month's EUR GGR up to 5.00, 20 % above.
	h.Clock.Set(time.Date(2026, 9, 30, 12, 0, 0, 0, time.UTC))
	deal := func(body map[string]any) {
		t.Helper()
		if rec := h.Admin(http.MethodPost, "/admin/v1/deals", body); rec.Code != http.StatusCreated && rec.Code != http.StatusOK {
			t.Fatalf("deal %v: %d %s", body, rec.Code, rec.Body)
		}
	}
	deal(map[string]any{"provider": h.provider, "currency": "EUR", "valid_from": "2026-10-01", "kind": "tiered", "mode": "marginal",
		"bands": []any{map[string]any{"from": "0", "to": "5.00", "rate": "0.1"}, map[string]any{"from": "5.00", "rate": "0.2"}}})
	h.Clock.Set(time.Date(2026, 10, 10, 12, 0, 0, 0, time.UTC))
	// tiered is the deal's commission of a month's EUR GGR (minor units),
	// worked out here from the deal's own terms.
	tiered := func(ggr string) string {
		m, err := domain.ParseMoney(ggr, domain.MustCurrency("EUR"))
		if err != nil {
			t.Fatal(err)
		}
		g := m.Minor()
		c := min(g, 500) * 10 / 100
		if g > 500 {
			c += (g - 500) * 20 / 100
		}
		return domain.FormatMinor(c, 2)
	}
	for _, day := range []string{"2026-10-10", "2026-11-05", "2026-11-06"} {
		rec := h.Admin(http.MethodPut, "/admin/v1/fx-rates", map[string]any{"rates": []map[string]any{
			{"day": day, "base": "EUR", "quote": "USD", "rate": "1.1"}}})
		if rec.Code != http.StatusOK {
			t.Fatalf("rates: %d %s", rec.Code, rec.Body)
		}
	}
	w := &h.w
	wantOK(t, w.call("bet", map[string]any{"transaction_id": "oct-b1", "round_id": "oct-r1", "amount": "10"}), "90.00")
	wantOK(t, w.call("win", map[string]any{"transaction_id": "oct-w1", "round_id": "oct-r1", "amount": "4", "round_closed": true}), "94.00")

	h.Clock.Set(time.Date(2026, 10, 31, 12, 0, 0, 0, time.UTC))
	if a := h.close(t, map[string]any{"provider": h.provider, "period": "month", "start": "2026-10"}); a.code != http.StatusConflict ||
		!strings.Contains(a.body, wire.CodePeriodNotEnded) {
		t.Fatalf("closing October before it ended: %d %s", a.code, a.body)
	}
	h.Clock.Set(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
	oct := h.mustClose(t, "month", "2026-10")
	if l := line(oct); l.GGR != "6.00" || l.Commission != "0.70" || l.Rate != "0.2" || l.Bets != "10.00" || l.Wins != "4.00" ||
		l.DealKind != "tiered" || l.DealID == 0 {
		t.Fatalf("October's line %+v", oct.Statement.Lines)
	}
	if r := oct.Statement.Reporting; r == nil || !r.Complete || *r.GGR != "6.60" || *r.Commission != "0.77" {
		t.Fatalf("October in USD %+v", r)
	}
	if oct.Statement.Position == 0 || oct.Statement.CheckpointID == 0 || len(oct.Statement.ChainHash) != 64 {
		t.Fatalf("October stands on %+v", oct.Statement)
	}
	wantClientLog(t, h, oct)
	var hash []byte
	if err := h.Pool.QueryRow(ctx, `SELECT hash FROM events WHERE position = $1`, oct.Statement.Position).Scan(&hash); err != nil {
		t.Fatal(err)
	}
	var cpPos int64
	if err := h.Pool.QueryRow(ctx, `SELECT position FROM checkpoints WHERE id = $1 AND client_id = $2`,
		oct.Statement.CheckpointID, w.client.ID).Scan(&cpPos); err != nil || cpPos < oct.Statement.Position {
		t.Fatalf("checkpoint %d at %d (%v) does not cover position %d", oct.Statement.CheckpointID, cpPos, err, oct.Statement.Position)
	}
	if got := h.ggrFromEvents(t, time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		oct.Statement.Position); got != line(oct).GGR || tiered(got) != line(oct).Commission {
		t.Fatalf("October from the events alone: GGR %s, commission %s; the statement says %+v", got, tiered(got), line(oct))
	}

	// Deals never rewrite a closed period: a version starting in October,
	// even backdated on purpose, is refused now that October is closed.
	rec := h.Admin(http.MethodPost, "/admin/v1/deals", map[string]any{"provider": h.provider, "valid_from": "2026-10-15",
		"kind": "flat", "rate": "0.5", "backdate": true})
	if e := apitest.WantError(t, rec, http.StatusBadRequest, wire.CodeInvalidRequest); e.Error.Details["field"] != "valid_from" ||
		!strings.Contains(e.Error.Message, "closed through 2026-10-31") {
		t.Fatalf("a deal version into closed October: %+v", e.Error)
	}

	// November's deal: a flat 20 % from November 1 (set on November 2:
	// backdated, on purpose and recorded); then November's play.
	deal(map[string]any{"provider": h.provider, "currency": "EUR", "valid_from": "2026-11-01", "kind": "flat", "rate": "0.2",
		"backdate": true})
	h.at(t, time.Date(2026, 11, 5, 12, 0, 0, 0, time.UTC), "94.00")
	wantOK(t, w.call("bet", map[string]any{"transaction_id": "nov-b1", "round_id": "nov-r1", "amount": "20"}), "74.00")
	h.at(t, time.Date(2026, 11, 6, 12, 0, 0, 0, time.UTC), "74.00")
	wantOK(t, w.call("win", map[string]any{"transaction_id": "nov-w1", "round_id": "nov-r1", "amount": "5", "round_closed": true}), "79.00")
	// An event booked into October after its close (a writer whose clock
	// lagged at the turn of the month).
	h.at(t, time.Date(2026, 10, 31, 23, 59, 0, 0, time.UTC), "79.00")
	wantOK(t, w.call("bet", map[string]any{"transaction_id": "oct-late", "round_id": "oct-r2", "amount": "1"}), "78.00")

	h.Clock.Set(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
	nov := h.mustClose(t, "month", "2026-11")
	if l := line(nov); l.GGR != "15.00" || l.Commission != "3.00" || l.Rate != "0.2" || l.DealKind != "flat" || l.DealID == line(oct).DealID {
		t.Fatalf("November's line %+v", nov.Statement.Lines)
	}
	// October's late bet of 1.00 under October's tiered deal: 7.00 owes
	// 0.90 where 6.00 owed 0.70.
	if late := nov.Statement.Late; len(late) != 1 || late[0].StatementID != oct.ID || late[0].GGR != "1.00" || late[0].Commission != "0.20" {
		t.Fatalf("November's late lines %+v", late)
	}
	if tot := nov.Statement.Totals; len(tot) != 1 || tot[0].GGR != "16.00" || tot[0].Commission != "3.20" {
		t.Fatalf("November's totals %+v", tot)
	}
	if got := h.ggrFromEvents(t, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
		nov.Statement.Position); got != line(nov).GGR {
		t.Fatalf("November's GGR from the events alone is %s, the statement says %s", got, line(nov).GGR)
	}
	if again := h.get(t, oct.ID); again.Signed.Payload != oct.Signed.Payload || line(again).Commission != "0.70" {
		t.Fatalf("October changed: %s\nwas %s", again.Signed.Payload, oct.Signed.Payload)
	}
	// December carries nothing of October again.
	h.Clock.Set(time.Date(2027, 1, 3, 9, 0, 0, 0, time.UTC))
	dec := h.mustClose(t, "month", "2026-12")
	if len(dec.Statement.Late) != 0 || len(dec.Statement.Lines) != 0 || len(dec.Statement.Totals) != 0 {
		t.Fatalf("December %+v", dec.Statement)
	}

	t.Run("every statement verifies, and not once a byte changes", func(t *testing.T) {
		for _, v := range []stmtView{oct, nov, dec} {
			payload, sig, pub := []byte(v.Signed.Payload), mustB64(t, v.Signed.Signature), mustB64(t, v.Signed.PublicKey)
			if _, err := statement.Verify(payload, sig, pub); err != nil {
				t.Fatalf("%s: %v", v.ID, err)
			}
			bad := []byte(strings.Replace(v.Signed.Payload, `"format"`, `"formaT"`, 1))
			if _, err := statement.Verify(bad, sig, pub); err == nil {
				t.Fatalf("%s: a changed statement verified", v.ID)
			}
		}
	})
	t.Run("refusals", func(t *testing.T) {
		for _, c := range []struct {
			body map[string]any
			code string
		}{
			{map[string]any{"provider": h.provider, "period": "month", "start": "2026-11"}, wire.CodePeriodClosed},
			{map[string]any{"provider": h.provider, "period": "day", "start": "2026-11-05"}, wire.CodePeriodClosed},
			{map[string]any{"provider": h.provider, "period": "month", "start": "2026-09"}, wire.CodePeriodOutOfOrder},
		} {
			if a := h.close(t, c.body); a.code != http.StatusConflict || !strings.Contains(a.body, c.code) {
				t.Errorf("%v: %d %s", c.body, a.code, a.body)
			}
		}
		for _, c := range []struct {
			body  map[string]any
			field string
		}{
			{map[string]any{"period": "month", "start": "2027-01"}, "provider"},
			{map[string]any{"provider": "no-such-provider", "period": "month", "start": "2027-01"}, "provider"},
			{map[string]any{"provider": h.provider, "period": "week", "start": "2027-01"}, "period"},
			{map[string]any{"provider": h.provider, "period": "month", "start": "January"}, "start"},
			{map[string]any{"provider": h.provider, "period": "month", "start": "2027-01", "reporting_currency": "XXX"}, "reporting_currency"},
		} {
			rec := h.Admin(http.MethodPost, "/admin/v1/clients/"+w.client.ID+"/statements", c.body)
			if e := apitest.WantError(t, rec, http.StatusBadRequest, wire.CodeInvalidRequest); e.Error.Details["field"] != c.field {
				t.Errorf("%v: details %v, want field %s", c.body, e.Error.Details, c.field)
			}
		}
		apitest.WantError(t, h.Admin(http.MethodPost, "/admin/v1/clients/no-such-client/statements",
			map[string]any{"provider": h.provider, "period": "month", "start": "2026-10"}), http.StatusNotFound, wire.CodeNotFound)
		for _, q := range []string{"provider=%00", "provider=a%20b", "per_page=0"} {
			e := apitest.WantError(t, h.Get("/api/v1/statements?"+q, w.client.Key), http.StatusBadRequest, wire.CodeInvalidRequest)
			if e.Error.Details["field"] == nil {
				t.Errorf("%s: details %v", q, e.Error.Details)
			}
		}
		apitest.WantError(t, h.Get("/api/v1/statements/"+"00000000-0000-7000-8000-000000000000", w.client.Key), http.StatusNotFound, wire.CodeNotFound)
		other := newRoundsWallet(t, h.slHarness, "1")
		apitest.WantError(t, h.Get("/api/v1/statements/"+oct.ID, other.client.Key), http.StatusNotFound, wire.CodeNotFound)
		if list := apitest.Data[[]stmtView](t, h.Get("/api/v1/statements", other.client.Key)); len(list) != 0 {
			t.Fatalf("another client lists %d statements", len(list))
		}
	})
	t.Run("the list, CSV and the printable page", func(t *testing.T) {
		list := apitest.Data[[]stmtView](t, h.Get("/api/v1/statements?provider="+h.provider, w.client.Key))
		if len(list) != 3 || list[0].ID != dec.ID || list[2].ID != oct.ID {
			t.Fatalf("list %v", list)
		}
		rec := h.Do(apitest.Request{Method: http.MethodGet, Path: "/api/v1/statements/" + nov.ID, Key: w.client.Key,
			Header: map[string]string{"Accept": "text/csv"}})
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), ",line,EUR,,,,20.00,0.00,5.00,0.00,15.00,") ||
			!strings.Contains(rec.Body.String(), ",late,EUR,"+oct.ID+",2026-10-01,2026-10-31,") || !strings.Contains(rec.Body.String(), ",total,EUR,") {
			t.Fatalf("CSV %d\n%s", rec.Code, rec.Body)
		}
		rec = h.Do(apitest.Request{Method: http.MethodGet, Path: "/api/v1/statements/" + nov.ID, Key: w.client.Key,
			Header: map[string]string{"Accept": "text/html"}})
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") ||
			!strings.Contains(rec.Body.String(), "<td class=\"num\">3.20</td>") || strings.Contains(rec.Body.String(), "<script") ||
			!strings.Contains(rec.Header().Get("Content-Security-Policy"), "default-src 'none'") {
			t.Fatalf("HTML %d %v\n%s", rec.Code, rec.Header(), rec.Body)
		}
	})
	t.Run("the documented recipes", func(t *testing.T) { statementRecipes(t, h, nov) })
}

// statementRecipes runs docs/statements.md's Python script and openssl
// recipe on a real statement and on one with a changed byte.
func statementRecipes(t *testing.T, h *stmtHarness, v stmtView) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "statements.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := func(opening string) string {
		_, rest, ok := strings.Cut(string(doc), "```"+opening)
		body, _, ok2 := strings.Cut(rest, "```")
		if !ok || !ok2 {
			t.Fatalf("docs/statements.md has no block opening %q", opening)
		}
		_, first, _ := strings.Cut(opening, "\n")
		return first + body
	}
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := h.Get("/api/v1/statements/"+v.ID, h.w.client.Key).Body.String()
	bad := strings.Replace(good, `\"ggr\":\"15.00\"`, `\"ggr\":\"15.01\"`, 1)
	if bad == good {
		t.Fatal("the test could not change the statement")
	}
	t.Run("python", func(t *testing.T) {
		py, err := osexec.LookPath("python3")
		if err != nil {
			t.Skip("python3 is not installed: the documented script cannot run here")
		}
		if out, err := osexec.Command(py, "-c", "import cryptography.hazmat.primitives.asymmetric.ed25519").CombinedOutput(); err != nil {
			t.Skipf("python3 has no cryptography package (pip install cryptography): %s", out)
		}
		script := write("verify_statement.py", block("python\n# verify_statement.py"))
		out, err := osexec.Command(py, script, write("good.json", good)).CombinedOutput()
		if err != nil || !strings.HasPrefix(string(out), "OK statement "+v.ID) || !strings.Contains(string(out), "EUR ggr 16.00 commission 3.20") {
			t.Fatalf("script on a good statement: %v\n%s", err, out)
		}
		out, err = osexec.Command(py, script, write("bad.json", bad)).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "BAD signature") {
			t.Fatalf("script on a changed statement: %v\n%s", err, out)
		}
	})
	t.Run("openssl", func(t *testing.T) {
		for _, tool := range []string{"openssl", "jq", "base64", "sh"} {
			if _, err := osexec.LookPath(tool); err != nil {
				t.Skipf("%s is not installed: the documented recipe cannot run here", tool)
			}
		}
		if out, err := osexec.Command("openssl", "version").Output(); err != nil || !regexp.MustCompile(`^OpenSSL [3-9]\.`).Match(out) {
			t.Skipf("openssl %q (%v): Ed25519 with -rawin needs OpenSSL 3.0 or later", out, err)
		}
		recipe := block("sh\n# verify a statement with openssl")
		run := func(body string) (string, error) {
			d := t.TempDir()
			if err := os.WriteFile(filepath.Join(d, "statement.json"), []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := osexec.Command("sh", "-ec", recipe)
			cmd.Dir = d
			out, err := cmd.CombinedOutput()
			return string(out), err
		}
		if out, err := run(good); err != nil || !strings.Contains(out, "Signature Verified Successfully") {
			t.Fatalf("openssl on a good statement: %v\n%s", err, out)
		}
		if out, err := run(bad); err == nil || !strings.Contains(out, "Verification Failure") {
			t.Fatalf("openssl on a changed statement: %v\n%s", err, out)
		}
	})
}

func mustB64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
