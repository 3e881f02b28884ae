package api_test

import (
	"net/http"
	"testing"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// TestDuplicateAndCaseFoldedKeysAreRefused: a signed bet whose amount is
// given twice, or as "Amount", used to book the last (or case-folded)
// value while a proxy or WAF reading the first value saw another amount.
// Such a body is 400 INVALID_REQUEST naming the key, and moves no money
// (issue 17, item 3).
func TestDuplicateAndCaseFoldedKeysAreRefused(t *testing.T) {
	t.Parallel()
	h := newSLHarness(t)

	t.Run("provider wallet bet", func(t *testing.T) {
		w := newSLWallet(t, h, "100")
		for _, tc := range []struct{ name, amounts, field string }{
			{"amount twice", `"amount":"0.01","amount":"0.02"`, "amount"},
			{"amount twice, once escaped", `"amount":"0.01","\u0061mount":"0.02"`, "amount"},
			{"Amount", `"Amount":"0.02"`, "Amount"},
			{"amount and Amount", `"amount":"0.01","Amount":"0.02"`, "Amount"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				body := `{"session_id":"` + w.session + `","transaction_id":"bet-keys","round_id":"r1",` + tc.amounts + `}`
				e := wantError(t, h.With(t).WalletCall(h.provider, h.providerSecret, "bet", body),
					http.StatusBadRequest, wire.CodeInvalidRequest, false)
				if e.Error.Details["field"] != tc.field {
					t.Fatalf("details %v, want field %q", e.Error.Details, tc.field)
				}
				if got := h.Balance(w.wallet); got != 10000 {
					t.Fatalf("wallet %d after a refused bet, want 10000", got)
				}
			})
		}
		// Nothing was booked under the id: the well-formed bet goes through.
		wantOK(t, w.call("bet", map[string]any{"transaction_id": "bet-keys", "round_id": "r1", "amount": "0.01"}), "99.99")
	})

	t.Run("POST /api/v1/transactions", func(t *testing.T) {
		c := h.NewClient(gateway.ScopeTransactionsWrite)
		for _, tc := range []struct{ name, body, field string }{
			{"amount twice", `{"type":"deposit","transaction_id":"dep-keys","player_id":"p1","amount":"1","amount":"1000","currency":"EUR"}`, "amount"},
			{"player_id twice", `{"type":"deposit","transaction_id":"dep-keys","player_id":"p1","player_id":"p2","amount":"1","currency":"EUR"}`, "player_id"},
			{"Type", `{"Type":"deposit","transaction_id":"dep-keys","player_id":"p1","amount":"1","currency":"EUR"}`, "Type"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e := apitest.WantError(t, h.With(t).Call(http.MethodPost, "/api/v1/transactions", c.Key, tc.body),
					http.StatusBadRequest, wire.CodeInvalidRequest)
				if e.Error.Details["field"] != tc.field {
					t.Fatalf("details %v, want field %q", e.Error.Details, tc.field)
				}
			})
		}
		for _, p := range []string{"p1", "p2"} {
			if got := h.Balance(domain.PlayerWallet(c.ID, p, slEUR)); got != 0 {
				t.Fatalf("wallet of %s holds %d after refused deposits", p, got)
			}
		}
	})
}
