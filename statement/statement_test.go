package statement_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/audit"
	"github.com/pitboss/pitboss/projections"
	"github.com/pitboss/pitboss/statement"
)

func TestParsePeriod(t *testing.T) {
	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	for _, c := range []struct {
		kind, start    string
		from, to       string
		wantErrContain string
	}{
		{kind: "month", start: "2026-10", from: "2026-10-01", to: "2026-10-31"},
		{kind: "month", start: "2024-02", from: "2024-02-01", to: "2024-02-29"},
		{kind: "day", start: "2026-10-05", from: "2026-10-05", to: "2026-10-05"},
		{kind: "month", start: "2026-10-05", wantErrContain: "2026-10"},
		{kind: "day", start: "2026-10", wantErrContain: "2026-10-05"},
		{kind: "day", start: "2026-02-30", wantErrContain: "2026-10-05"},
		{kind: "week", start: "2026-10", wantErrContain: "month or day"},
	} {
		from, to, err := statement.ParsePeriod(c.kind, c.start)
		if c.wantErrContain != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErrContain) {
				t.Errorf("%s %s: error %v, want one naming %q", c.kind, c.start, err, c.wantErrContain)
			}
			continue
		}
		if err != nil || !from.Equal(day(c.from)) || !to.Equal(day(c.to)) {
			t.Errorf("%s %s: %s..%s %v, want %s..%s", c.kind, c.start, from, to, err, c.from, c.to)
		}
	}
}

func TestLinesTakeTheProvidersRowsPerCurrency(t *testing.T) {
	ggr := []projections.GGRRow{
		{Provider: "p", Currency: "USD", Scale: 2, Bets: 1000, Wins: 400, BetRefunds: 100, PromoWins: 50, Rounds: 3, Players: 2,
			JackpotWins: 300, JackpotWinReversals: 100},
		{Provider: "p", Currency: "EUR", Scale: 2, Bets: 500, Wins: 700},
		{Provider: "other", Currency: "EUR", Scale: 2, Bets: 99999},
	}
	com := []projections.CommissionRow{
		{Provider: "p", Currency: "USD", Scale: 2, GGR: 500, Commission: 50, Rate: "0.1"},
		{Provider: "other", Currency: "EUR", Scale: 2, Commission: 777},
	}
	lines := statement.Lines("p", ggr, com)
	if len(lines) != 2 || lines[0].Currency != "EUR" || lines[1].Currency != "USD" {
		t.Fatalf("lines %+v", lines)
	}
	eur, usd := lines[0], lines[1]
	if eur.GGR != "-2.00" || eur.Commission != "0.00" || eur.Rate != "" {
		t.Errorf("EUR %+v", eur)
	}
	if usd.Bets != "10.00" || usd.BetRefunds != "1.00" || usd.GGR != "5.00" || usd.PromoGGR != "-0.50" || usd.Commission != "0.50" ||
		usd.Rate != "0.1" || usd.Rounds != 3 || usd.Players != 2 {
		t.Errorf("USD %+v", usd)
	}
	// Jackpot money is its own columns, outside GGR and commission.
	if usd.JackpotWins != "3.00" || usd.JackpotWinReversals != "1.00" || usd.JackpotGGR != "-2.00" || eur.JackpotGGR != "0.00" {
		t.Errorf("jackpot columns: USD %+v, EUR %+v", usd, eur)
	}
}

func TestLateChangesAreCarriedOnce(t *testing.T) {
	oct := statement.Payload{ID: "oct", From: "2026-10-01", To: "2026-10-31",
		Lines: []statement.Line{{Currency: "EUR", GGR: "100.00", Commission: "10.00"}}}
	nov := statement.Payload{ID: "nov", From: "2026-11-01", To: "2026-11-30",
		Lines: []statement.Line{{Currency: "EUR", GGR: "50.00", Commission: "5.00"}},
		Late:  []statement.Late{{StatementID: "oct", Currency: "EUR", GGR: "3.00", Commission: "0.30"}}}
	eur := func(ggr, com string) []statement.Line {
		return []statement.Line{{Currency: "EUR", GGR: ggr, Commission: com}}
	}
	for _, c := range []struct {
		name  string
		prior []statement.Prior
		want  string
	}{
		{"nothing changed", []statement.Prior{{Payload: oct, Now: eur("100.00", "10.00")}}, ""},
		{"a late win lowers October", []statement.Prior{{Payload: oct, Now: eur("97.00", "9.70")}}, "oct EUR -3.00 -0.30"},
		{"a change already carried by November is not carried again",
			[]statement.Prior{{Payload: oct, Now: eur("103.00", "10.30")}, {Payload: nov, Now: eur("50.00", "5.00")}}, ""},
		{"only what came since",
			[]statement.Prior{{Payload: oct, Now: eur("104.00", "10.40")}, {Payload: nov, Now: eur("49.00", "4.90")}},
			"oct EUR 1.00 0.10|nov EUR -1.00 -0.10"},
		{"a new currency", []statement.Prior{{Payload: oct, Now: append(eur("100.00", "10.00"),
			statement.Line{Currency: "BTC", GGR: "0.00100000", Commission: "0.00000000"})}}, "oct BTC 0.00100000 0.00000000"},
	} {
		late, err := statement.LateChanges(c.prior)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var got []string
		for _, l := range late {
			got = append(got, l.StatementID+" "+l.Currency+" "+l.GGR+" "+l.Commission)
		}
		if strings.Join(got, "|") != c.want {
			t.Errorf("%s: late %q, want %q", c.name, strings.Join(got, "|"), c.want)
		}
	}
}

