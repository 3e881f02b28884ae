package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

type ctTransferLaunch struct {
	apitest.Launch
	Transfer struct {
		TransactionID string      `json:"transaction_id"`
		ExternalID    string      `json:"external_id"`
		Type          string      `json:"type"`
		Amount        json.Number `json:"amount"`
		Currency      string      `json:"currency"`
		Status        string      `json:"status"`
		PlayerID      string      `json:"player_id"`
		BalanceAfter  json.Number `json:"balance_after"`
		Replayed      bool        `json:"replayed"`
	} `json:"transfer"`
}

func transferBody(t *testing.T, fields map[string]any) string {
	t.Helper()
	b := map[string]any{"provider": "demo", "game_id": "demo-slot", "player_id": "p1", "currency": "EUR",
		"amount": "25.00", "transfer_id": "tr-1"}
	for k, v := range fields {
		if v == nil {
			delete(b, k)
		} else {
			b[k] = v
		}
	}
	return apitest.JSON(t, b)
}

// transferFixture: demo provider with two games, a client with both
// scopes whose own wallet holds 100 EUR.
func transferFixture(t *testing.T) (*apitest.Harness, apitest.Client) {
	h := apitest.New(t, apitest.Options{Loopback: true})
	h.AddProvider("demo", "Demo", gateway.ProviderKindDemo)
	h.AddGame("demo-slot", "demo", "Demo Slot", "slots", true)
	h.AddGame("demo-slot-2", "demo", "Demo Slot 2", "slots", true)
	c := h.NewClient(gateway.ScopeLaunch, gateway.ScopeTransactionsWrite)
	h.Deposit(c, "", "100.00", "EUR")
	return h, c
}

func TestTransferLaunchIsIdempotent(t *testing.T) {
	t.Parallel()
	h, c := transferFixture(t)
	clientWallet, playerWallet := domain.ClientWallet(c.ID, ctEUR), domain.PlayerWallet(c.ID, "p1", ctEUR)
	body := transferBody(t, nil)

	first := apitest.Data[ctTransferLaunch](t, h.Call(http.MethodPost, "/api/v1/game/launch/transfer", c.Key, body))
	tr := first.Transfer
	if tr.Type != "transfer" || tr.Amount.String() != "25.00" || tr.Currency != "EUR" || tr.Status != "settled" ||
		tr.PlayerID != "p1" || tr.BalanceAfter.String() != "25.00" || tr.ExternalID != "tr-1" || tr.Replayed ||
		tr.TransactionID == "" {
		t.Fatalf("transfer %+v", tr)
	}
	if first.GameURL != h.URL+"/demo/play?session="+first.SessionID {
		t.Fatalf("game_url %q", first.GameURL)
	}
	wantLaunched(t, h, c, "p1", "demo", "demo-slot", first.Launch)
	if h.Balance(clientWallet) != 7500 || h.Balance(playerWallet) != 2500 {
		t.Fatalf("balances client %d player %d, want 7500 and 2500", h.Balance(clientWallet), h.Balance(playerWallet))
	}

	// A retry (the client lost the answer) is the same transfer and the
	// same session; no money moves again.
	again := apitest.Data[ctTransferLaunch](t, h.Call(http.MethodPost, "/api/v1/game/launch/transfer", c.Key, body))
	if again.Transfer.TransactionID != tr.TransactionID || !again.Transfer.Replayed || again.SessionID != first.SessionID ||
		again.TransactionID != first.TransactionID || again.GameURL != first.GameURL || again.ExpiresAt != first.ExpiresAt {
		t.Fatalf("retry %+v, first %+v", again, first)
	}
	if h.Balance(clientWallet) != 7500 || h.Balance(playerWallet) != 2500 {
		t.Fatalf("retry moved money: client %d player %d", h.Balance(clientWallet), h.Balance(playerWallet))
	}
	if n := len(h.Events(playerWallet, domain.EventTransferred)); n != 1 {
		t.Fatalf("%d transfer events, want 1", n)
	}
	if n := len(h.Events(playerWallet, domain.EventGameLaunched)); n != 1 {
		t.Fatalf("%d launch events, want 1", n)
	}

	// The same transfer_id with something else changed is a conflict that
	// names the field; nothing moves.
	for _, tc := range []struct {
		field  string
		change map[string]any
	}{
		{"amount", map[string]any{"amount": "30.00"}},
		{"game_id", map[string]any{"game_id": "demo-slot-2"}},
		{"player_id", map[string]any{"player_id": "p2"}},
	} {
		t.Run("409 different "+tc.field, func(t *testing.T) {
			e := apitest.WantError(t, h.Call(http.MethodPost, "/api/v1/game/launch/transfer", c.Key, transferBody(t, tc.change)),
				http.StatusConflict, wire.CodeIdempotencyConflict)
			if e.Error.Details["field"] != tc.field {
				t.Fatalf("details %v, want field %s", e.Error.Details, tc.field)
			}
		})
	}
	if h.Balance(clientWallet) != 7500 || h.Balance(playerWallet) != 2500 {
		t.Fatalf("conflicts moved money: client %d player %d", h.Balance(clientWallet), h.Balance(playerWallet))
	}

	// A new transfer_id is a new transfer and a new session.
	second := apitest.Data[ctTransferLaunch](t, h.Call(http.MethodPost, "/api/v1/game/launch/transfer", c.Key,
		transferBody(t, map[string]any{"transfer_id": "tr-2", "amount": 10})))
	if second.SessionID == first.SessionID || second.Transfer.BalanceAfter.String() != "35.00" {
		t.Fatalf("second %+v", second)
	}
	if h.Balance(clientWallet) != 6500 {
		t.Fatalf("client %d, want 6500", h.Balance(clientWallet))
	}
}

