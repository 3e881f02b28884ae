package api_test

import (
	"net/http"
	"testing"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
)

// TestProviderWalletSettledBetIsNotRolledBack reproduces issue 17 item 6:
// bet 5 on a balance of 10, a win of 20 naming the bet and closing the
// round, then a rollback of the bet answered 200 with balance 30 (the
// stake back and the win kept). The rollback is refused 409 BET_SETTLED
// and moves nothing; once the provider reverses the win, the same
// rollback goes through, and its retry replays.
func TestProviderWalletSettledBetIsNotRolledBack(t *testing.T) {
	h := newSLHarness(t)
	w := newSLWallet(t, h, "10")
	wantOK(t, w.call("bet", map[string]any{"transaction_id": "bet-1", "round_id": "r1", "amount": "5"}), "5.00")
	wantOK(t, w.call("win", map[string]any{"transaction_id": "win-1", "round_id": "r1", "amount": "20",
		"reference_transaction_id": "bet-1", "round_closed": true}), "25.00")

	rollback := map[string]any{"transaction_id": "rb-1", "reference_transaction_id": "bet-1", "round_id": "r1"}
	for range 2 { // a refused rollback leaves no record: its retry is refused alike
		wantError(t, w.call("rollback", rollback), http.StatusConflict, wire.CodeBetSettled, false)
	}
	if got := h.Balance(w.wallet); got != 2500 {
		t.Fatalf("wallet %d after the refused rollback, want 2500", got)
	}
	if n := len(h.Events(w.wallet, domain.EventBetRolledBack)); n != 0 {
		t.Fatalf("%d bet refunds booked, want none", n)
	}

	wantOK(t, w.call("rollback", map[string]any{"transaction_id": "rw-1", "reference_transaction_id": "win-1",
		"round_id": "r1"}), "5.00")
	first := wantOK(t, w.call("rollback", rollback), "10.00")
	again := wantOK(t, w.call("rollback", rollback), "10.00")
	if first.Replayed || !again.Replayed || again.TransactionID != first.TransactionID {
		t.Fatalf("rollback %+v, its retry %+v", first, again)
	}
	if got := h.Balance(w.wallet); got != 1000 {
		t.Fatalf("wallet %d at the end, want 1000", got)
	}
}
