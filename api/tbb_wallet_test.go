package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// The Bet Brothers' Game Events wallet (docs/protocols/tbb.md), tested from
// its pages: X-REQUEST-SIGN = hex HMAC-SHA256 of the raw body with the
// provider's password (our provider secret); integer minor units; the
// session token on every call; 200 with the token and balance, or the
// addendum's {"code", "message"} with the code as the HTTP status.

type tbbHarness struct{ *slHarness }

func newTBBHarness(t *testing.T) *tbbHarness {
	t.Helper()
	h := &tbbHarness{newSLHarness(t)}
	if err := h.Gateway.UpsertProvider(context.Background(), gateway.Provider{ID: h.provider, Name: "TBB test",
		Secret: h.providerSecret, Enabled: true, WalletProtocol: gateway.WalletProtocolTBB}); err != nil {
		t.Fatal(err)
	}
	return h
}

type tbbAnswer struct {
	Token         string `json:"token"`
	Balance       *int64 `json:"balance"`
	TransactionID string `json:"transaction_id"`
	Code          int    `json:"code"`
	Message       string `json:"message"`
	status        int
}

type tbbSession struct {
	h      *tbbHarness
	client apitest.Client
	token  string
	player string
	wallet domain.AccountID
}

func (h *tbbHarness) session(balance string) tbbSession {
	h.t.Helper()
	c := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch}, gateway.LaunchSettings{})
	user := apitest.UID("player")
	a := h.mustLaunch(c, user, balance, nil)
	return tbbSession{h: h, client: c, token: a.SessionID, player: user, wallet: domain.PlayerWallet(c.ID, user, slEUR)}
}

// body is op's body with every field the page lists, fields replaced (a
// nil value removes one).
func (s tbbSession) body(op string, fields map[string]any) []byte {
	s.h.t.Helper()
	b := map[string]any{"token": s.token, "provider_name": s.h.provider, "provider_id": 19, "currency_code": "EUR"}
	if op != "balance" {
		b["amount"], b["is_mobile"], b["player_id"], b["round_id"] = 100, false, s.player, "r-1"
		b["game_symbol"], b["transaction_id"] = s.h.game, apitest.UID("tx")
	}
	if op == "win" {
		b["round_close"] = true
	}
	for k, v := range fields {
		if v == nil {
			delete(b, k)
		} else {
			b[k] = v
		}
	}
	raw, err := json.Marshal(b)
	if err != nil {
		s.h.t.Fatal(err)
	}
	return raw
}

// post sends raw to op signed with sign (its X-REQUEST-SIGN; "" sends none).
func (s tbbSession) post(op string, raw []byte, sign string) tbbAnswer {
	s.h.t.Helper()
	hdr := map[string]string{}
	if sign != "" {
		hdr["X-REQUEST-SIGN"] = sign
	}
	rec := s.h.Do(apitest.Request{Method: http.MethodPost, Path: "/provider/tbb/" + s.h.provider + "/wallet/" + op,
		Body: raw, Header: hdr})
	var a tbbAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
		s.h.t.Fatalf("HTTP %d: not JSON: %s", rec.Code, rec.Body)
	}
	a.status = rec.Code
	if rec.Code != http.StatusOK && a.Code != rec.Code {
		s.h.t.Fatalf("HTTP %d with code %d: the addendum's code is the status: %s", rec.Code, a.Code, rec.Body)
	}
	return a
}

// call sends op signed with the provider's secret.
func (s tbbSession) call(op string, fields map[string]any) tbbAnswer {
	raw := s.body(op, fields)
	return s.post(op, raw, gateway.Signature(s.h.providerSecret, raw))
}

func wantTBB(t *testing.T, a tbbAnswer, status int, balance int64) {
	t.Helper()
	if a.status != status {
		t.Fatalf("answer %+v, want HTTP %d", a, status)
	}
	if status == http.StatusOK && (a.Balance == nil || *a.Balance != balance || a.Token == "") {
		t.Fatalf("answer %+v (balance %v), want balance %d", a, deref(a.Balance), balance)
	}
}

