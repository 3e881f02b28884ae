package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// The two deviations from the Caleta document that the wallet core fixes
// for every protocol (issue 33; docs/provider-wallet.md#sessions-and-games).

// relaunch launches user again at the same client a second later, so the
// new session supersedes the one before.
func (h *caletaHarness) relaunch(s caletaSession, balance string) caletaSession {
	h.t.Helper()
	h.Clock.Advance(time.Second)
	a := h.mustLaunch(s.client, s.player, balance, nil)
	if a.SessionID == s.token {
		h.t.Fatalf("the second launch answered the first session %s", a.SessionID)
	}
	return caletaSession{h: h, token: a.SessionID, player: s.player, wallet: s.wallet, client: s.client}
}

// TestCaletaSupersededToken: "RS_ERROR_TOKEN_EXPIRED — when a new token
// exists (this rule applies only for /wallet/bet)"; "expired tokens should
// continue be valid for Win/Rollback transactions if related to a previous
// existing bet". A second launch of the same player on the same provider
// supersedes the first session: its bets are refused, its wins and
// rollbacks of earlier bets are taken, and a retry of a bet it took before
// still answers as the first time.
func TestCaletaSupersededToken(t *testing.T) {
	h := newCaletaHarness(t)
	old := h.session("100")
	wantCaletaOK(t, old.call("bet", map[string]any{"transaction_uuid": "b-1", "amount": 1_000_000}), 9_000_000, old.player)
	wantCaletaOK(t, old.call("bet", map[string]any{"transaction_uuid": "b-2", "round": "CG-2", "amount": 500_000}),
		8_500_000, old.player)
	before := h.Balance(old.wallet)

	cur := h.relaunch(old, "100")
	moved := h.Balance(old.wallet) - before // what the second launch itself moved

	wantCaletaStatus(t, old.call("bet", map[string]any{"transaction_uuid": "b-3", "amount": 100_000}), "RS_ERROR_TOKEN_EXPIRED")
	if got := h.Balance(old.wallet); got != before+moved {
		t.Fatalf("a refused bet moved money: %d, want %d", got, before+moved)
	}
	// A retry of a bet the old session took answers as the first time.
	a := old.call("bet", map[string]any{"transaction_uuid": "b-1", "amount": 1_000_000})
	if a.Status != "RS_OK" {
		t.Fatalf("retry of b-1 on the superseded token: %+v", a)
	}
	// Wins and rollbacks of the old session's bets are taken on its token.
	wantCaletaOK(t, old.call("win", map[string]any{"transaction_uuid": "w-1", "reference_transaction_uuid": "b-1",
		"amount": 2_000_000, "round_closed": true}), (before+moved)*1000+2_000_000, old.player)
	wantCaletaOK(t, old.call("rollback", map[string]any{"transaction_uuid": "rb-2", "reference_transaction_uuid": "b-2",
		"round": "CG-2"}), (before+moved)*1000+2_500_000, old.player)
	// The new token bets; check and balance still answer on the old one.
	if a := cur.call("bet", map[string]any{"transaction_uuid": "b-4", "round": "CG-4", "amount": 100_000}); a.Status != "RS_OK" {
		t.Fatalf("bet on the new token: %+v", a)
	}
	if a := old.call("balance", nil); a.Status != "RS_OK" {
		t.Fatalf("balance on the superseded token: %+v", a)
	}
}

// TestProviderWalletSupersededSession: the same rule in our own protocol,
// answered 409 SESSION_EXPIRED.
func TestProviderWalletSupersededSession(t *testing.T) {
	h := newSLHarness(t)
	c := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch}, gateway.LaunchSettings{})
	user := apitest.UID("player")
	first := slWallet{h: h, session: h.mustLaunch(c, user, "100", nil).SessionID, wallet: domain.PlayerWallet(c.ID, user, slEUR)}
	wantOK(t, first.call("bet", map[string]any{"transaction_id": "b-1", "round_id": "r-1", "amount": "10.00"}), "90.00")
	h.Clock.Advance(time.Second)
	second := slWallet{h: h, session: h.mustLaunch(c, user, "100", nil).SessionID, wallet: first.wallet}
	wantError(t, first.call("bet", map[string]any{"transaction_id": "b-2", "round_id": "r-2", "amount": "1.00"}),
		http.StatusConflict, wire.CodeSessionExpired, false)
	if rec := first.call("win", map[string]any{"transaction_id": "w-1", "round_id": "r-1", "amount": "5.00",
		"reference_transaction_id": "b-1"}); rec.Code != http.StatusOK {
		t.Fatalf("win of the superseded session's bet: %d %s", rec.Code, rec.Body)
	}
	if rec := second.call("bet", map[string]any{"transaction_id": "b-3", "round_id": "r-3", "amount": "1.00"}); rec.Code != http.StatusOK {
		t.Fatalf("bet on the new session: %d %s", rec.Code, rec.Body)
	}
}