func TestTransferLaunchRefusals(t *testing.T) {
	t.Parallel()
	h, c := transferFixture(t)
	launchOnly := h.NewClient(gateway.ScopeLaunch)
	writeOnly := h.NewClient(gateway.ScopeTransactionsWrite)
	tests := []struct {
		name   string
		key    string
		body   string
		status int
		code   string
		field  string
	}{
		{"insufficient client funds", c.Key, transferBody(t, map[string]any{"amount": "100.01"}), 400, wire.CodeInsufficientFunds, ""},
		{"malformed JSON", c.Key, `{"provider":`, 400, wire.CodeInvalidJSON, ""},
		{"missing transfer_id", c.Key, transferBody(t, map[string]any{"transfer_id": nil}), 400, wire.CodeInvalidRequest, "transfer_id"},
		{"transfer_id not an id", c.Key, transferBody(t, map[string]any{"transfer_id": "a b"}), 400, wire.CodeInvalidRequest, "transfer_id"},
		{"missing amount", c.Key, transferBody(t, map[string]any{"amount": nil}), 400, wire.CodeInvalidRequest, "amount"},
		{"amount not a number", c.Key, transferBody(t, map[string]any{"amount": "ten"}), 400, wire.CodeInvalidAmount, ""},
		{"amount too precise", c.Key, transferBody(t, map[string]any{"amount": "1.001"}), 400, wire.CodeAmountTooPrecise, ""},
		{"amount zero", c.Key, transferBody(t, map[string]any{"amount": "0"}), 400, wire.CodeInvalidAmount, ""},
		{"amount negative", c.Key, transferBody(t, map[string]any{"amount": "-5.00"}), 400, wire.CodeInvalidAmount, ""},
		{"unknown currency", c.Key, transferBody(t, map[string]any{"currency": "ZZZ"}), 400, wire.CodeUnknownCurrency, ""},
		{"unknown field", c.Key, transferBody(t, map[string]any{"direction": "from_player"}), 400, wire.CodeInvalidRequest, "direction"},
		{"unknown game", c.Key, transferBody(t, map[string]any{"game_id": "nope"}), 404, wire.CodeNotFound, "game_id"},
		{"unknown provider", c.Key, transferBody(t, map[string]any{"provider": "nope"}), 404, wire.CodeNotFound, "provider"},
		{"no key", "", transferBody(t, nil), 401, wire.CodeUnauthorized, ""},
		{"key without transactions:write", launchOnly.Key, transferBody(t, nil), 403, wire.CodeForbidden, ""},
		{"key without launch", writeOnly.Key, transferBody(t, nil), 403, wire.CodeForbidden, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := apitest.WantError(t, h.Call(http.MethodPost, "/api/v1/game/launch/transfer", tc.key, tc.body), tc.status, tc.code)
			if tc.field != "" && e.Error.Details["field"] != tc.field {
				t.Fatalf("details %v, want field %s", e.Error.Details, tc.field)
			}
		})
	}
	if got := h.Balance(domain.ClientWallet(c.ID, ctEUR)); got != 10000 {
		t.Fatalf("client wallet %d after refusals, want 10000", got)
	}
	var sessions int
	if err := h.Pool.QueryRow(context.Background(), `SELECT count(*) FROM game_sessions`).Scan(&sessions); err != nil || sessions != 0 {
		t.Fatalf("%d sessions (%v) after refusals, want 0", sessions, err)
	}
}

