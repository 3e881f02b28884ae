package api_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
)

type txStatus struct {
	Status      string `json:"status"`
	Transaction struct {
		ExternalTransactionID string       `json:"external_transaction_id"`
		State                 string       `json:"state"`
		Kind                  string       `json:"kind"`
		TransactionID         string       `json:"transaction_id"`
		Amount                *json.Number `json:"amount"`
		Currency              string       `json:"currency"`
		RoundID               string       `json:"round_id"`
		Position              int64        `json:"position"`
	} `json:"transaction"`
}

// TestProviderWalletStatus: a provider asks what the ledger holds of one
// of its transaction ids (issue 18 item 5(a)) — found with our ids and
// amount, rolled_back, or not_found — signed like every call, scoped to the
// session's client, moving nothing.
func TestProviderWalletStatus(t *testing.T) {
	h := newSLHarness(t)
	w := newSLWallet(t, h, "10")
	bet := wantOK(t, w.call("bet", map[string]any{"transaction_id": "bet-1", "round_id": "r1", "amount": "2.50"}), "7.50")
	wantOK(t, w.call("bet", map[string]any{"transaction_id": "bet-2", "round_id": "r1", "amount": "1"}), "6.50")
	wantOK(t, w.call("rollback", map[string]any{"transaction_id": "rb-1", "reference_transaction_id": "bet-2", "round_id": "r1"}), "7.50")
	status := func(t *testing.T, w slWallet, id string) txStatus {
		t.Helper()
		rec := w.call("status", map[string]any{"transaction_id": id})
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		return apitest.Decode[txStatus](t, rec)
	}
	t.Run("found, with our ids and amount", func(t *testing.T) {
		s := status(t, w, "bet-1")
		tx := s.Transaction
		if s.Status != "OK" || tx.State != "found" || tx.Kind != "bet" || tx.TransactionID != bet.TransactionID ||
			tx.Amount == nil || tx.Amount.String() != "2.50" || tx.Currency != "EUR" || tx.RoundID != "r1" || tx.ExternalTransactionID != "bet-1" {
			t.Fatalf("status %+v (bet answered %+v)", s, bet)
		}
	})
	t.Run("rolled back", func(t *testing.T) {
		if s := status(t, w, "bet-2"); s.Transaction.State != "rolled_back" || s.Transaction.Kind != "bet" {
			t.Fatalf("status %+v", s)
		}
		if s := status(t, w, "rb-1"); s.Transaction.State != "found" || s.Transaction.Kind != "rollback" {
			t.Fatalf("the rollback itself: %+v", s)
		}
	})
	t.Run("not found", func(t *testing.T) {
		s := status(t, w, "never-sent")
		if s.Transaction.State != "not_found" || s.Transaction.TransactionID != "" || s.Transaction.Amount != nil {
			t.Fatalf("status %+v", s)
		}
	})
	t.Run("another client's session does not see it", func(t *testing.T) {
		other := newSLWallet(t, h, "1")
		if s := status(t, other, "bet-1"); s.Transaction.State != "not_found" {
			t.Fatalf("another client saw %+v", s)
		}
	})
	t.Run("it moves nothing", func(t *testing.T) {
		if got := h.Balance(w.wallet); got != 750 {
			t.Fatalf("wallet %d, want 750", got)
		}
	})
	t.Run("400 without a transaction id", func(t *testing.T) {
		e := wantError(t, w.call("status", map[string]any{}), http.StatusBadRequest, wire.CodeInvalidRequest, false)
		if e.Error.Details["field"] != "transaction_id" {
			t.Fatalf("details %v", e.Error.Details)
		}
	})
	t.Run("401 unsigned", func(t *testing.T) {
		rec := h.Do(apitest.Request{Method: http.MethodPost, Path: "/provider/v1/wallet/status",
			Body:   map[string]any{"session_id": w.session, "transaction_id": "bet-1"},
			Header: map[string]string{"X-Provider-Id": h.provider}})
		apitest.WantError(t, rec, http.StatusUnauthorized, wire.CodeInvalidSignature)
	})
}
