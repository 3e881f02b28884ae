package api_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// slWallet is one launched session as a provider sees it.
type slWallet struct {
	h       *slHarness
	session string
	wallet  domain.AccountID
}

// newSLWallet launches a session for a fresh player of a fresh client
// (provider transaction ids are unique per client and provider) holding
// balance.
func newSLWallet(t *testing.T, h *slHarness, balance string) slWallet {
	t.Helper()
	c := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch}, gateway.LaunchSettings{})
	user := apitest.UID("player")
	a := h.mustLaunch(c, user, balance, nil)
	return slWallet{h: h, session: a.SessionID, wallet: domain.PlayerWallet(c.ID, user, slEUR)}
}

func (w slWallet) call(op string, fields map[string]any) *httptest.ResponseRecorder {
	body := map[string]any{"session_id": w.session}
	for k, v := range fields {
		body[k] = v
	}
	return w.h.WalletCall(w.h.provider, w.h.providerSecret, op, body)
}

func wantOK(t *testing.T, rec *httptest.ResponseRecorder, balance string) slWalletAnswer {
	t.Helper()
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	a := apitest.Decode[slWalletAnswer](t, rec)
	if a.Status != "OK" || a.Balance.String() != balance {
		t.Fatalf("answer %+v, want balance %s", a, balance)
	}
	return a
}

// wantError is apitest.WantError that also checks details.retryable, which
// tells the provider whether to retry the call.
func wantError(t *testing.T, rec *httptest.ResponseRecorder, status int, code string, retryable bool) apitest.ErrorBody {
	t.Helper()
	e := apitest.WantError(t, rec, status, code)
	if r, ok := e.Error.Details["retryable"].(bool); !ok || r != retryable {
		t.Fatalf("details.retryable = %v (%T), want %v: %s", e.Error.Details["retryable"], e.Error.Details["retryable"], retryable, rec.Body)
	}
	return e
}

