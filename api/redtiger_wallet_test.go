package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/adapters/postgres/auditstore"
	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// The Red Tiger wallet (docs/protocols/redtiger.md), tested from the
// protocol as the Valkyrie aggregator's adapter documents it: the API key
// in Authorization, decimal amounts, {"success", "result"} answers and
// {"success": false, "error": {"message", "code"}} refusals with numeric
// codes.

// rtHarness is slHarness whose provider is on the redtiger protocol; its
// secret is the API key.
type rtHarness struct{ *slHarness }

func newRTHarness(t *testing.T) *rtHarness {
	t.Helper()
	h := &rtHarness{newSLHarness(t)}
	h.setProvider(t, true)
	return h
}

func (h *rtHarness) setProvider(t *testing.T, enabled bool) {
	t.Helper()
	if err := h.Gateway.UpsertProvider(context.Background(), gateway.Provider{ID: h.provider, Name: "Red Tiger test",
		Secret: h.providerSecret, Enabled: enabled, WalletProtocol: gateway.WalletProtocolRedTiger}); err != nil {
		t.Fatal(err)
	}
}

// rtPost sends raw to provider's op with Authorization auth ("" sends
// none).
func (h *rtHarness) rtPost(provider, op string, raw []byte, auth string) *httptest.ResponseRecorder {
	h.t.Helper()
	hdr := map[string]string{}
	if auth != "" {
		hdr["Authorization"] = auth
	}
	return h.Do(apitest.Request{Method: http.MethodPost, Path: "/provider/redtiger/" + provider + "/wallet/" + op,
		Body: raw, Header: hdr})
}

type rtMoney struct {
	Cash  string `json:"cash"`
	Bonus string `json:"bonus"`
}

// rtAnswer is any of the protocol's answers.
type rtAnswer struct {
	Success bool `json:"success"`
	Result  *struct {
		Token    string   `json:"token"`
		Currency string   `json:"currency"`
		UserID   string   `json:"userId"`
		Casino   string   `json:"casino"`
		ID       string   `json:"id"`
		Stake    *rtMoney `json:"stake"`
		Payout   *rtMoney `json:"payout"`
		Balance  *rtMoney `json:"balance"`
	} `json:"result"`
	// A refund's balance and currency sit beside its result.
	Balance  *rtMoney `json:"balance"`
	Currency string   `json:"currency"`
	Error    *struct {
		Message string `json:"message"`
		Code    int    `json:"code"`
	} `json:"error"`
	status int
}

func decodeRT(t *testing.T, rec *httptest.ResponseRecorder) rtAnswer {
	t.Helper()
	if !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Fatalf("HTTP %d, Content-Type %q: %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	var a rtAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
		t.Fatalf("HTTP %d: not the protocol's JSON: %v: %s", rec.Code, err, rec.Body)
	}
	a.status = rec.Code
	if (rec.Code == http.StatusOK) != a.Success || (a.Success == (a.Error != nil)) {
		t.Fatalf("HTTP %d with success %v and error %+v: %s", rec.Code, a.Success, a.Error, rec.Body)
	}
	return a
}

// rtSession is one launched session of a fresh player.
type rtSession struct {
	h      *rtHarness
	token  string
	player string
	wallet domain.AccountID
}

func (h *rtHarness) session(balance string) rtSession {
	h.t.Helper()
	c := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch}, gateway.LaunchSettings{})
	user := apitest.UID("player")
	a := h.mustLaunch(c, user, balance, nil)
	return rtSession{h: h, token: a.SessionID, player: user, wallet: domain.PlayerWallet(c.ID, user, slEUR)}
}

