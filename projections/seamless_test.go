package projections_test

import (
	"testing"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/projections"
	"github.com/pitboss/pitboss/projections/projectionstest"
)

// TestSeamlessMirrorIsNoGameMoney: a seamless client's game event leads
// with a mirror leg (the client's external account to the player's
// wallet, taking it to the operator's balance): the history row and GGR
// count the game's money alone, the balance follows the operator.
func TestSeamlessMirrorIsNoGameMoney(t *testing.T) {
	l := projectionstest.NewLedger(t, day1)
	reported := func(balance string) func(*domain.GameTx) {
		return func(g *domain.GameTx) {
			m, err := domain.ParseMoney(balance, projectionstest.EUR)
			if err != nil {
				t.Fatal(err)
			}
			g.Reported = &domain.Reported{TxID: "op-" + balance, Balance: m}
		}
	}
	bet := l.Bet(projectionstest.Game("b1", "r1", reported("90.00")), "10.00")
	win := l.Win(projectionstest.Game("w1", "r1", reported("125.50")), "25.50", "b1")
	if len(bet.Data.Postings) != 4 || len(win.Data.Postings) != 4 {
		t.Fatalf("postings %v / %v: want the mirror leg and the movement", bet.Data.Postings, win.Data.Postings)
	}
	hist, _ := projections.ByName(projections.History)
	bal, _ := projections.ByName(projections.Balances)
	none := func(projections.GameTxKey) (projections.GameTx, bool) { return projections.GameTx{}, false }
	for _, tc := range []struct {
		e            domain.Event
		amount, bets int64
		wins         int64
		balance      int64
	}{
		{bet, -10_00, 10_00, 0, 90_00},
		{win, 25_50, 0, 25_50, 35_50},
	} {
		ch, err := hist.Apply(tc.e, none)
		if err != nil {
			t.Fatal(err)
		}
		if got := ch.Transactions[0].Amount; got != tc.amount {
			t.Errorf("%s: history amount %d, want %d", tc.e.Type, got, tc.amount)
		}
		if g := ch.GGR[0]; g.Bets != tc.bets || g.Wins != tc.wins {
			t.Errorf("%s: GGR bets %d wins %d, want %d %d", tc.e.Type, g.Bets, g.Wins, tc.bets, tc.wins)
		}
		b, err := bal.Apply(tc.e, none)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.Balances[0].Balance; got != tc.balance {
			t.Errorf("%s: balance delta %d, want %d (the mirror leg with the movement)", tc.e.Type, got, tc.balance)
		}
	}
}