// TestProviderWalletProtocol exercises the provider's calls against the
// real ledger: idempotent retries, rollbacks in either order, wins on
// rolled-back bets, and the one error shape with details.retryable.
func TestProviderWalletProtocol(t *testing.T) {
	h := newSLHarness(t)

	t.Run("retried bet answers the original and moves money once", func(t *testing.T) {
		w := newSLWallet(t, h, "100")
		bet := map[string]any{"transaction_id": "bet-1", "round_id": "round-1", "amount": "10.00"}
		first := wantOK(t, w.call("bet", bet), "90.00")
		again := wantOK(t, w.call("bet", bet), "90.00")
		if again.TransactionID != first.TransactionID || again.ExternalID != "bet-1" || !again.Replayed || first.Replayed {
			t.Fatalf("first %+v, retry %+v", first, again)
		}
		if got := h.Balance(w.wallet); got != 9000 {
			t.Fatalf("wallet %d, want 9000", got)
		}
		if n := len(h.Events(w.wallet, domain.EventBetPlaced)); n != 1 {
			t.Fatalf("%d bet events, want 1", n)
		}
		// A later bet moves the balance on; the retry still answers the
		// original balance.
		wantOK(t, w.call("bet", map[string]any{"transaction_id": "bet-2", "round_id": "round-1", "amount": "5"}), "85.00")
		if late := wantOK(t, w.call("bet", bet), "90.00"); late.TransactionID != first.TransactionID {
			t.Fatalf("late retry %+v", late)
		}
	})

	t.Run("same id with a different payload is a conflict naming the field", func(t *testing.T) {
		w := newSLWallet(t, h, "100")
		wantOK(t, w.call("bet", map[string]any{"transaction_id": "bet-1", "round_id": "r1", "amount": "10"}), "90.00")
		for _, tc := range []struct {
			field string
			call  map[string]any
		}{
			{"amount", map[string]any{"transaction_id": "bet-1", "round_id": "r1", "amount": "11"}},
			{"round_id", map[string]any{"transaction_id": "bet-1", "round_id": "r2", "amount": "10"}},
		} {
			e := wantError(t, w.call("bet", tc.call), http.StatusConflict, wire.CodeIdempotencyConflict, false)
			if e.Error.Details["field"] != tc.field {
				t.Fatalf("conflict names %v, want %s", e.Error.Details["field"], tc.field)
			}
		}
		wantError(t, w.call("win", map[string]any{"transaction_id": "bet-1", "round_id": "r1", "amount": "10"}),
			http.StatusConflict, wire.CodeIdempotencyConflict, false)
		if got := h.Balance(w.wallet); got != 9000 {
			t.Fatalf("wallet %d, want 9000", got)
		}
	})

	t.Run("rollback before the bet: no money moves, the late bet is refused", func(t *testing.T) {
		w := newSLWallet(t, h, "100")
		rb := map[string]any{"transaction_id": "rb-1", "reference_transaction_id": "bet-late", "round_id": "r1"}
		wantOK(t, w.call("rollback", rb), "100.00")
		wantOK(t, w.call("rollback", rb), "100.00") // retried rollback
		wantError(t, w.call("bet", map[string]any{"transaction_id": "bet-late", "round_id": "r1", "amount": "10"}),
			http.StatusConflict, wire.CodeRolledBackEarlier, false)
		if got := h.Balance(w.wallet); got != 10000 {
			t.Fatalf("wallet %d, want 10000", got)
		}
	})

	t.Run("win after rollback of its bet is refused", func(t *testing.T) {
		w := newSLWallet(t, h, "100")
		wantOK(t, w.call("bet", map[string]any{"transaction_id": "bet-1", "round_id": "r1", "amount": "10"}), "90.00")
		wantOK(t, w.call("rollback", map[string]any{"transaction_id": "rb-1", "reference_transaction_id": "bet-1",
			"round_id": "r1"}), "100.00")
		wantError(t, w.call("win", map[string]any{"transaction_id": "win-1", "round_id": "r1", "amount": "25",
			"reference_transaction_id": "bet-1"}), http.StatusConflict, wire.CodeBetRolledBack, false)
		wantError(t, w.call("rollback", map[string]any{"transaction_id": "rb-2", "reference_transaction_id": "bet-1"}),
			http.StatusConflict, wire.CodeAlreadyRolledBack, false)
		if got := h.Balance(w.wallet); got != 10000 {
			t.Fatalf("wallet %d, want 10000", got)
		}
	})

	t.Run("round id and round_closed pass through to the ledger", func(t *testing.T) {
		w := newSLWallet(t, h, "100")
		bet := wantOK(t, w.call("bet", map[string]any{"transaction_id": "bet-1", "round_id": "round-77", "amount": "1"}), "99.00")
		win := wantOK(t, w.call("win", map[string]any{"transaction_id": "win-1", "round_id": "round-77", "amount": "3",
			"round_closed": true}), "102.00")
		if bet.RoundID != "round-77" || win.RoundID != "round-77" {
			t.Fatalf("answers bet %+v win %+v", bet, win)
		}
		bets, wins := h.Events(w.wallet, domain.EventBetPlaced), h.Events(w.wallet, domain.EventWinCredited)
		if len(bets) != 1 || bets[0].Data.RoundID != "round-77" || bets[0].Data.RoundClosed {
			t.Fatalf("bet events %+v", bets)
		}
		if len(wins) != 1 || wins[0].Data.RoundID != "round-77" || !wins[0].Data.RoundClosed || wins[0].Data.ExternalTxID != "win-1" {
			t.Fatalf("win events %+v", wins)
		}
	})

	t.Run("bad signature is 401", func(t *testing.T) {
		w := newSLWallet(t, h, "100")
		rec := h.WalletCall(h.provider, "not-the-provider-secret", "bet",
			map[string]any{"session_id": w.session, "transaction_id": "bet-1", "amount": "1"})
		wantError(t, rec, http.StatusUnauthorized, wire.CodeInvalidSignature, false)
		if got := h.Balance(w.wallet); got != 10000 {
			t.Fatalf("wallet %d, want 10000", got)
		}
	})

	t.Run("other refusals", func(t *testing.T) {
		w := newSLWallet(t, h, "5")
		wantError(t, w.call("bet", map[string]any{"transaction_id": "bet-1"}), http.StatusBadRequest, wire.CodeInvalidRequest, false)
		wantError(t, w.call("bet", map[string]any{"transaction_id": "bet-1", "amount": "10"}),
			http.StatusBadRequest, wire.CodeInsufficientFunds, false)
		wantError(t, w.call("bet", map[string]any{"transaction_id": "bet-1", "amount": "1.001"}),
			http.StatusBadRequest, wire.CodeAmountTooPrecise, false)
		wantError(t, w.call("win", map[string]any{"transaction_id": "win-x", "amount": "1", "reference_transaction_id": "nope"}),
			http.StatusNotFound, wire.CodeTransactionUnknown, false)
		wantError(t, h.WalletCall(h.provider, h.providerSecret, "bet",
			map[string]any{"session_id": "gs_nope", "transaction_id": "b", "amount": "1"}), http.StatusNotFound, wire.CodeNotFound, false)
		wantError(t, w.call("bet", map[string]any{"transaction_id": "bet-2", "amount": "1", "player_id": "someone-else"}),
			http.StatusConflict, wire.CodePlayerMismatch, false)
		// A wrong method on a wallet call is 405 (docs/errors.md), in the
		// wallet's error shape.
		wantError(t, h.Get("/provider/v1/wallet/bet", ""), http.StatusMethodNotAllowed, wire.CodeMethodNotAllowed, false)
	})
}

