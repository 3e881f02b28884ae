package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/roundstore"
	"github.com/pitboss/pitboss/adapters/roundclose"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/projections"
)

// TestCaletaStaleRoundsAndBetOutcomes (issue 16 item 2): a Caleta round
// left open past the document's 48 hours is closed by the ledger once,
// with one wallet.round_closed.v1, and a second run closes nothing; a
// later win on it is still paid. A bet booked and then rolled back
// (ROLLED_BACK) and one whose rollback came first (DISCARDED) are told
// apart in the history and in the provider's round export. The clock is
// the harness's: nothing sleeps.
func TestCaletaStaleRoundsAndBetOutcomes(t *testing.T) {
	h := newCaletaHarness(t)
	ctx := context.Background()
	day := h.Clock.Now().UTC()
	s := h.session("100")
	ok := func(a caletaAnswer) {
		t.Helper()
		if a.Status != "RS_OK" {
			t.Fatalf("answer %+v, want RS_OK", a)
		}
	}
	// CG-open: a bet and a win that leaves the round open.
	ok(s.call("bet", map[string]any{"transaction_uuid": "b1", "round": "CG-open", "amount": 100_000}))
	ok(s.call("win", map[string]any{"transaction_uuid": "w1", "reference_transaction_uuid": "b1", "round": "CG-open",
		"amount": 50_000}))
	// CG-done: closed by its win.
	ok(s.call("bet", map[string]any{"transaction_uuid": "b2", "round": "CG-done", "amount": 100_000}))
	ok(s.call("win", map[string]any{"transaction_uuid": "w2", "reference_transaction_uuid": "b2", "round": "CG-done",
		"amount": 0, "round_closed": true}))
	// CG-rb: a bet booked, then rolled back.
	ok(s.call("bet", map[string]any{"transaction_uuid": "b3", "round": "CG-rb", "amount": 100_000}))
	ok(s.call("rollback", map[string]any{"transaction_uuid": "rb3", "reference_transaction_uuid": "b3", "round": "CG-rb"}))
	// CG-ghost: the rollback came first, so the bet is discarded.
	ok(s.call("rollback", map[string]any{"transaction_uuid": "rb4", "reference_transaction_uuid": "b4", "round": "CG-ghost"}))
	wantCaletaStatus(t, s.call("bet", map[string]any{"transaction_uuid": "b4", "round": "CG-ghost", "amount": 100_000}),
		"RS_ERROR_TRANSACTION_ROLLED_BACK")
	// A round of another player opened 47 hours later: not stale yet.
	h.Clock.Advance(47 * time.Hour)
	young := h.session("100")
	ok(young.call("bet", map[string]any{"transaction_uuid": "b5", "round": "CG-young", "amount": 100_000}))
	h.Clock.Advance(2 * time.Hour)

	job, err := roundclose.New(eventstore.NewRounds(h.Pool), h.Commands, roundclose.Config{
		Ages: gateway.RoundAutoCloseAges(0), Now: h.Clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	closes := func() int {
		t.Helper()
		var n int
		if err := h.Pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE event_type = $1 AND stream_id IN ($2, $3)`,
			string(domain.EventRoundClosed), string(s.wallet), string(young.wallet)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if res, err := job.Tick(ctx); err != nil || !res.Ran || res.Closed != 1 {
		t.Fatalf("first run: %+v, %v; want one round closed", res, err)
	}
	if n := closes(); n != 1 {
		t.Fatalf("%d round_closed events, want 1", n)
	}
	if res, err := job.Tick(ctx); err != nil || !res.Ran || res.Closed != 0 {
		t.Fatalf("second run: %+v, %v; want nothing closed", res, err)
	}
	if n := closes(); n != 1 {
		t.Fatalf("%d round_closed events after the second run, want 1", n)
	}
	// The provider's late win on the closed round is paid: 100 - 1 + 0.5
	// - 1 + 0 - 1 + 1 + 0.3 = 98.80 EUR.
	wantCaletaOK(t, s.call("win", map[string]any{"transaction_uuid": "w1b", "reference_transaction_uuid": "b1",
		"round": "CG-open", "amount": 30_000}), 9_880_000, s.player)
	h.Pump()

	t.Run("history", func(t *testing.T) {
		status := func(typ, external string) string {
			t.Helper()
			var st string
			if err := h.Pool.QueryRow(ctx, `SELECT status FROM readmodels.transactions
				WHERE client_id = $1 AND type = $2 AND external_id = $3`, s.wallet.Client(), typ, external).Scan(&st); err != nil {
				t.Fatalf("%s %s: %v", typ, external, err)
			}
			return st
		}
		if got := status("bet", "b3"); got != string(projections.StatusRolledBack) {
			t.Errorf("the bet booked then rolled back is %q, want rolled_back", got)
		}
		if got := status("rollback", "rb4"); got != string(projections.StatusDiscarded) {
			t.Errorf("the rollback that came before its bet is %q, want discarded", got)
		}
		var round, st string
		var amount int64
		if err := h.Pool.QueryRow(ctx, `SELECT round_id, amount, status FROM readmodels.transactions
			WHERE client_id = $1 AND type = 'round_close'`, s.wallet.Client()).Scan(&round, &amount, &st); err != nil {
			t.Fatalf("the round_close row: %v", err)
		}
		if round != "CG-open" || amount != 0 || st != "settled" {
			t.Errorf("round_close row: round %s, amount %d, status %s", round, amount, st)
		}
		if err := h.Pool.QueryRow(ctx, `SELECT status FROM readmodels.transactions WHERE id = $1`,
			projections.GameResultID(s.wallet.Client(), h.provider, "CG-open")).Scan(&st); err != nil || st != "settled" {
			t.Errorf("game result of CG-open: %q, %v; want settled", st, err)
		}
	})
	t.Run("round export", func(t *testing.T) {
		rounds, err := roundstore.NewRounds(h.Pool).ProviderRounds(ctx, h.provider, day)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]projections.ProviderRound{}
		for _, r := range rounds {
			if r.ClientID == s.wallet.Client() {
				got[r.RoundID] = r
			}
		}
		for round, want := range map[string]projections.Status{"CG-open": projections.StatusAutoClosed,
			"CG-done": projections.StatusSettled, "CG-rb": projections.StatusRolledBack, "CG-ghost": projections.StatusDiscarded} {
			if got[round].Status != want {
				t.Errorf("%s: status %q, want %q (%+v)", round, got[round].Status, want, got[round])
			}
		}
		if g := got["CG-ghost"]; g.DiscardedCount != 1 || g.RollbackCount != 0 || g.GGR() != 0 {
			t.Errorf("CG-ghost: %+v", g)
		}
		if r := got["CG-rb"]; r.RollbackCount != 1 || r.DiscardedCount != 0 || r.Bets != 100 || r.BetRefunds != 100 {
			t.Errorf("CG-rb: %+v", r)
		}
	})
}