// TestTransferLaunchWhenTheProviderIsDown: a provider failing after the
// transfer leaves the money in the player's game wallet and a retry with
// the same transfer_id completes the launch; once every breaker is open,
// a new transfer launch is refused before any money moves.
func TestTransferLaunchWhenTheProviderIsDown(t *testing.T) {
	t.Parallel()
	h, c := transferFixture(t)
	// The server's clock stands still: the breaker stays open, however
	// slow the machine, until the test moves the clock past its cooldown.
	h.Clock.Set(time.Now())
	var healthy atomic.Bool
	p := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		if !healthy.Load() {
			http.Error(w, "maintenance", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, `{"launchUrl":"https://acme.example/?t=`+body["token"].(string)+`"}`)
	}))
	t.Cleanup(p.Close)
	r := h.AddProvider("acme", "Acme", gateway.ProviderKindJSON, p.URL)
	r.BreakerCooldown = 2 * time.Second
	if err := h.Gateway.SetProviderRoute(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	h.AddGame("acme-slot", "acme", "Acme Slot", "slots", true)
	clientWallet, playerWallet := domain.ClientWallet(c.ID, ctEUR), domain.PlayerWallet(c.ID, "p1", ctEUR)
	body := transferBody(t, map[string]any{"provider": "acme", "game_id": "acme-slot"})

	// Failure 1: the breaker is still closed, so the transfer happens.
	apitest.WantError(t, h.Call(http.MethodPost, "/api/v1/game/launch/transfer", c.Key, body), http.StatusServiceUnavailable, wire.CodeUnavailable)
	if h.Balance(clientWallet) != 7500 || h.Balance(playerWallet) != 2500 {
		t.Fatalf("client %d player %d, want 7500 and 2500", h.Balance(clientWallet), h.Balance(playerWallet))
	}
	// Failure 2 (a retry) replays the transfer and opens the breaker.
	resp := h.Call(http.MethodPost, "/api/v1/game/launch/transfer", c.Key, body)
	apitest.WantError(t, resp, http.StatusServiceUnavailable, wire.CodeUnavailable)
	if resp.Header().Get("Retry-After") == "" {
		t.Fatal("503 without Retry-After")
	}
	// A new transfer launch is refused before money moves.
	resp = h.Call(http.MethodPost, "/api/v1/game/launch/transfer", c.Key,
		transferBody(t, map[string]any{"provider": "acme", "game_id": "acme-slot", "transfer_id": "tr-new"}))
	e := apitest.WantError(t, resp, http.StatusServiceUnavailable, wire.CodeUnavailable)
	if ra := resp.Header().Get("Retry-After"); ra != "2" {
		t.Fatalf("Retry-After %q, want the 2 s cooldown", ra)
	}
	if e.Error.Details["provider"] != "acme" {
		t.Fatalf("details %v", e.Error.Details)
	}
	if h.Balance(clientWallet) != 7500 {
		t.Fatalf("client %d: a transfer happened towards an unavailable provider", h.Balance(clientWallet))
	}

	// The provider recovers; the breaker lets the retry through once its
	// cooldown has passed, not a nanosecond before.
	healthy.Store(true)
	h.Clock.Advance(r.BreakerCooldown - time.Nanosecond)
	apitest.WantError(t, h.Call(http.MethodPost, "/api/v1/game/launch/transfer", c.Key, body),
		http.StatusServiceUnavailable, wire.CodeUnavailable)
	h.Clock.Advance(time.Nanosecond)
	l := h.Call(http.MethodPost, "/api/v1/game/launch/transfer", c.Key, body)
	if l.Code != http.StatusOK {
		t.Fatalf("retry once the cooldown passed: %d %s", l.Code, l.Body)
	}
	got := apitest.Data[ctTransferLaunch](t, l)
	if !got.Transfer.Replayed || got.GameURL != "https://acme.example/?t="+got.SessionID {
		t.Fatalf("completed launch %+v", got)
	}
	wantLaunched(t, h, c, "p1", "acme", "acme-slot", got.Launch)
	n := 0
	for _, e := range h.Events(playerWallet, domain.EventTransferred) {
		if e.Data.ExternalTxID == "tr-1" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d transfer events for tr-1, want 1", n)
	}
}
