package stack_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/pitboss/pitboss/chaos/stack"
)

// seamlessWorld is one consistent seamless history: a bet won, a bet
// rolled back, a voided bet the operator applied and cancelled, a voided
// bet it never applied (its retry refused).
type seamlessWorld struct {
	players []*stack.Player
	sim     stack.SimState
	moves   []stack.LedgerMove
	follow  []stack.FollowUp
	calls   []*stack.Call
}

func newSeamlessWorld() *seamlessWorld {
	p := &stack.Player{ID: "p", Currency: "EUR", Exp: 2, Deposit: 10_000}
	tx := func(id, typ, ptx, ref string, moved int64, undone bool) stack.SimTx {
		x := stack.SimTx{ID: id, Key: typ + "/" + ptx, Type: typ, Player: "p", Currency: "EUR", ProviderTxID: ptx,
			BetRef: ref, Undone: undone}
		x.Moved.Cash = moved
		return x
	}
	refused := &stack.Call{Op: "bet", TxID: "v2", Player: p, Outcome: stack.Outcome{Reply: stack.Reply{
		Status: http.StatusConflict, Body: []byte(`{"error":{"code":"ROLLED_BACK_BEFORE_ARRIVAL"}}`)}}}
	return &seamlessWorld{
		players: []*stack.Player{p},
		sim: stack.SimState{
			Players: []stack.SimPlayer{{ID: "p", Balances: map[string]stack.SimBalance{"EUR": {Cash: json.Number("99.50")}}}},
			Transactions: []stack.SimTx{tx("o1", "WITHDRAW", "b1", "b1", -100, false), tx("o2", "DEPOSIT", "w1", "b1", 50, false),
				tx("o3", "WITHDRAW", "b2", "b2", -200, true), tx("o4", "CANCEL", "b2", "b2", 200, false),
				tx("o5", "WITHDRAW", "v1", "v1", -30, true), tx("o6", "CANCEL", "v1", "v1", 30, false)},
		},
		moves: []stack.LedgerMove{
			{Type: "wallet.bet_placed.v1", Player: "p", TxID: "b1", OperatorTxID: "o1", Signed: -100},
			{Type: "wallet.win_credited.v1", Player: "p", TxID: "w1", Ref: "b1", OperatorTxID: "o2", Signed: 50},
			{Type: "wallet.bet_placed.v1", Player: "p", TxID: "b2", OperatorTxID: "o3", Signed: -200},
			{Type: "wallet.bet_rolled_back.v1", Player: "p", TxID: "rb2", Ref: "b2", OperatorTxID: "o4", Signed: 200},
		},
		follow: []stack.FollowUp{
			{ID: 1, Action: "cancel", MoveID: "v1", State: "settled", Outcome: stack.OutcomeCancelled},
			{ID: 2, Action: "cancel", MoveID: "v2", State: "settled", Outcome: stack.OutcomeNeverApplied},
			{ID: 3, Action: "resend", Move: "credit", MoveID: "w1", State: "settled", Outcome: stack.OutcomeBooked},
		},
		calls: []*stack.Call{acked("bet", "b1", "e1", p, 100), acked("win", "w1", "e2", p, 50), refused},
	}
}

// TestSeamlessCheck: the consistent history passes; each case breaks one
// property and the check names it.
func TestSeamlessCheck(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(w *seamlessWorld)
		field  func(r stack.SeamlessReport) []string
	}{
		{"consistent", func(*seamlessWorld) {}, nil},
		{"the operator holds a cent more", func(w *seamlessWorld) {
			w.sim.Players[0].Balances["EUR"] = stack.SimBalance{Cash: "99.51"}
		}, func(r stack.SeamlessReport) []string { return r.OperatorDiffs }},
		{"a credit applied twice", func(w *seamlessWorld) {
			w.sim.Transactions = append(w.sim.Transactions, w.sim.Transactions[1])
		}, func(r stack.SeamlessReport) []string { return r.AppliedTwice }},
		{"a credit the ledger never booked", func(w *seamlessWorld) {
			w.moves = append(w.moves[:1], w.moves[2:]...)
		}, func(r stack.SeamlessReport) []string { return r.Unbooked }},
		{"a bet booked the operator never took", func(w *seamlessWorld) {
			w.sim.Transactions = w.sim.Transactions[1:]
		}, func(r stack.SeamlessReport) []string { return r.NotAtOperator }},
		{"a booked bet under another operator id", func(w *seamlessWorld) {
			w.moves[0].OperatorTxID = "o9"
		}, func(r stack.SeamlessReport) []string { return r.NotAtOperator }},
		{"a voided bet still taken at the operator", func(w *seamlessWorld) {
			w.sim.Transactions = w.sim.Transactions[:5]
			w.sim.Transactions[4].Undone = false
		}, func(r stack.SeamlessReport) []string { return r.Voids }},
		{"a voided bet booked", func(w *seamlessWorld) {
			w.moves = append(w.moves, stack.LedgerMove{Type: "wallet.bet_placed.v1", Player: "p", TxID: "v2"})
		}, func(r stack.SeamlessReport) []string { return r.Voids }},
		{"a follow-up still pending", func(w *seamlessWorld) {
			w.follow[1].State = "pending"
		}, func(r stack.SeamlessReport) []string { return r.Voids }},
		{"a re-send the operator refused", func(w *seamlessWorld) {
			w.follow[2].Outcome = "refused by the operator: PAM_ERR_X"
		}, func(r stack.SeamlessReport) []string { return r.Voids }},
		{"a bet refused that was not voided", func(w *seamlessWorld) {
			w.follow = append(w.follow[:1], w.follow[2])
		}, func(r stack.SeamlessReport) []string { return r.Provider }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newSeamlessWorld()
			tc.mutate(w)
			r := stack.SeamlessCheck(w.players, w.sim, w.moves, w.follow, w.calls)
			total := 0
			for _, l := range r.Problems() {
				total += len(l)
			}
			if tc.field == nil {
				if total != 0 {
					t.Fatalf("a consistent history failed: %+v", r.Problems())
				}
				return
			}
			if len(tc.field(r)) == 0 {
				t.Fatalf("not found; the report: %+v", r.Problems())
			}
		})
	}
}

func TestParseMinor(t *testing.T) {
	for _, tc := range []struct {
		text string
		exp  int
		want int64
		bad  bool
	}{
		{"99.50", 2, 9950, false}, {"100", 2, 10000, false}, {"-1.5", 2, -150, false}, {"1000", 0, 1000, false},
		{"0.00000001", 8, 1, false}, {"1.234", 2, 0, true}, {"12.5", 0, 0, true}, {".5", 2, 0, true}, {"x", 2, 0, true},
	} {
		got, err := stack.ParseMinor(tc.text, tc.exp)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("ParseMinor(%q, %d) = %d, %v", tc.text, tc.exp, got, err)
		}
	}
}