func TestTBBWallet(t *testing.T) {
	h := newTBBHarness(t)

	t.Run("balance, bet, win, retry: minor units and our own transaction id", func(t *testing.T) {
		s := h.session("100")
		wantTBB(t, s.call("balance", nil), 200, 10_000)
		bet := s.call("bet", map[string]any{"transaction_id": "b-1", "amount": 1_000})
		wantTBB(t, bet, 200, 9_000)
		again := s.call("bet", map[string]any{"transaction_id": "b-1", "amount": 1_000})
		if again.status != 200 || again.TransactionID != bet.TransactionID || bet.TransactionID == "b-1" {
			t.Fatalf("retry %+v, first %+v: want the first answer's own id again", again, bet)
		}
		wantTBB(t, s.call("win", map[string]any{"transaction_id": "w-1", "amount": 2_550}), 200, 11_550)
		if got := h.Balance(s.wallet); got != 11_550 {
			t.Fatalf("wallet %d minor, want 11550", got)
		}
		w := h.Events(s.wallet, domain.EventWinCredited)
		if len(w) != 1 || w[0].Data.Amount != "25.50" || !w[0].Data.RoundClosed || w[0].Data.GameID != h.game {
			t.Fatalf("win events %+v", w)
		}
	})

	t.Run("refund: the bet given back, keyed by what it refunds; before its bet 406 then 408", func(t *testing.T) {
		s := h.session("100")
		wantTBB(t, s.call("bet", map[string]any{"transaction_id": "b-1", "round_id": "r-9", "amount": 500}), 200, 9_500)
		refund := map[string]any{"transaction_id": "b-1", "refunded_transaction_id": "b-1", "round_id": "r-9", "amount": 500}
		wantTBB(t, s.call("refund", refund), 200, 10_000)
		wantTBB(t, s.call("refund", refund), 200, 10_000) // a retry, as the document's own example repeats the id
		// A win on the round whose bet was refunded: nothing stands.
		wantTBB(t, s.call("win", map[string]any{"transaction_id": "w-9", "round_id": "r-9", "amount": 100}), 406, 0)
		// A refund of a bet never booked, then that bet.
		wantTBB(t, s.call("refund", map[string]any{"refunded_transaction_id": "b-late", "round_id": "r-8"}), 406, 0)
		wantTBB(t, s.call("bet", map[string]any{"transaction_id": "b-late", "round_id": "r-8"}), 408, 0)
		// A refund of a win, and of a settled bet.
		wantTBB(t, s.call("bet", map[string]any{"transaction_id": "b-2", "round_id": "r-7"}), 200, 9_900)
		wantTBB(t, s.call("win", map[string]any{"transaction_id": "w-2", "round_id": "r-7", "amount": 0}), 200, 9_900)
		wantTBB(t, s.call("refund", map[string]any{"refunded_transaction_id": "w-2", "round_id": "r-7"}), 400, 0)
		wantTBB(t, s.call("refund", map[string]any{"refunded_transaction_id": "b-2", "round_id": "r-7"}), 400, 0)
	})

	t.Run("refusals: each with the addendum's code", func(t *testing.T) {
		s := h.session("10")
		for _, tc := range []struct {
			name   string
			op     string
			fields map[string]any
			want   int
		}{
			{"insufficient funds", "bet", map[string]any{"amount": 5_000}, 402},
			{"unknown token", "bet", map[string]any{"token": "gs_nope"}, 403},
			{"provider_name not the path's", "balance", map[string]any{"provider_name": "someone"}, 403},
			{"another player", "bet", map[string]any{"player_id": "someone-else"}, 404},
			{"a game not the provider's", "bet", map[string]any{"game_symbol": "no-such-game"}, 405},
			{"another currency", "bet", map[string]any{"currency_code": "USD"}, 400},
			{"a bet of 0", "bet", map[string]any{"amount": 0}, 400},
			{"a decimal amount", "bet", map[string]any{"amount": 1.5}, 400},
			{"an amount as a string", "bet", map[string]any{"amount": "100"}, 400},
			{"a field the page does not list", "bet", map[string]any{"bonus": true}, 400},
			{"a required field left out", "bet", map[string]any{"is_mobile": nil}, 400},
			{"provider_id not an integer", "balance", map[string]any{"provider_id": "19"}, 400},
			{"a win without round_close", "win", map[string]any{"round_close": nil}, 400},
		} {
			t.Run(tc.name, func(t *testing.T) {
				a := s.call(tc.op, tc.fields)
				if a.status != tc.want || a.Message == "" {
					t.Fatalf("answer %+v, want %d with a message", a, tc.want)
				}
			})
		}
		if got := h.Balance(s.wallet); got != 1_000 {
			t.Fatalf("refusals moved money: %d minor", got)
		}
	})

	t.Run("authentication: 403 for a missing or wrong signature, another protocol's provider", func(t *testing.T) {
		s := h.session("10")
		raw := s.body("balance", nil)
		wantTBB(t, s.post("balance", raw, ""), 403, 0)
		wantTBB(t, s.post("balance", raw, gateway.Signature("wrong-secret", raw)), 403, 0)
		// The hex digits in upper case are the same signature.
		upper := []byte(gateway.Signature(h.providerSecret, raw))
		for i, c := range upper {
			if c >= 'a' && c <= 'f' {
				upper[i] = c - 'a' + 'A'
			}
		}
		wantTBB(t, s.post("balance", raw, string(upper)), 200, 1_000)
		if err := h.Gateway.UpsertProvider(context.Background(), gateway.Provider{ID: h.provider, Name: "TBB test",
			Secret: h.providerSecret, Enabled: true, WalletProtocol: gateway.WalletProtocolRedTiger}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = h.Gateway.UpsertProvider(context.Background(), gateway.Provider{ID: h.provider, Name: "TBB test",
				Secret: h.providerSecret, Enabled: true, WalletProtocol: gateway.WalletProtocolTBB})
		})
		wantTBB(t, s.post("balance", raw, gateway.Signature(h.providerSecret, raw)), 403, 0)
	})

	t.Run("a superseded token: bets 403, wins taken", func(t *testing.T) {
		s := h.session("100")
		wantTBB(t, s.call("bet", map[string]any{"transaction_id": "b-1", "round_id": "r-1", "amount": 1_000}), 200, 9_000)
		h.Clock.Advance(time.Second)
		h.mustLaunch(s.client, s.player, "100", nil)
		wantTBB(t, s.call("bet", map[string]any{"transaction_id": "b-2", "round_id": "r-2"}), 403, 0)
		if a := s.call("win", map[string]any{"transaction_id": "w-1", "round_id": "r-1", "amount": 100}); a.status != 200 {
			t.Fatalf("win on the superseded token: %+v", a)
		}
	})
}