// body is op's body: the base fields, a game and a round, with fields
// added or replaced (a nil value removes one).
func (s rtSession) body(op string, fields map[string]any) []byte {
	s.h.t.Helper()
	b := map[string]any{"token": s.token, "userId": s.player, "casino": "pitboss", "currency": "EUR", "ip": "192.0.2.7"}
	switch op {
	case "auth":
		b["channel"] = "D"
	case "stake", "refund", "promo/buyin", "promo/refund":
		b["game"] = map[string]any{"type": "slot", "key": s.h.game, "version": "1.0"}
		b["round"] = map[string]any{"id": "R-1", "starts": true, "ends": false}
	case "payout", "promo/settle":
		b["game"] = map[string]any{"type": "slot", "key": s.h.game, "version": "1.0"}
		b["round"] = map[string]any{"id": "R-1", "starts": false, "ends": true}
		b["retry"] = false
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

// call sends op with the provider's API key.
func (s rtSession) call(op string, fields map[string]any) rtAnswer {
	s.h.t.Helper()
	return decodeRT(s.h.t, s.h.rtPost(s.h.provider, op, s.body(op, fields), s.h.providerSecret))
}

// stakeTx and payoutTx are a transaction field.
func stakeTx(id string, stake any) map[string]any {
	return map[string]any{"transaction": map[string]any{"id": id, "stake": stake, "stakePromo": "0.00",
		"details": map[string]any{"game": stake, "jackpot": "0.00"}}}
}

func payoutTx(id, payout string) map[string]any {
	return map[string]any{"transaction": map[string]any{"id": id, "payout": payout, "payoutPromo": "0.00",
		"details": map[string]any{"game": payout, "jackpot": "0.000000"},
		"sources": map[string]any{"lines": payout, "features": "0.00", "jackpot": map[string]any{}}}}
}

// with is fields plus more.
func with(fields map[string]any, more map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range fields {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

// wantRTOK: success, with the player's cash balance after the call.
func wantRTOK(t *testing.T, a rtAnswer, cash string) rtAnswer {
	t.Helper()
	if !a.Success || a.Result == nil {
		t.Fatalf("answer %+v (error %+v), want success", a, a.Error)
	}
	bal := a.Result.Balance
	if bal == nil {
		bal = a.Balance // a refund's
	}
	if bal == nil || bal.Cash != cash || bal.Bonus != "0.00" {
		t.Fatalf("balance %+v, want cash %s and bonus 0.00", bal, cash)
	}
	return a
}

// wantRTCode: refused with HTTP status and the protocol's code.
func wantRTCode(t *testing.T, a rtAnswer, status, code int) {
	t.Helper()
	if a.Success || a.Error == nil || a.status != status || a.Error.Code != code || a.Error.Message == "" {
		t.Fatalf("answer HTTP %d %+v (error %+v), want HTTP %d code %d", a.status, a, a.Error, status, code)
	}
}

// TestRedTigerWallet plays the Red Tiger wallet against the real ledger:
// every call, every code it can send, idempotency, refunds, promotions,
// jackpots and precision.
func TestRedTigerWallet(t *testing.T) {
	h := newRTHarness(t)

	t.Run("auth answers the token, the player and the balance", func(t *testing.T) {
		s := h.session("100")
		a := wantRTOK(t, s.call("auth", nil), "100.00")
		if r := a.Result; r.Token != s.token || r.UserID != s.player || r.Currency != "EUR" || r.Casino != "pitboss" {
			t.Fatalf("auth result %+v", r)
		}
		// userId and currency may be left out.
		wantRTOK(t, s.call("auth", map[string]any{"userId": nil, "currency": nil, "casino": nil}), "100.00")
	})

	t.Run("stake, payout: the native ledger events", func(t *testing.T) {
		s := h.session("100")
		a := wantRTOK(t, s.call("stake", stakeTx("s-1", "10.00")), "90.00")
		if a.Result.ID == "" || a.Result.Stake == nil || a.Result.Stake.Cash != "10.00" || a.Result.Token != s.token {
			t.Fatalf("stake result %+v", a.Result)
		}
		a = wantRTOK(t, s.call("payout", payoutTx("p-1", "25.5")), "115.50")
		if a.Result.Payout == nil || a.Result.Payout.Cash != "25.50" {
			t.Fatalf("payout result %+v", a.Result)
		}
		if got := h.Balance(s.wallet); got != 11_550 {
			t.Fatalf("wallet %d minor, want 11550", got)
		}
		bets, wins := h.Events(s.wallet, domain.EventBetPlaced), h.Events(s.wallet, domain.EventWinCredited)
		if len(bets) != 1 || len(wins) != 1 {
			t.Fatalf("%d bet and %d win events, want 1 and 1", len(bets), len(wins))
		}
		b, w := bets[0].Data, wins[0].Data
		if b.Amount != "10.00" || b.ExternalTxID != "s-1" || b.RoundID != "R-1" || b.GameID != h.game ||
			b.SessionID != s.token || b.Provider != h.provider || b.Promo || b.RoundClosed {
			t.Fatalf("bet event %+v", b)
		}
		if w.Amount != "25.50" || w.ExternalTxID != "p-1" || w.RoundID != "R-1" || !w.RoundClosed || w.Promo {
			t.Fatalf("win event %+v", w)
		}
		// A payout of 0 closes a lost round.
		wantRTOK(t, s.call("stake", with(stakeTx("s-2", "5"), map[string]any{"round": map[string]any{"id": "R-2"}})), "110.50")
		wantRTOK(t, s.call("payout", with(payoutTx("p-2", "0"), map[string]any{"round": map[string]any{"id": "R-2", "ends": true}})), "110.50")
	})

	t.Run("history, balances and GGR read the calls as native ones; promo apart", func(t *testing.T) {
		c := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch, gateway.ScopeTransactionsRead, gateway.ScopeWalletRead,
			gateway.ScopeReportsRead}, gateway.LaunchSettings{})
		user := apitest.UID("player")
		a := h.mustLaunch(c, user, "100", nil)
		s := rtSession{h: h, token: a.SessionID, player: user, wallet: domain.PlayerWallet(c.ID, user, slEUR)}
		wantRTOK(t, s.call("stake", stakeTx("s-1", "10.00")), "90.00")
		wantRTOK(t, s.call("payout", payoutTx("p-1", "25.50")), "115.50")
		wantRTOK(t, s.call("promo/settle", with(payoutTx("ps-1", "5.00"), map[string]any{"round": nil})), "120.50")
		h.Pump()
		rows := apitest.Data[[]struct {
			Type         string `json:"type"`
			ExternalTxID string `json:"external_id"`
		}](t, h.Get("/api/v1/transactions?player_id="+user, c.Key))
		seen := map[string]bool{}
		for _, r := range rows {
			seen[r.Type+" "+r.ExternalTxID] = true
		}
		if !seen["bet s-1"] || !seen["win p-1"] || !seen["win ps-1"] {
			t.Fatalf("history %+v", rows)
		}
		rec := h.Get("/api/v1/reports/ggr", c.Key)
		body := rec.Body.String()
		if rec.Code != http.StatusOK || !strings.Contains(body, `"ggr":-15.5`) || !strings.Contains(body, `"promo_wins":5`) {
			t.Fatalf("GGR (10.00 staked, 25.50 won, 5.00 promo): %d %s", rec.Code, body)
		}
	})

	t.Run("same id: same answer; another payload: 401", func(t *testing.T) {
		s := h.session("100")
		first := wantRTOK(t, s.call("stake", stakeTx("s-1", "10.00")), "90.00")
		wantRTOK(t, s.call("stake", stakeTx("s-2", "5.00")), "85.00")
		again := wantRTOK(t, s.call("stake", stakeTx("s-1", "10.00")), "90.00") // a retry
		if again.Result.ID != first.Result.ID {
			t.Fatalf("retry id %s, want %s", again.Result.ID, first.Result.ID)
		}
		if n := len(h.Events(s.wallet, domain.EventBetPlaced)); n != 2 {
			t.Fatalf("%d bet events, want 2", n)
		}
		wantRTCode(t, s.call("stake", stakeTx("s-1", "11.00")), 400, 401)
		wantRTCode(t, s.call("stake", with(stakeTx("s-1", "10.00"), map[string]any{"round": map[string]any{"id": "R-9"}})), 400, 401)
		wantRTCode(t, s.call("payout", payoutTx("s-1", "1.00")), 400, 401)
		p := wantRTOK(t, s.call("payout", payoutTx("p-1", "3.00")), "88.00")
		p2 := wantRTOK(t, s.call("payout", with(payoutTx("p-1", "3.00"), map[string]any{"retry": true})), "88.00")
		if p.Result.ID != p2.Result.ID || len(h.Events(s.wallet, domain.EventWinCredited)) != 1 {
			t.Fatalf("payout retry booked again: %s %s", p.Result.ID, p2.Result.ID)
		}
		if got := h.Balance(s.wallet); got != 8_800 {
			t.Fatalf("wallet %d, want 8800", got)
		}
	})

	t.Run("refund, payout on a refunded stake, refund before its stake", func(t *testing.T) {
		s := h.session("100")
		wantRTOK(t, s.call("stake", stakeTx("s-1", "10.00")), "90.00")
		// The refund's amount is not booked: the ledger gives back what the
		// stake took.
		r := wantRTOK(t, s.call("refund", stakeTx("s-1", "47.00")), "100.00")
		if r.Result.Stake == nil || r.Result.Stake.Cash != "10.00" || r.Currency != "EUR" || r.Result.ID == "" {
			t.Fatalf("refund %+v", r)
		}
		wantRTOK(t, s.call("refund", stakeTx("s-1", "10.00")), "100.00") // retried
		if n := len(h.Events(s.wallet, domain.EventBetRolledBack)); n != 1 {
			t.Fatalf("%d refund events, want 1", n)
		}
		wantRTCode(t, s.call("payout", payoutTx("p-1", "20.00")), 400, 400)

		// A refund before its stake moves nothing; the late stake is refused.
		early := wantRTOK(t, s.call("refund", with(stakeTx("s-late", "10.00"), map[string]any{"round": map[string]any{"id": "R-2"}})), "100.00")
		if early.Result.Stake.Cash != "0.00" {
			t.Fatalf("early refund gave back %s", early.Result.Stake.Cash)
		}
		wantRTCode(t, s.call("stake", with(stakeTx("s-late", "10.00"), map[string]any{"round": map[string]any{"id": "R-2"}})), 400, 401)

		// A settled stake is not refunded; a payout is never refunded.
		wantRTOK(t, s.call("stake", with(stakeTx("s-3", "10.00"), map[string]any{"round": map[string]any{"id": "R-3"}})), "90.00")
		wantRTOK(t, s.call("payout", with(payoutTx("p-3", "4.00"), map[string]any{"round": map[string]any{"id": "R-3", "ends": true}})), "94.00")
		wantRTCode(t, s.call("refund", with(stakeTx("s-3", "10.00"), map[string]any{"round": map[string]any{"id": "R-3"}})), 400, 401)
		wantRTCode(t, s.call("refund", with(stakeTx("p-3", "4.00"), map[string]any{"round": map[string]any{"id": "R-3"}})), 400, 400)
		if got := h.Balance(s.wallet); got != 9_400 {
			t.Fatalf("wallet %d, want 9400", got)
		}
	})

	t.Run("insufficient funds, currency, game, token, user", func(t *testing.T) {
		s := h.session("10")
		wantRTCode(t, s.call("stake", stakeTx("s-1", "10.01")), 400, 304)
		wantRTCode(t, s.call("stake", with(stakeTx("s-2", "1.00"), map[string]any{"currency": "USD"})), 400, 305)
		wantRTCode(t, s.call("auth", map[string]any{"currency": "USD"}), 400, 305)
		wantRTCode(t, s.call("stake", with(stakeTx("s-3", "1.00"), map[string]any{"game": map[string]any{"key": "no-such-game"}})), 400, 200)
		for _, op := range []string{"auth", "stake", "payout", "refund", "promo/buyin", "promo/settle", "promo/refund"} {
			fields := stakeTx("x-1", "1.00")
			switch op {
			case "auth":
				fields = nil
			case "payout", "promo/settle":
				fields = payoutTx("x-1", "1.00")
			}
			wantRTCode(t, s.call(op, with(fields, map[string]any{"token": "no-such-session"})), 400, 301)
			wantRTCode(t, s.call(op, with(fields, map[string]any{"userId": "someone-else"})), 400, 301)
		}
		if got := h.Balance(s.wallet); got != 1_000 {
			t.Fatalf("wallet %d, want 1000", got)
		}
	})

	t.Run("a token of another provider is not a session here", func(t *testing.T) {
		other := apitest.UID("prov")
		if err := h.Gateway.UpsertProvider(context.Background(), gateway.Provider{ID: other, Name: other, Secret: "o",
			Enabled: true, WalletProtocol: gateway.WalletProtocolRedTiger}); err != nil {
			t.Fatal(err)
		}
		s := h.session("10")
		raw := s.body("stake", stakeTx("s-1", "1.00"))
		wantRTCode(t, decodeRT(t, h.rtPost(other, "stake", raw, "o")), 400, 301)
	})

	t.Run("amounts: exact in the currency's decimals or refused", func(t *testing.T) {
		s := h.session("100")
		wantRTOK(t, s.call("stake", stakeTx("s-1", "0.01")), "99.99")
		wantRTOK(t, s.call("stake", stakeTx("s-2", 1.5)), "98.49")     // a JSON number
		wantRTOK(t, s.call("stake", stakeTx("s-3", "1.500")), "96.99") // trailing zeros
		for i, bad := range []any{"0.001", "-1.00", "1e2", "abc", "", "0", true, "99999999999999999999999"} {
			wantRTCode(t, s.call("stake", stakeTx("bad-"+string(rune('a'+i)), bad)), 400, 200)
		}
		wantRTCode(t, s.call("payout", payoutTx("p-1", "0.005")), 400, 200)
		wantRTCode(t, s.call("payout", with(payoutTx("p-2", "1.00"), map[string]any{"transaction": map[string]any{
			"id": "p-2", "payout": "1.00", "sources": map[string]any{"lines": "x"}}})), 400, 200)
		if got := h.Balance(s.wallet); got != 9_699 {
			t.Fatalf("wallet %d, want 9699", got)
		}
	})

	t.Run("bodies: the protocol's error, never a 500", func(t *testing.T) {
		s := h.session("100")
		for _, tc := range []struct {
			name string
			raw  []byte
		}{
			{"not JSON", []byte(`{"token":`)},
			{"empty", []byte(``)},
			{"an array", []byte(`[1]`)},
			{"round.ends a string", s.body("stake", with(stakeTx("t-1", "1.00"), map[string]any{"round": map[string]any{"id": "R", "ends": "yes"}}))},
			{"unknown field", s.body("stake", with(stakeTx("t-2", "1.00"), map[string]any{"bonus": 1}))},
			{"no token", s.body("stake", with(stakeTx("t-3", "1.00"), map[string]any{"token": nil}))},
			{"no transaction", s.body("stake", nil)},
			{"transaction.id with a colon", s.body("stake", stakeTx("t:4", "1.00"))},
			{"a refund without an id", s.body("refund", nil)},
		} {
			for _, op := range []string{"stake", "refund"} {
				a := decodeRT(t, h.rtPost(h.provider, op, tc.raw, h.providerSecret))
				if a.status != 400 || a.Error == nil || a.Error.Code != 200 {
					t.Errorf("%s at %s: HTTP %d %+v, want 400 code 200", tc.name, op, a.status, a.Error)
				}
			}
		}
		// Not sent as JSON.
		rec := h.Do(apitest.Request{Method: http.MethodPost, Path: "/provider/redtiger/" + h.provider + "/wallet/stake",
			Body: s.body("stake", stakeTx("t-5", "1.00")), Header: map[string]string{"Authorization": h.providerSecret,
				"Content-Type": "text/plain"}})
		wantRTCode(t, decodeRT(t, rec), 400, 200)
		if n := len(h.Events(s.wallet, domain.EventBetPlaced)); n != 0 {
			t.Fatalf("%d bets booked from refused bodies", n)
		}
	})

	t.Run("promotions: free rounds, buy-in, settle, refund as promo money", func(t *testing.T) {
		s := h.session("100")
		// A stake the promotion pays: a promo bet of zero.
		free := map[string]any{"transaction": map[string]any{"id": "f-1", "stake": "0.00", "stakePromo": "1.00"},
			"promo": map[string]any{"type": "freeRounds", "instanceCode": "I-1", "campaignCode": "C-1", "instanceId": 7, "campaignId": 3}}
		a := wantRTOK(t, s.call("stake", free), "100.00")
		if a.Result.Stake.Cash != "0.00" {
			t.Fatalf("free stake took %s", a.Result.Stake.Cash)
		}
		// Its payout in promo money: a promo win.
		wantRTOK(t, s.call("payout", map[string]any{"transaction": map[string]any{"id": "f-2", "payout": "0.00", "payoutPromo": "2.50"},
			"promo": map[string]any{"type": "freeRounds"}}), "102.50")
		// A buy-in, settled, and another refunded.
		wantRTOK(t, s.call("promo/buyin", with(stakeTx("b-1", "5.00"), map[string]any{"round": map[string]any{"id": "T-1"}})), "97.50")
		wantRTOK(t, s.call("promo/settle", with(payoutTx("b-1-win", "8.00"), map[string]any{"round": map[string]any{"id": "T-1", "ends": true}})), "105.50")
		wantRTOK(t, s.call("promo/buyin", with(stakeTx("b-2", "5.00"), map[string]any{"round": map[string]any{"id": "T-2"}})), "100.50")
		wantRTOK(t, s.call("promo/refund", with(stakeTx("b-2", "5.00"), map[string]any{"round": map[string]any{"id": "T-2"}})), "105.50")
		promos := map[string]bool{}
		for _, typ := range []domain.EventType{domain.EventBetPlaced, domain.EventWinCredited} {
			for _, e := range h.Events(s.wallet, typ) {
				promos[e.Data.ExternalTxID] = e.Data.Promo
				if e.Data.ExternalTxID == "f-1" && e.Data.Amount != "0.00" {
					t.Fatalf("free stake booked %s", e.Data.Amount)
				}
			}
		}
		for _, id := range []string{"f-1", "f-2", "b-1", "b-1-win", "b-2"} {
			if !promos[id] {
				t.Errorf("%s is not booked as promo money: %v", id, promos)
			}
		}
		// Player and promo money in one call cannot be booked as one kind.
		wantRTCode(t, s.call("stake", map[string]any{"transaction": map[string]any{"id": "m-1", "stake": "1.00", "stakePromo": "1.00"}}), 400, 201)
		wantRTCode(t, s.call("payout", map[string]any{"transaction": map[string]any{"id": "m-2", "payout": "1.00", "payoutPromo": "1.00"}}), 400, 201)
		if got := h.Balance(s.wallet); got != 10_550 {
			t.Fatalf("wallet %d, want 10550", got)
		}
	})

	t.Run("a payout's jackpot part is jackpot money; a contribution is part of the stake", func(t *testing.T) {
		s := h.session("100")
		wantRTOK(t, s.call("stake", stakeTx("s-1", "1.00")), "99.00")
		// The contribution to the pool is the player's stake: booked whole.
		wantRTOK(t, s.call("stake", map[string]any{"transaction": map[string]any{"id": "j-1", "stake": "1.00",
			"details": map[string]any{"game": "0.99", "jackpot": "0.01"}}}), "98.00")
		wantRTOK(t, s.call("payout", map[string]any{"transaction": map[string]any{"id": "j-2", "payout": "500.00",
			"details": map[string]any{"game": "0.00", "jackpot": "500.000000"}}}), "598.00")
		wantRTOK(t, s.call("payout", map[string]any{"transaction": map[string]any{"id": "j-3", "payout": "300.00",
			"sources": map[string]any{"jackpot": map[string]any{"mega": "200.000000", "mini": "50.00"}}},
			"jackpot": map[string]any{"group": "g", "contribution": "0.01", "pots": []string{"mega", "mini"}}}), "898.00")
		// The pots must add up to details.jackpot, and stay within the payout.
		wantRTCode(t, s.call("payout", map[string]any{"transaction": map[string]any{"id": "j-4", "payout": "30.00",
			"details": map[string]any{"jackpot": "10.00"}, "sources": map[string]any{"jackpot": map[string]any{"mega": "20.00"}}}}), 400, 200)
		wantRTCode(t, s.call("payout", map[string]any{"transaction": map[string]any{"id": "j-5", "payout": "30.00",
			"details": map[string]any{"jackpot": "30.01"}}}), 400, 200)
		// Zero jackpot fields are an ordinary payout.
		wantRTOK(t, s.call("payout", with(payoutTx("p-1", "2.00"), map[string]any{"jackpot": map[string]any{"group": "g", "pots": []string{}}})), "900.00")
		var got []string
		for _, e := range h.Events(s.wallet, domain.EventWinCredited) {
			got = append(got, e.Data.ExternalTxID+" "+e.Data.Amount+" jackpot "+e.Data.Jackpot)
		}
		if want := []string{"j-2 500.00 jackpot 500.00", "j-3 300.00 jackpot 250.00", "p-1 2.00 jackpot "}; !slices.Equal(got, want) {
			t.Fatalf("wins %q, want %q", got, want)
		}
		if bets := h.Events(s.wallet, domain.EventBetPlaced); len(bets) != 2 || bets[1].Data.Amount != "1.00" || bets[1].Data.Promo {
			t.Fatalf("bets %+v, want the stake with its contribution booked whole as real money", bets)
		}
	})

	t.Run("an expired token takes no stake, but payouts and refunds", func(t *testing.T) {
		s := h.session("100")
		wantRTOK(t, s.call("stake", stakeTx("s-1", "10.00")), "90.00")
		wantRTOK(t, s.call("stake", with(stakeTx("s-2", "10.00"), map[string]any{"round": map[string]any{"id": "R-2"}})), "80.00")
		h.Clock.Advance(slSessionTTL)
		wantRTCode(t, s.call("stake", stakeTx("s-3", "10.00")), 400, 301)
		wantRTOK(t, s.call("stake", stakeTx("s-1", "10.00")), "90.00") // a retry
		wantRTOK(t, s.call("payout", payoutTx("p-1", "30.00")), "110.00")
		wantRTOK(t, s.call("refund", with(stakeTx("s-2", "10.00"), map[string]any{"round": map[string]any{"id": "R-2"}})), "120.00")
	})

	t.Run("the ledger's chain verifies after the calls", func(t *testing.T) {
		rep, err := h.Audit.Verify(context.Background(), auditstore.VerifyOptions{SkipReadModels: true})
		if err != nil || !rep.OK {
			t.Fatalf("verify: %+v, %v", rep, err)
		}
	})
}

// TestRedTigerWalletAPIKey: a call is refused HTTP 401 code 100, booking
// nothing, unless it carries the API key of the redtiger provider its
// path names; that provider's key does not open the native wallet.
func TestRedTigerWalletAPIKey(t *testing.T) {
	h := newRTHarness(t)
	s := h.session("100")
	raw := s.body("stake", stakeTx("s-1", "10.00"))

	native := apitest.UID("native")
	if err := h.Gateway.UpsertProvider(context.Background(), gateway.Provider{ID: native, Name: native,
		Secret: h.providerSecret, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, provider, auth string
	}{
		{"no Authorization", h.provider, ""},
		{"a wrong key", h.provider, "not-the-key"},
		{"the key with a suffix", h.provider, h.providerSecret + "x"},
		{"a Bearer key", h.provider, "Bearer " + h.providerSecret},
		{"unknown provider", "no-such-provider", h.providerSecret},
		{"a provider on the pitboss protocol, with its own secret", native, h.providerSecret},
	} {
		a := decodeRT(t, h.rtPost(tc.provider, "stake", raw, tc.auth))
		if a.status != http.StatusUnauthorized || a.Error == nil || a.Error.Code != 100 || a.Error.Message != "API authentication error" {
			t.Errorf("%s: HTTP %d %+v, want 401 code 100", tc.name, a.status, a.Error)
		}
	}
	if n := len(h.Events(s.wallet, domain.EventBetPlaced)); n != 0 {
		t.Fatalf("%d stakes booked without the key", n)
	}
	// The provider's secret does not open the native wallet.
	rec := h.WalletCall(h.provider, h.providerSecret, "bet", map[string]any{"session_id": s.token,
		"transaction_id": "n-1", "amount": "1"})
	apitest.WantError(t, rec, http.StatusUnauthorized, "UNAUTHORIZED")
	// The key, bare or after "Basic ", books it.
	wantRTOK(t, decodeRT(t, h.rtPost(h.provider, "stake", raw, "Basic "+h.providerSecret)), "90.00")
	wantRTOK(t, decodeRT(t, h.rtPost(h.provider, "stake", raw, h.providerSecret)), "90.00")

	// A disabled provider is refused like an unknown one.
	h.setProvider(t, false)
	a := decodeRT(t, h.rtPost(h.provider, "auth", s.body("auth", nil), h.providerSecret))
	wantRTCode(t, a, http.StatusUnauthorized, 100)
}

// TestRedTigerWalletFault: a fault of ours (here a process without the
// ledger's stores) is HTTP 500 with code 500 in the protocol's envelope,
// saying nothing of the fault, and carrying the request id.
func TestRedTigerWalletFault(t *testing.T) {
	srv := apitest.EmptyServer(t, "")
	for _, op := range []string{"auth", "stake", "payout", "refund", "promo/buyin", "promo/settle", "promo/refund"} {
		req := httptest.NewRequest(http.MethodPost, "/provider/redtiger/rt/wallet/"+op, strings.NewReader(`{"token":"t"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "k")
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		a := decodeRT(t, rec)
		wantRTCode(t, a, http.StatusInternalServerError, 500)
		rid := rec.Header().Get("X-Request-Id")
		if a.Error.Message != "Internal server error" || rid == "" || !strings.Contains(rec.Body.String(), `"request_id":"`+rid+`"`) {
			t.Fatalf("%s: %s", op, rec.Body)
		}
	}
}