// TestCaletaGameByProviderCode: a game_code that is the provider code of
// another catalog game of the session's provider books under that game,
// as our id of it does; another provider's code is RS_ERROR_INVALID_GAME.
func TestCaletaGameByProviderCode(t *testing.T) {
	h := newCaletaHarness(t)
	ctx := context.Background()
	table, code := apitest.UID("game"), apitest.UID("CG-TABLE")
	h.AddGame(table, h.provider, "Second game", "live", true)
	if err := h.Gateway.SetProviderGameCode(ctx, table, code); err != nil {
		t.Fatal(err)
	}
	rival, rivalGame, rivalCode := apitest.UID("prov"), apitest.UID("game"), apitest.UID("RIVAL")
	if err := h.Gateway.UpsertProvider(ctx, gateway.Provider{ID: rival, Name: "Rival", Secret: "rival-secret", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	h.AddGame(rivalGame, rival, "Rival game", "slots", true)
	if err := h.Gateway.SetProviderGameCode(ctx, rivalGame, rivalCode); err != nil {
		t.Fatal(err)
	}
	s := h.session("100")
	wantCaletaOK(t, s.call("bet", map[string]any{"transaction_uuid": "b-code", "amount": 1_000_000, "game_code": code}),
		9_000_000, s.player)
	wantCaletaOK(t, s.call("bet", map[string]any{"transaction_uuid": "b-id", "round": "CG-2", "amount": 1_000_000,
		"game_code": table}), 8_000_000, s.player)
	for _, e := range h.Events(s.wallet, domain.EventBetPlaced) {
		if e.Data.GameID != table {
			t.Fatalf("bet %s booked under %s, want %s", e.Data.ExternalTxID, e.Data.GameID, table)
		}
	}
	for _, bad := range []string{rivalCode, rivalGame, "no-such-game"} {
		wantCaletaStatus(t, s.call("bet", map[string]any{"transaction_uuid": "b-" + bad, "amount": 100_000, "game_code": bad}),
			"RS_ERROR_INVALID_GAME")
	}
}

// TestCaletaBalanceLimit (issue 37, item 2): a win that would take the
// balance past what Caleta's int64 of 1/100000 units can say is refused
// before it is booked (RS_ERROR_WRONG_TYPES, nothing moves), and a balance
// already past it (an operator's deposit) is refused on /balance the same
// way, never a booked call answered RS_ERROR_UNKNOWN.
func TestCaletaBalanceLimit(t *testing.T) {
	h := newCaletaHarness(t)
	c := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch, gateway.ScopeTransactionsWrite}, gateway.LaunchSettings{})
	user := apitest.UID("player")
	a := h.mustLaunch(c, user, "0", nil)
	s := caletaSession{h: h, token: a.SessionID, player: user, wallet: domain.PlayerWallet(c.ID, user, slEUR), client: c}
	// EUR's largest Caleta balance: math.MaxInt64 units of 1/100000 EUR,
	// 92,233,720,368,547.75807 EUR, so 92,233,720,368,547.75 in cents.
	h.Deposit(c, user, "92233720368547.00", "EUR")
	wantCaletaOK(t, s.call("bet", map[string]any{"transaction_uuid": "b-1", "amount": 1_000}), 9_223_372_036_854_699_000, user)
	before := h.Balance(s.wallet)
	wantCaletaStatus(t, s.call("win", map[string]any{"transaction_uuid": "w-1", "reference_transaction_uuid": "b-1",
		"amount": 77_000}), "RS_ERROR_WRONG_TYPES")
	if got := h.Balance(s.wallet); got != before {
		t.Fatalf("a refused win moved money: %d minor, want %d", got, before)
	}
	// To the last cent that fits.
	wantCaletaOK(t, s.call("win", map[string]any{"transaction_uuid": "w-2", "reference_transaction_uuid": "b-1",
		"amount": 76_000}), 9_223_372_036_854_775_000, user)
	// An operator's deposit takes it past: /balance refuses, known, not a fault.
	h.Deposit(c, user, "1.00", "EUR")
	wantCaletaStatus(t, s.call("balance", nil), "RS_ERROR_WRONG_TYPES")
}
