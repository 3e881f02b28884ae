package forwarder_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pitboss/pitboss/adapters/forwarder"
	"github.com/pitboss/pitboss/domain"
)

// ledger applies real domain decisions to a view, as the event store does.
type ledger struct {
	t   *testing.T
	v   *domain.View
	pos int64
}

func newLedger(t *testing.T) *ledger { return &ledger{t: t, v: domain.NewView()} }

func (l *ledger) apply(ch domain.Change, err error) domain.Event {
	l.t.Helper()
	if err != nil {
		l.t.Fatal(err)
	}
	e, err := l.v.Apply(ch)
	if err != nil {
		l.t.Fatal(err)
	}
	l.pos++
	e.Position = l.pos
	return e
}

func env() domain.Env {
	return domain.Env{Now: time.Date(2026, 5, 1, 12, 0, 0, 123456789, time.UTC), EventID: uuid.NewString()}
}

func mustMoney(t *testing.T, s string, c domain.Currency) domain.Money {
	t.Helper()
	m, err := domain.ParseMoney(s, c)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestBuildCallback(t *testing.T) {
	t.Parallel()
	tests := []struct {
		currency                                  string
		deposit, betAmt, winAmt                   string
		wantBet, wantWin, wantCredit, wantBalance [4]string // bet, win, bet rollback, win reversal
	}{
		{"EUR", "100.00", "10.00", "25.50",
			[4]string{"10.00", "0.00", "-10.00", "0.00"},
			[4]string{"0.00", "25.50", "0.00", "-25.50"},
			[4]string{"-10.00", "25.50", "10.00", "-25.50"},
			[4]string{"90.00", "115.50", "100.00", "90.00"}},
		{"JPY", "1000", "100", "250",
			[4]string{"100", "0", "-100", "0"},
			[4]string{"0", "250", "0", "-250"},
			[4]string{"-100", "250", "100", "-250"},
			[4]string{"900", "1150", "1000", "900"}},
		{"BTC", "1", "0.00000001", "0.5",
			[4]string{"0.00000001", "0.00000000", "-0.00000001", "0.00000000"},
			[4]string{"0.00000000", "0.50000000", "0.00000000", "-0.50000000"},
			[4]string{"-0.00000001", "0.50000000", "0.00000001", "-0.50000000"},
			[4]string{"0.99999999", "1.49999999", "1.00000000", "0.99999999"}},
	}
	for _, tc := range tests {
		t.Run(tc.currency, func(t *testing.T) {
			c := domain.MustCurrency(tc.currency)
			l := newLedger(t)
			g := func(tx string) domain.GameTx {
				return domain.GameTx{Client: "acme", Player: "p1", Provider: "demo", Game: "g1", Round: "r1", ExternalTxID: tx, Currency: c}
			}
			// given a player with a deposit, a bet, a win, and both rolled
			// back (the win first: a bet its win settled is not refunded)
			l.apply(domain.DecideDeposit(l.v, domain.ClientTx{Client: "acme", Player: "p1", ExternalTxID: "d1", Currency: c},
				mustMoney(t, tc.deposit, c), env()))
			bet := l.apply(domain.DecideBet(l.v, g("b1"), mustMoney(t, tc.betAmt, c), env()))
			win := l.apply(domain.DecideWin(l.v, g("w1"), mustMoney(t, tc.winAmt, c), "", env()))
			reversal := l.apply(domain.DecideRollback(l.v, g("rb2"), "w1", env()))
			refund := l.apply(domain.DecideRollback(l.v, g("rb1"), "b1", env()))
			events := []domain.Event{bet, win, refund, reversal}
			for i, e := range events {
				// when the callback is built
				body, err := forwarder.BuildCallback(e)
				if err != nil {
					t.Fatal(err)
				}
				// then amounts are JSON numbers with the currency's decimals
				var raw map[string]json.RawMessage
				if err := json.Unmarshal(body, &raw); err != nil {
					t.Fatal(err)
				}
				for field, want := range map[string]string{"bet_amount": tc.wantBet[i], "win_amount": tc.wantWin[i],
					"credit_amount": tc.wantCredit[i], "balance_after": tc.wantBalance[i]} {
					if string(raw[field]) != want {
						t.Fatalf("%s: %s = %s, want %s", e.Type, field, raw[field], want)
					}
				}
				if string(raw["member_account"]) != `"p1"` || string(raw["game_uid"]) != `"g1"` ||
					string(raw["transaction_id"]) != `"`+e.ID+`"` || string(raw["occurred_at"]) != `"2026-05-01T12:00:00.123456789Z"` {
					t.Fatalf("%s: %s", e.Type, body)
				}
			}
		})
	}
}

func TestBuildCallbackEdgeCases(t *testing.T) {
	t.Parallel()
	c := domain.MustCurrency("EUR")
	l := newLedger(t)
	l.apply(domain.DecideDeposit(l.v, domain.ClientTx{Client: "acme", Player: "p1", ExternalTxID: "d1", Currency: c},
		mustMoney(t, "5.00", c), env()))
	promo := domain.GameTx{Client: "acme", Player: "p1", Provider: "demo", ExternalTxID: "free-1", Currency: c, Promo: true}
	tests := []struct {
		name          string
		e             domain.Event
		forwarded     bool
		bet, win, cr  string
		wantReference string
	}{
		{"a rollback of a transaction never seen moves nothing",
			l.apply(domain.DecideRollback(l.v, domain.GameTx{Client: "acme", Player: "p1", Provider: "demo", ExternalTxID: "rb-x",
				Currency: c}, "ghost", env())), true, "0.00", "0.00", "0.00", "ghost"},
		{"a free spin bets zero", l.apply(domain.DecideBet(l.v, promo, domain.Zero(c), env())), true, "0.00", "0.00", "0.00", ""},
		{"a deposit is not forwarded", l.apply(domain.DecideDeposit(l.v, domain.ClientTx{Client: "acme", Player: "p1",
			ExternalTxID: "d2", Currency: c}, mustMoney(t, "1.00", c), env())), false, "", "", "", ""},
		{"a launch is not forwarded", l.apply(domain.DecideLaunch(l.v, domain.Launch{Client: "acme", Player: "p1",
			Provider: "demo", Game: "g1", Session: "s1", ExternalTxID: "l1", Currency: c, ExpiresAt: time.Now()}, env())),
			false, "", "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, err := forwarder.BuildCallback(tc.e)
			if err != nil {
				t.Fatal(err)
			}
			if (body != nil) != tc.forwarded {
				t.Fatalf("forwarded = %v, want %v", body != nil, tc.forwarded)
			}
			if !tc.forwarded {
				return
			}
			var p struct {
				Bet       json.RawMessage `json:"bet_amount"`
				Win       json.RawMessage `json:"win_amount"`
				Credit    json.RawMessage `json:"credit_amount"`
				Reference string          `json:"reference_transaction_id"`
			}
			_ = json.Unmarshal(body, &p)
			if string(p.Bet) != tc.bet || string(p.Win) != tc.win || string(p.Credit) != tc.cr || p.Reference != tc.wantReference {
				t.Fatalf("callback %s", body)
			}
		})
	}
	t.Run("an amount that is not decimal text is refused, never written as JSON", func(t *testing.T) {
		e := tests[1].e
		for _, bad := range []string{"1e3", "NaN", "", "1.", ".5", "01.00", "1,00", "0x10", "1.0}"} {
			e.Data.Amount = bad
			if _, err := forwarder.BuildCallback(e); err == nil {
				t.Fatalf("amount %q accepted", bad)
			}
		}
	})
}