// TestProviderWalletSessionExpiry: after the session expired, wins and
// rollbacks are accepted, a new bet is refused, and a retry of a bet made
// before expiry still gets its original answer.
func TestProviderWalletSessionExpiry(t *testing.T) {
	h := newSLHarness(t)
	w := newSLWallet(t, h, "100")
	bet1 := map[string]any{"transaction_id": "bet-1", "round_id": "r1", "amount": "10"}
	first := wantOK(t, w.call("bet", bet1), "90.00")
	wantOK(t, w.call("bet", map[string]any{"transaction_id": "bet-2", "round_id": "r2", "amount": "20"}), "70.00")

	h.Clock.Set(slTestNow.Add(slSessionTTL)) // the session expires at launch + TTL

	wantError(t, w.call("bet", map[string]any{"transaction_id": "bet-3", "round_id": "r3", "amount": "1"}),
		http.StatusConflict, wire.CodeSessionExpired, false)
	if again := wantOK(t, w.call("bet", bet1), "90.00"); again.TransactionID != first.TransactionID || !again.Replayed {
		t.Fatalf("retry after expiry %+v, original %+v", again, first)
	}
	wantOK(t, w.call("win", map[string]any{"transaction_id": "win-1", "round_id": "r1", "amount": "15",
		"reference_transaction_id": "bet-1", "round_closed": true}), "85.00")
	wantOK(t, w.call("rollback", map[string]any{"transaction_id": "rb-2", "reference_transaction_id": "bet-2",
		"round_id": "r2"}), "105.00")
	wantOK(t, w.call("balance", nil), "105.00")
	if got := h.Balance(w.wallet); got != 10500 {
		t.Fatalf("wallet %d, want 10500", got)
	}
	if n := len(h.Events(w.wallet, domain.EventBetPlaced)); n != 2 {
		t.Fatalf("%d bet events, want 2", n)
	}
}

// TestProviderWalletRetryableOnOutage: when the service itself fails (here
// the database is gone), the error says the provider should retry.
func TestProviderWalletRetryableOnOutage(t *testing.T) {
	h := newSLHarness(t)
	w := newSLWallet(t, h, "100")
	h.Pool.Close()
	start := time.Now()
	wantError(t, w.call("bet", map[string]any{"transaction_id": "bet-1", "amount": "1"}),
		http.StatusInternalServerError, wire.CodeInternal, true)
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("failing call took %v", d)
	}
}