func TestTotalsAddLateToLines(t *testing.T) {
	tot, err := statement.Totals([]statement.Line{{Currency: "EUR", GGR: "50.00", Commission: "5.00"}},
		[]statement.Late{{Currency: "EUR", GGR: "-3.00", Commission: "-0.30"}, {Currency: "BTC", GGR: "0.5", Commission: "0.05"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(tot) != 2 || tot[0] != (statement.Total{Currency: "BTC", GGR: "0.50000000", Commission: "0.05000000"}) ||
		tot[1] != (statement.Total{Currency: "EUR", GGR: "47.00", Commission: "4.70"}) {
		t.Fatalf("totals %+v", tot)
	}
}

func signedPayload(t *testing.T) (statement.Payload, ed25519.PrivateKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	g, c := "12.00", "1.20"
	return statement.Payload{Format: statement.Format, ID: "0190a5b2-0000-7000-8000-000000000001", ClientID: "acme", Provider: "prov",
		Period: statement.PeriodMonth, From: "2026-10-01", To: "2026-10-31", ClosedAt: "2026-11-01T00:05:00.000000Z",
		ClosedBy: "admin:ab12", Position: 42, ChainHash: strings.Repeat("ab", 32), CheckpointID: 7,
		LogSize: 17, LogRoot: base64.StdEncoding.EncodeToString(make([]byte, 32)),
		KeyID: audit.CheckpointKeyID(pub), Lines: []statement.Line{{Currency: "EUR", Bets: "20.00", BetRefunds: "0.00",
			Wins: "8.00", WinReversals: "0.00", GGR: "12.00", PromoBets: "0.00", PromoBetRefunds: "0.00", PromoWins: "0.00",
			PromoWinReversals: "0.00", PromoGGR: "0.00", Commission: "1.20", Rate: "0.1"}},
		Totals:    []statement.Total{{Currency: "EUR", GGR: "12.00", Commission: "1.20"}},
		Reporting: &statement.Reporting{Currency: "USD", Complete: true, GGR: &g, Commission: &c}}, priv
}

func TestSignedStatementsVerifyAndAnyChangedByteFails(t *testing.T) {
	p, priv := signedPayload(t)
	payload, sig, err := statement.Sign(p, priv)
	if err != nil {
		t.Fatal(err)
	}
	pub := priv.Public().(ed25519.PublicKey)
	got, err := statement.Verify(payload, sig, pub)
	if err != nil || got.ID != p.ID || got.Totals[0].GGR != "12.00" {
		t.Fatalf("verify: %+v %v", got, err)
	}
	for i := range payload {
		bad := append([]byte(nil), payload...)
		bad[i] ^= 0x01
		if _, err := statement.Verify(bad, sig, pub); err == nil {
			t.Fatalf("byte %d changed and the statement still verifies", i)
		}
	}
	other, _, _ := ed25519.GenerateKey(rand.Reader)
	if _, err := statement.Verify(payload, sig, other); err == nil {
		t.Fatal("another key verified the statement")
	}
}

func TestPayloadIsCanonicalAndValidated(t *testing.T) {
	p, _ := signedPayload(t)
	b, err := statement.Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := statement.Parse(b); err != nil {
		t.Fatalf("parse own encoding: %v", err)
	}
	if _, err := statement.Parse([]byte(strings.Replace(string(b), `"format":`, `"format" :`, 1))); err == nil {
		t.Fatal("a re-spaced payload parsed")
	}
	if !strings.Contains(string(b), `"checkpoint_id":7,"log_size":17,"log_root":"AAAA`) {
		t.Fatalf("the log's fields are not after checkpoint_id: %s", b)
	}
	// A statement closed before the log existed has neither field, and
	// its bytes still parse.
	old := p
	old.LogSize, old.LogRoot = 0, ""
	ob, err := statement.Encode(old)
	if err != nil || strings.Contains(string(ob), "log_") {
		t.Fatalf("without a log: %s %v", ob, err)
	}
	if _, err := statement.Parse(ob); err != nil {
		t.Fatalf("parse a statement without a log: %v", err)
	}
	for name, mutate := range map[string]func(*statement.Payload){
		"a month that is not one":       func(p *statement.Payload) { p.To = "2026-10-30" },
		"a day over two days":           func(p *statement.Payload) { p.Period, p.To = statement.PeriodDay, "2026-10-02" },
		"a position without a hash":     func(p *statement.Payload) { p.ChainHash = "" },
		"an amount that is not decimal": func(p *statement.Payload) { p.Totals[0].GGR = "1e3" },
		"a jackpot amount that is not decimal": func(p *statement.Payload) {
			p.Lines[0].JackpotWins, p.Lines[0].JackpotWinReversals, p.Lines[0].JackpotGGR = "0.00", "0.00", "x"
		},
		"a log size without a root": func(p *statement.Payload) { p.LogRoot = "" },
		"a log root without a size": func(p *statement.Payload) { p.LogSize = 0 },
		"a log root of 31 bytes":    func(p *statement.Payload) { p.LogRoot = base64.StdEncoding.EncodeToString(make([]byte, 31)) },
		"a log without a position":  func(p *statement.Payload) { p.Position, p.ChainHash, p.CheckpointID = 0, "", 0 },
		"lines out of order": func(p *statement.Payload) {
			p.Lines = append(p.Lines, p.Lines[0])
		},
		"an incomplete conversion with amounts": func(p *statement.Payload) {
			p.Reporting = &statement.Reporting{Currency: "USD", GGR: p.Reporting.GGR, Commission: p.Reporting.Commission,
				MissingRateDays: []string{"2026-10-03"}}
		},
	} {
		q, _ := signedPayload(t)
		q.Lines = append([]statement.Line(nil), p.Lines...)
		q.Totals = append([]statement.Total(nil), p.Totals...)
		mutate(&q)
		if _, err := statement.Encode(q); err == nil {
			t.Errorf("%s: encoded", name)
		}
	}
}