func TestPrepare(t *testing.T) {
	t.Parallel()
	c := domain.MustCurrency("EUR")
	l := newLedger(t)
	dep := l.apply(domain.DecideDeposit(l.v, domain.ClientTx{Client: "acme", ExternalTxID: "d1", Currency: c},
		mustMoney(t, "5.00", c), env()))
	raw, err := domain.EncodeBody(dep)
	if err != nil {
		t.Fatal(err)
	}
	out, ok, err := forwarder.Prepare(raw)
	if err != nil || !ok {
		t.Fatalf("prepare: %v, %v", ok, err)
	}
	if out.EventID != dep.ID || out.Kind != "deposit" || out.ClientID != "acme" || out.StreamID != "client:acme:EUR" ||
		out.StreamVersion != 1 || out.Callback != nil || !out.OccurredAt.Equal(dep.OccurredAt) {
		t.Fatalf("outgoing %+v", out)
	}
	var envl struct{ Data json.RawMessage }
	_ = json.Unmarshal(out.Webhook, &envl)
	if string(envl.Data) != string(raw) {
		t.Fatalf("webhook data %s, want the canonical body %s", envl.Data, raw)
	}

	unknown := dep
	unknown.Type = "wallet.something_new.v1"
	raw2, _ := domain.EncodeBody(unknown)
	if _, ok, err := forwarder.Prepare(raw2); ok || err != nil {
		t.Fatalf("unknown type: %v, %v; want skipped without error", ok, err)
	}
	if _, _, err := forwarder.Prepare([]byte(`{"not":"an event"`)); err == nil {
		t.Fatal("garbage prepared")
	}
}
