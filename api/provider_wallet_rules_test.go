package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
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

// TestProviderWalletGameMustBeTheProviders reproduces issue 17 item 7: a
// bet naming a game that is not in the catalog (or is another provider's)
// was booked, and its GGR reported, under that game. A call may name any
// game of the session's provider in the catalog (a lobby moves between
// tables in one session); the default is the session's game. A disabled
// game still takes calls: disabling stops launches, the sessions already
// open play on (docs/provider-wallet.md).
func TestProviderWalletGameMustBeTheProviders(t *testing.T) {
	h := newSLHarness(t)
	h.AddGame("lobby-table", h.provider, "Another table", "live", true)
	h.AddGame("retired-slot", h.provider, "Retired slot", "slots", false)
	h.AddProvider("prov-b", "", gateway.ProviderKindDemo)
	h.AddGame("b-slot", "prov-b", "Slot of another provider", "slots", true)
	w := newSLWallet(t, h, "100")
	wantOK(t, w.call("bet", map[string]any{"transaction_id": "bet-0", "round_id": "r0", "amount": "1"}), "99.00")

	tests := []struct {
		name, op, game string
		wantGame       string // booked under; empty: refused 400 INVALID_REQUEST naming game_id
	}{
		{"bet naming a game not in the catalog", "bet", "other-game", ""},
		{"bet naming another provider's game", "bet", "b-slot", ""},
		{"win naming a game not in the catalog", "win", "other-game", ""},
		{"win naming another provider's game", "win", "b-slot", ""},
		{"rollback naming a game not in the catalog", "rollback", "other-game", ""},
		{"rollback naming another provider's game", "rollback", "b-slot", ""},
		{"bet naming no game", "bet", "", h.game},
		{"bet naming the session's game", "bet", h.game, h.game},
		{"bet naming another game of the provider", "bet", "lobby-table", "lobby-table"},
		{"bet naming a disabled game of the provider", "bet", "retired-slot", "retired-slot"},
		{"win naming a disabled game of the provider", "win", "retired-slot", "retired-slot"},
		{"rollback naming another game of the provider", "rollback", "lobby-table", "lobby-table"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := h.Balance(w.wallet)
			call := map[string]any{"transaction_id": fmt.Sprintf("%s-%d", tc.op, i+1), "round_id": "r0"}
			switch tc.op {
			case "bet", "win":
				call["amount"] = "1"
			case "rollback":
				call["reference_transaction_id"] = fmt.Sprintf("never-seen-%d", i+1)
			}
			if tc.game != "" {
				call["game_id"] = tc.game
			}
			rec := w.call(tc.op, call)
			if tc.wantGame == "" {
				e := wantError(t, rec, http.StatusBadRequest, wire.CodeInvalidRequest, false)
				if e.Error.Details["field"] != "game_id" {
					t.Fatalf("details.field = %v, want game_id: %s", e.Error.Details["field"], rec.Body)
				}
				if got := h.Balance(w.wallet); got != before {
					t.Fatalf("wallet %d after a refused call, was %d", got, before)
				}
				return
			}
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			typ := map[string]domain.EventType{"bet": domain.EventBetPlaced, "win": domain.EventWinCredited,
				"rollback": domain.EventRollbackRecorded}[tc.op]
			evs := h.Events(w.wallet, typ)
			if len(evs) == 0 || evs[len(evs)-1].Data.GameID != tc.wantGame {
				t.Fatalf("%s events %+v, want the last booked under %s", typ, evs, tc.wantGame)
			}
		})
	}
}

// TestProviderWalletBodyIsJSON: the provider wallet's body, like every
// other JSON body, must be sent as application/json (issue 17, item 11);
// a signed call with another or no Content-Type is 400 naming the header
// and moves nothing.
func TestProviderWalletBodyIsJSON(t *testing.T) {
	h := newSLHarness(t)
	w := newSLWallet(t, h, "10")
	for i, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded", "application/json; charset=latin1"} {
		raw := fmt.Sprintf(`{"session_id":%q,"transaction_id":"bet-ct-%d","round_id":"r1","amount":"1"}`, w.session, i)
		path := "/provider/v1/wallet/bet"
		rec := h.Do(apitest.Request{Method: http.MethodPost, Path: path, Body: raw, Header: map[string]string{
			"Content-Type": ct, "X-Provider-Id": h.provider,
			"X-Signature": apitest.SignV2(h.providerSecret, h.Clock.Now().Unix(), http.MethodPost, path, []byte(raw))}})
		e := wantError(t, rec, http.StatusBadRequest, wire.CodeInvalidRequest, false)
		if e.Error.Details["header"] != "Content-Type" {
			t.Errorf("Content-Type %q: details %v, want header Content-Type", ct, e.Error.Details)
		}
	}
	if got := h.Balance(w.wallet); got != 1000 {
		t.Fatalf("wallet %d, want 1000: a refused call moved money", got)
	}
	wantOK(t, w.call("bet", map[string]any{"transaction_id": "bet-ok", "round_id": "r1", "amount": "1"}), "9.00")
}
