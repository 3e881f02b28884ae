package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// TestTransactionReasonLimit: the reason of an operator's transaction is
// stored in the hash-chained event and relayed everywhere, so one of more
// than 500 characters, or with a control character or line break, is 400
// naming the field and books nothing.
func TestTransactionReasonLimit(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	c := h.NewClient(gateway.ScopeTransactionsWrite)
	h.Deposit(c, "", "100.00", "EUR")
	h.Deposit(c, "p1", "10.00", "EUR")
	eur := domain.MustCurrency("EUR")
	clientWallet, playerWallet := domain.ClientWallet(c.ID, eur), domain.PlayerWallet(c.ID, "p1", eur)
	events := func() int {
		n := 0
		for _, w := range []domain.AccountID{clientWallet, playerWallet} {
			for _, typ := range []domain.EventType{domain.EventDeposited, domain.EventWithdrawn, domain.EventAdjusted, domain.EventTransferred} {
				n += len(h.Events(w, typ))
			}
		}
		return n
	}
	body := func(typ, reason string) map[string]string {
		b := map[string]string{"type": typ, "transaction_id": apitest.UID("tx"), "player_id": "p1", "amount": "1.00",
			"currency": "EUR", "reason": reason}
		if typ == "transfer" {
			b["direction"] = "to_player"
		}
		return b
	}

	refused := []struct {
		name, typ, reason string
	}{
		{"deposit with a reason of 60,000 characters", "deposit", strings.Repeat("x", 60000)},
		{"deposit with 501 characters", "deposit", strings.Repeat("ü", domain.MaxReasonLength+1)},
		{"deposit with a line break", "deposit", "bonus\nforged: line"},
		{"withdrawal with a bell", "withdrawal", "fees\a"},
		{"adjustment with an escape sequence", "adjustment", "goodwill \x1b[2J"},
		{"transfer with a line separator", "transfer", "to player\u2028forged"},
		{"deposit with a right-to-left override", "deposit", "refund \u202e00.5\u202c"},
		{"deposit with a directional isolate", "deposit", "bonus \u2067x\u2069"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			beforeClient, beforePlayer, beforeEvents := h.Balance(clientWallet), h.Balance(playerWallet), events()
			e := apitest.WantError(t, h.Call(http.MethodPost, "/api/v1/transactions", c.Key, body(tc.typ, tc.reason)),
				http.StatusBadRequest, wire.CodeInvalidRequest)
			if e.Error.Details["field"] != "reason" {
				t.Fatalf("error %+v, want field reason", e.Error)
			}
			if len(e.Error.Message) > 200 {
				t.Fatalf("the message quotes the reason back: %d bytes", len(e.Error.Message))
			}
			if h.Balance(clientWallet) != beforeClient || h.Balance(playerWallet) != beforePlayer || events() != beforeEvents {
				t.Fatal("a refused transaction was booked")
			}
		})
	}
	t.Run("a reason of 500 characters in any script", func(t *testing.T) {
		reason := strings.Repeat("é", domain.MaxReasonLength-3) + " 🎰€"
		apitest.Data[map[string]any](t, h.Call(http.MethodPost, "/api/v1/transactions", c.Key, body("deposit", reason)))
		got := h.Events(playerWallet, domain.EventDeposited)
		if last := got[len(got)-1]; last.Data.Reason != reason {
			t.Fatalf("stored reason %q, want %q", last.Data.Reason, reason)
		}
	})
}

// TestAdminTextLimits: a client's name, a key's label are one line without
// control characters, through the admin API too.
func TestAdminTextLimits(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{AdminToken: admToken})
	id, _ := admNewClient(t, h, "sandbox", "", gateway.ScopeWalletRead)
	tests := []struct {
		name, method, path string
		body               map[string]any
		field              string
	}{
		{"create a client named with a line feed", http.MethodPost, "/admin/v1/clients",
			map[string]any{"id": apitest.UID("client"), "name": "Acme\nCasino", "environment": "sandbox"}, "name"},
		{"create a client named with an escape sequence", http.MethodPost, "/admin/v1/clients",
			map[string]any{"id": apitest.UID("client"), "name": "Acme \x1b[31mCasino", "environment": "sandbox"}, "name"},
		{"create a client named with 201 characters", http.MethodPost, "/admin/v1/clients",
			map[string]any{"id": apitest.UID("client"), "name": strings.Repeat("n", 201), "environment": "sandbox"}, "name"},
		{"rename a client with a C1 control", http.MethodPatch, "/admin/v1/clients/" + id,
			map[string]any{"name": "Acme\u009bCasino"}, "name"},
		{"rename a client with a paragraph separator", http.MethodPatch, "/admin/v1/clients/" + id,
			map[string]any{"name": "Acme\u2029Casino"}, "name"},
		{"rename a client with a right-to-left override", http.MethodPatch, "/admin/v1/clients/" + id,
			map[string]any{"name": "Acme \u202eonisaC"}, "name"},
		{"a key label with a carriage return", http.MethodPost, "/admin/v1/clients/" + id + "/keys",
			map[string]any{"scopes": []string{gateway.ScopeWalletRead}, "label": "ci\rprod"}, "label"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := apitest.WantError(t, h.Admin(tc.method, tc.path, tc.body), http.StatusBadRequest, wire.CodeInvalidRequest)
			if e.Error.Details["field"] != tc.field {
				t.Fatalf("details %v, want field %s", e.Error.Details, tc.field)
			}
		})
	}
	t.Run("the name is unchanged", func(t *testing.T) {
		c := apitest.Data[admClient](t, h.Admin(http.MethodGet, "/admin/v1/clients/"+id, nil))
		if c.Name != "Operator "+id {
			t.Fatalf("name %q, want %q", c.Name, "Operator "+id)
		}
	})
}
