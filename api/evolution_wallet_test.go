package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/adapters/postgres/auditstore"
	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// Evolution's One Wallet (docs/protocols/evolution.md), tested from the
// protocol as Valkyrie's Evolution adapter describes it: the provider's
// secret as the authToken query parameter; sid, userId, uuid, currency,
// game and transaction (id, refId, amount) in the body; decimal amounts;
// OK and the protocol's error statuses, HTTP 200 but INVALID_TOKEN_ID (401).

// evoHarness is slHarness whose provider is on the evolution protocol.
type evoHarness struct{ *slHarness }

func newEvoHarness(t *testing.T) *evoHarness {
	t.Helper()
	h := &evoHarness{newSLHarness(t)}
	if err := h.Gateway.UpsertProvider(context.Background(), gateway.Provider{ID: h.provider, Name: "Evolution test",
		Secret: h.providerSecret, Enabled: true, WalletProtocol: gateway.WalletProtocolEvolution}); err != nil {
		t.Fatal(err)
	}
	return h
}

// evoPost sends raw to provider's op with authToken token ("" sends none).
func (h *evoHarness) evoPost(provider, op, token string, raw []byte) *httptest.ResponseRecorder {
	h.t.Helper()
	path := "/provider/evolution/" + provider + "/wallet/" + op
	if token != "" {
		path += "?" + url.Values{"authToken": {token}}.Encode()
	}
	return h.Do(apitest.Request{Method: http.MethodPost, Path: path, Body: raw})
}

// evoAnswer is the protocol's standard answer; Balance and Bonus keep
// the JSON number's text.
type evoAnswer struct {
	Status  string      `json:"status"`
	Balance json.Number `json:"balance"`
	Bonus   json.Number `json:"bonus"`
	UUID    string      `json:"uuid"`
}

// evoSession is one launched session of a fresh player.
type evoSession struct {
	h      *evoHarness
	sid    string
	player string
	wallet domain.AccountID
}

func (h *evoHarness) session(balance string) evoSession {
	h.t.Helper()
	c := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch}, gateway.LaunchSettings{})
	user := apitest.UID("player")
	a := h.mustLaunch(c, user, balance, nil)
	return evoSession{h: h, sid: a.SessionID, player: user, wallet: domain.PlayerWallet(c.ID, user, slEUR)}
}

// body is op's body: the protocol's fields for a bet refId ref in round
// "R1" at the session's table, fields added or replaced (a nil value
// removes one). amount is written as a JSON number.
func (s evoSession) body(op, ref, amount string, fields map[string]any) []byte {
	s.h.t.Helper()
	b := map[string]any{"sid": s.sid, "userId": s.player, "uuid": apitest.UID("uuid")}
	game := map[string]any{"id": "R1", "type": "blackjack", "details": map[string]any{"table": map[string]any{"id": s.h.game, "vid": "v1"}}}
	switch op {
	case "check":
		b["channel"] = map[string]any{"type": "P"}
	case "balance":
		b["currency"] = "EUR"
		b["game"] = nil
	case "debit", "credit", "cancel":
		b["currency"] = "EUR"
		b["game"] = game
		tx := map[string]any{"id": apitest.UID("tx"), "refId": ref}
		if amount != "" {
			tx["amount"] = json.RawMessage(amount)
		}
		b["transaction"] = tx
	case "promo_payout":
		b["currency"] = "EUR"
		b["game"] = game
		b["promoTransaction"] = map[string]any{"type": "FromTournament", "id": ref, "amount": json.RawMessage(amount),
			"voucherId": "v-1", "remainingRounds": 0}
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

// call sends op with the provider's secret as the authToken.
func (s evoSession) call(op, ref, amount string, fields map[string]any) evoAnswer {
	s.h.t.Helper()
	return s.send(op, s.body(op, ref, amount, fields))
}

func (s evoSession) send(op string, raw []byte) evoAnswer {
	s.h.t.Helper()
	return decodeEvo(s.h.t, s.h.evoPost(s.h.provider, op, s.h.providerSecret, raw), raw, http.StatusOK)
}

// decodeEvo reads an answer of HTTP code, which echoes the request's uuid
// when the request had one that could be read.
func decodeEvo(t *testing.T, rec *httptest.ResponseRecorder, sent []byte, code int) evoAnswer {
	t.Helper()
	if rec.Code != code {
		t.Fatalf("HTTP %d, want %d: %s", rec.Code, code, rec.Body)
	}
	a := apitest.Decode[evoAnswer](t, rec)
	var req struct {
		UUID string `json:"uuid"`
	}
	_ = json.Unmarshal(sent, &req)
	if a.UUID != req.UUID {
		t.Fatalf("uuid %q, sent %q", a.UUID, req.UUID)
	}
	return a
}

// wantEvo checks an answer's status and balance (the player's, in EUR
// with its 2 decimals; bonus always 0.00).
func wantEvo(t *testing.T, a evoAnswer, status, balance string) {
	t.Helper()
	if a.Status != status || a.Balance.String() != balance || a.Bonus.String() != "0.00" {
		t.Fatalf("answer %+v, want %s with balance %s and bonus 0.00", a, status, balance)
	}
}

// TestEvolutionWallet plays Evolution's wallet against the real ledger:
// every call, every status the dialect answers, idempotent retries,
// cancels (before their debit too), credits on cancelled bets, precision.
func TestEvolutionWallet(t *testing.T) {
	h := newEvoHarness(t)

	t.Run("check answers the sid; an unknown sid or another player is refused", func(t *testing.T) {
		s := h.session("100")
		raw := s.body("check", "", "", nil)
		rec := h.evoPost(h.provider, "check", h.providerSecret, raw)
		var a struct{ Status, SID, UUID string }
		if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil || rec.Code != http.StatusOK || a.Status != "OK" ||
			a.SID != s.sid || a.UUID == "" {
			t.Fatalf("check: %d %s", rec.Code, rec.Body)
		}
		for _, tc := range []struct {
			fields map[string]any
			status string
		}{
			{map[string]any{"sid": "no-such-session"}, "INVALID_SID"},
			{map[string]any{"userId": "someone-else"}, "INVALID_PARAMETER"},
			{map[string]any{"sid": nil}, "INVALID_PARAMETER"},
		} {
			rec := h.evoPost(h.provider, "check", h.providerSecret, s.body("check", "", "", tc.fields))
			a.Status, a.SID = "", ""
			if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil || rec.Code != http.StatusOK || a.Status != tc.status || a.SID != "" {
				t.Errorf("check %v: %d %s, want %s", tc.fields, rec.Code, rec.Body, tc.status)
			}
		}
	})

	t.Run("balance, debit, credit: the native ledger events, decimal amounts", func(t *testing.T) {
		s := h.session("100")
		wantEvo(t, s.call("balance", "", "", nil), "OK", "100.00")
		wantEvo(t, s.call("debit", "ref-1", "10", nil), "OK", "90.00")
		wantEvo(t, s.call("credit", "ref-1", "25.5", nil), "OK", "115.50")
		bets, wins := h.Events(s.wallet, domain.EventBetPlaced), h.Events(s.wallet, domain.EventWinCredited)
		if len(bets) != 1 || len(wins) != 1 {
			t.Fatalf("%d bet and %d win events, want 1 and 1", len(bets), len(wins))
		}
		b, w := bets[0].Data, wins[0].Data
		if b.Amount != "10.00" || b.BalanceAfter != "90.00" || b.ExternalTxID != "bet@ref-1" || b.RoundID != "R1" ||
			b.GameID != h.game || b.SessionID != s.sid || b.Provider != h.provider || b.Promo {
			t.Fatalf("bet event %+v", b)
		}
		if w.Amount != "25.50" || w.ExternalTxID != "credit@ref-1" || w.ReferenceTx != "bet@ref-1" || w.Promo {
			t.Fatalf("win event %+v", w)
		}
		// A lost bet is settled with a credit of 0.
		wantEvo(t, s.call("debit", "ref-2", "5.00", nil), "OK", "110.50")
		wantEvo(t, s.call("credit", "ref-2", "0", nil), "OK", "110.50")
		// Two bets in one round, settled one by one (a multi-hand game).
		wantEvo(t, s.call("debit", "ref-3", "1", map[string]any{"game": map[string]any{"id": "R2"}}), "OK", "109.50")
		wantEvo(t, s.call("debit", "ref-4", "2", map[string]any{"game": map[string]any{"id": "R2"}}), "OK", "107.50")
		wantEvo(t, s.call("credit", "ref-4", "4", map[string]any{"game": map[string]any{"id": "R2"}}), "OK", "111.50")
		wantEvo(t, s.call("credit", "ref-3", "0", map[string]any{"game": map[string]any{"id": "R2"}}), "OK", "111.50")
		// Another table of the provider books under that game; a table the
		// catalog does not list, or another provider's, is refused.
		other := apitest.UID("table")
		h.AddGame(other, h.provider, "Another table", "live", true)
		at := func(table string) map[string]any {
			return map[string]any{"game": map[string]any{"id": "R3", "details": map[string]any{"table": map[string]any{"id": table}}}}
		}
		wantEvo(t, s.call("debit", "ref-5", "1", at(other)), "OK", "110.50")
		if g := h.Events(s.wallet, domain.EventBetPlaced)[4].Data.GameID; g != other {
			t.Fatalf("bet at table %s booked under %q", other, g)
		}
		foreign := apitest.UID("foreign")
		if err := h.Gateway.UpsertProvider(context.Background(), gateway.Provider{ID: foreign, Name: foreign, Secret: "s", Enabled: true}); err != nil {
			t.Fatal(err)
		}
		foreignGame := apitest.UID("fgame")
		h.AddGame(foreignGame, foreign, "Foreign", "live", true)
		wantEvo(t, s.call("debit", "ref-6", "1", at("unlisted-table")), "INVALID_PARAMETER", "110.50")
		wantEvo(t, s.call("debit", "ref-7", "1", at(foreignGame)), "INVALID_PARAMETER", "110.50")
	})

	t.Run("history, balances and GGR read the calls as native ones; a promo payout is promo money", func(t *testing.T) {
		c := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch, gateway.ScopeTransactionsRead, gateway.ScopeWalletRead,
			gateway.ScopeReportsRead}, gateway.LaunchSettings{})
		user := apitest.UID("player")
		a := h.mustLaunch(c, user, "100", nil)
		s := evoSession{h: h, sid: a.SessionID, player: user, wallet: domain.PlayerWallet(c.ID, user, slEUR)}
		wantEvo(t, s.call("debit", "ref-1", "10", nil), "OK", "90.00")
		wantEvo(t, s.call("credit", "ref-1", "25.50", nil), "OK", "115.50")
		wantEvo(t, s.call("promo_payout", "promo-1", "7", nil), "OK", "122.50")
		h.Pump()
		type row struct {
			Type         string `json:"type"`
			ExternalTxID string `json:"external_id"`
			Promo        bool   `json:"promo"`
		}
		rows := apitest.Data[[]row](t, h.Get("/api/v1/transactions?player_id="+user, c.Key))
		seen := map[string]bool{}
		for _, r := range rows {
			seen[r.Type+" "+r.ExternalTxID] = r.Promo
		}
		if promo, ok := seen["bet bet@ref-1"]; !ok || promo {
			t.Fatalf("history %+v, want the bet bet@ref-1 as real money", rows)
		}
		if promo, ok := seen["win promo@promo-1"]; !ok || !promo {
			t.Fatalf("history %+v, want the promo win promo@promo-1", rows)
		}
		rec := h.Get("/api/v1/wallet/balance?player_id="+user+"&currency=EUR", c.Key)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "122.5") {
			t.Fatalf("balance: %d %s", rec.Code, rec.Body)
		}
		// GGR: 10.00 staked, 25.50 won; the 7.00 promo payout is promo GGR.
		rec = h.Get("/api/v1/reports/ggr", c.Key)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"ggr":-15.50`) ||
			!strings.Contains(rec.Body.String(), `"promo_wins":7.00`) || !strings.Contains(rec.Body.String(), `"promo_ggr":-7.00`) {
			t.Fatalf("GGR: %d %s", rec.Code, rec.Body)
		}
	})

	t.Run("retries answer as the first time; a reused id with other fields is refused", func(t *testing.T) {
		s := h.session("100")
		debit := s.body("debit", "ref-1", "10", nil)
		wantEvo(t, s.send("debit", debit), "OK", "90.00")
		wantEvo(t, s.call("debit", "ref-2", "5", nil), "OK", "85.00")
		// The retry (same body) answers the original balance, books nothing.
		wantEvo(t, s.send("debit", debit), "OK", "90.00")
		// The same bet with another amount or round: the current balance.
		wantEvo(t, s.call("debit", "ref-1", "11", nil), "BET_ALREADY_EXIST", "85.00")
		wantEvo(t, s.call("debit", "ref-1", "10", map[string]any{"game": map[string]any{"id": "R9"}}), "BET_ALREADY_EXIST", "85.00")
		if n := len(h.Events(s.wallet, domain.EventBetPlaced)); n != 2 {
			t.Fatalf("%d bet events, want 2", n)
		}
		credit := s.body("credit", "ref-1", "20", nil)
		wantEvo(t, s.send("credit", credit), "OK", "105.00")
		wantEvo(t, s.send("credit", credit), "OK", "105.00")
		// A second credit of the bet (another transaction id, amount).
		wantEvo(t, s.call("credit", "ref-1", "30", nil), "BET_ALREADY_SETTLED", "105.00")
		if n := len(h.Events(s.wallet, domain.EventWinCredited)); n != 1 {
			t.Fatalf("%d win events, want 1", n)
		}
		promo := s.body("promo_payout", "p-1", "3", nil)
		wantEvo(t, s.send("promo_payout", promo), "OK", "108.00")
		wantEvo(t, s.send("promo_payout", promo), "OK", "108.00")
		wantEvo(t, s.call("promo_payout", "p-1", "4", nil), "BET_ALREADY_EXIST", "108.00")
		if got := h.Balance(s.wallet); got != 10_800 {
			t.Fatalf("wallet %d, want 10800", got)
		}
	})

	t.Run("cancel; credit on a cancelled bet; cancel of a settled or unknown bet; cancel before its debit", func(t *testing.T) {
		s := h.session("100")
		wantEvo(t, s.call("debit", "ref-1", "10", nil), "OK", "90.00")
		cancel := s.body("cancel", "ref-1", "10", nil)
		wantEvo(t, s.send("cancel", cancel), "OK", "100.00")
		wantEvo(t, s.send("cancel", cancel), "OK", "100.00") // retried
		if n := len(h.Events(s.wallet, domain.EventBetRolledBack)); n != 1 {
			t.Fatalf("%d cancel events, want 1", n)
		}
		wantEvo(t, s.call("credit", "ref-1", "30", nil), "BET_ALREADY_SETTLED", "100.00")
		wantEvo(t, s.call("credit", "never", "30", nil), "BET_DOES_NOT_EXIST", "100.00")

		// A settled bet is not cancelled.
		wantEvo(t, s.call("debit", "ref-2", "10", nil), "OK", "90.00")
		wantEvo(t, s.call("credit", "ref-2", "15", nil), "OK", "105.00")
		wantEvo(t, s.call("cancel", "ref-2", "10", nil), "BET_ALREADY_SETTLED", "105.00")

		// A cancel before its debit books no money; the late debit is
		// refused, and so is a credit of it.
		wantEvo(t, s.call("cancel", "ref-late", "10", nil), "BET_DOES_NOT_EXIST", "105.00")
		wantEvo(t, s.call("cancel", "ref-late", "10", nil), "BET_DOES_NOT_EXIST", "105.00")
		wantEvo(t, s.call("debit", "ref-late", "10", nil), "BET_ALREADY_SETTLED", "105.00")
		wantEvo(t, s.call("credit", "ref-late", "10", nil), "BET_ALREADY_SETTLED", "105.00")
		// A cancel without an amount refunds what the ledger debited.
		wantEvo(t, s.call("debit", "ref-3", "4", nil), "OK", "101.00")
		wantEvo(t, s.call("cancel", "ref-3", "", nil), "OK", "105.00")
		if got := h.Balance(s.wallet); got != 10_500 {
			t.Fatalf("wallet %d, want 10500", got)
		}
	})

	t.Run("insufficient funds, wrong currency, another player, unknown sid", func(t *testing.T) {
		s := h.session("10")
		wantEvo(t, s.call("debit", "ref-1", "10.01", nil), "INSUFFICIENT_FUNDS", "10.00")
		wantEvo(t, s.call("debit", "ref-2", "1", map[string]any{"currency": "USD"}), "INVALID_PARAMETER", "10.00")
		wantEvo(t, s.call("balance", "", "", map[string]any{"currency": "USD"}), "INVALID_PARAMETER", "10.00")
		wantEvo(t, s.call("debit", "ref-3", "1", map[string]any{"userId": "someone-else"}), "INVALID_PARAMETER", "10.00")
		for _, op := range []string{"balance", "debit", "credit", "cancel", "promo_payout"} {
			a := s.call(op, "x-1", "1", map[string]any{"sid": "no-such-session"})
			if a.Status != "INVALID_SID" || a.Balance.String() != "0" {
				t.Errorf("%s with an unknown sid: %+v, want INVALID_SID with balance 0", op, a)
			}
		}
		if got := h.Balance(s.wallet); got != 1_000 {
			t.Fatalf("wallet %d, want 1000", got)
		}
	})

	t.Run("amounts: exact in the currency's decimals or refused", func(t *testing.T) {
		s := h.session("100")
		wantEvo(t, s.call("debit", "ok-1", "0.01", nil), "OK", "99.99")
		wantEvo(t, s.call("debit", "ok-2", "1.000000", nil), "OK", "98.99")
		for i, amount := range []string{"0.001", "1.005", "-1", "0", "1e2", `"1"`, "null", "99999999999999999999999"} {
			a := s.call("debit", "bad-"+string(rune('a'+i)), amount, nil)
			// A string is refused by the decoder, before the session is
			// read: no balance to tell.
			want := "98.99"
			if amount == `"1"` {
				want = "0"
			}
			if a.Status != "INVALID_PARAMETER" || a.Balance.String() != want {
				t.Errorf("amount %s: %+v, want INVALID_PARAMETER with balance %s", amount, a, want)
			}
		}
		if got := h.Balance(s.wallet); got != 9_899 {
			t.Fatalf("wallet %d, want 9899", got)
		}
	})

	t.Run("bodies: never a 500, always INVALID_PARAMETER, nothing booked", func(t *testing.T) {
		s := h.session("100")
		for _, tc := range []struct {
			name string
			raw  []byte
		}{
			{"not JSON", []byte(`{"sid":`)},
			{"empty", []byte(``)},
			{"an array", []byte(`[]`)},
			{"unknown field", s.body("debit", "t-1", "1", map[string]any{"bonus": 1})},
			{"sid a number", s.body("debit", "t-2", "1", map[string]any{"sid": 7})},
			{"no transaction", s.body("debit", "t-3", "1", map[string]any{"transaction": nil})},
			{"no refId", s.body("debit", "", "1", nil)},
			{"no transaction id", s.body("debit", "t-4", "1", map[string]any{"transaction": map[string]any{"refId": "t-4", "amount": 1}})},
			{"no amount", s.body("debit", "t-5", "", nil)},
			{"no sid", s.body("debit", "t-6", "1", map[string]any{"sid": nil})},
			{"no userId", s.body("debit", "t-7", "1", map[string]any{"userId": nil})},
			{"no currency", s.body("debit", "t-8", "1", map[string]any{"currency": nil})},
			{"a refId the ledger cannot hold", s.body("debit", "has space", "1", nil)},
		} {
			raw := tc.raw
			rec := h.evoPost(h.provider, "debit", h.providerSecret, raw)
			if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"status":"INVALID_PARAMETER"`) {
				t.Errorf("%s: %d %s, want 200 INVALID_PARAMETER", tc.name, rec.Code, rec.Body)
			}
		}
		for _, op := range []string{"check", "balance", "credit", "cancel", "promo_payout"} {
			rec := h.evoPost(h.provider, op, h.providerSecret, []byte(`{"sid":`))
			if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"status":"INVALID_PARAMETER"`) {
				t.Errorf("%s, not JSON: %d %s", op, rec.Code, rec.Body)
			}
		}
		// promo_payout without its promoTransaction or its id.
		for _, f := range []map[string]any{{"promoTransaction": nil}, {"promoTransaction": map[string]any{"amount": 1}}} {
			wantEvo(t, s.call("promo_payout", "p-1", "1", f), "INVALID_PARAMETER", "100.00")
		}
		rec := h.Do(apitest.Request{Method: http.MethodPost, Path: "/provider/evolution/" + h.provider + "/wallet/debit?authToken=" +
			url.QueryEscape(h.providerSecret), Body: s.body("debit", "t-9", "1", nil), Header: map[string]string{"Content-Type": "text/plain"}})
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"status":"INVALID_PARAMETER"`) {
			t.Errorf("text/plain body: %d %s", rec.Code, rec.Body)
		}
		if n := len(h.Events(s.wallet, domain.EventBetPlaced)); n != 0 {
			t.Fatalf("%d bets booked from refused bodies", n)
		}
	})

	t.Run("an ended session takes no debit, but credits, cancels and promo payouts", func(t *testing.T) {
		s := h.session("100")
		wantEvo(t, s.call("debit", "ref-1", "10", nil), "OK", "90.00")
		wantEvo(t, s.call("debit", "ref-2", "10", nil), "OK", "80.00")
		retry := s.body("debit", "ref-3", "10", nil)
		wantEvo(t, s.send("debit", retry), "OK", "70.00")
		h.Clock.Advance(slSessionTTL)
		wantEvo(t, s.call("debit", "ref-4", "10", nil), "INVALID_SID", "70.00")
		wantEvo(t, s.send("debit", retry), "OK", "70.00") // a retry of a debit made in time
		wantEvo(t, s.call("credit", "ref-1", "30", nil), "OK", "100.00")
		wantEvo(t, s.call("cancel", "ref-2", "10", nil), "OK", "110.00")
		wantEvo(t, s.call("promo_payout", "p-1", "5", nil), "OK", "115.00")
	})

	t.Run("the ledger's chain verifies after the calls", func(t *testing.T) {
		rep, err := h.Audit.Verify(context.Background(), auditstore.VerifyOptions{SkipReadModels: true})
		if err != nil || !rep.OK {
			t.Fatalf("verify: %+v, %v", rep, err)
		}
	})
}

// TestEvolutionWalletAuthToken: a call is refused 401 INVALID_TOKEN_ID,
// booking nothing, unless its authToken is the secret of the evolution
// provider its path names; the native wallet refuses that provider.
func TestEvolutionWalletAuthToken(t *testing.T) {
	h := newEvoHarness(t)
	s := h.session("100")
	raw := s.body("debit", "ref-1", "10", nil)

	native := apitest.UID("native")
	if err := h.Gateway.UpsertProvider(context.Background(), gateway.Provider{ID: native, Name: native,
		Secret: h.providerSecret, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, provider, token string
	}{
		{"no authToken", h.provider, ""},
		{"a wrong authToken", h.provider, "not-the-secret"},
		{"the secret with a byte more", h.provider, h.providerSecret + "x"},
		{"a prefix of the secret", h.provider, h.providerSecret[:len(h.providerSecret)-1]},
		{"unknown provider", "no-such-provider", h.providerSecret},
		{"a provider on the pitboss protocol, with its secret", native, h.providerSecret},
	} {
		a := decodeEvo(t, h.evoPost(tc.provider, "debit", tc.token, raw), raw, http.StatusUnauthorized)
		if a.Status != "INVALID_TOKEN_ID" || a.Balance.String() != "0" {
			t.Errorf("%s: %+v, want INVALID_TOKEN_ID", tc.name, a)
		}
	}
	// The token is read from the query, not the body or a header.
	rec := h.Do(apitest.Request{Method: http.MethodPost, Path: "/provider/evolution/" + h.provider + "/wallet/balance",
		Body: s.body("balance", "", "", nil), Header: map[string]string{"authToken": h.providerSecret}})
	if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), "INVALID_TOKEN_ID") {
		t.Fatalf("the token as a header: %d %s", rec.Code, rec.Body)
	}
	// Another evolution provider, with its own secret, cannot play this
	// provider's session: the sid is not its own.
	second, secondSecret := apitest.UID("evo2"), "second-secret-"+apitest.UID("s")
	if err := h.Gateway.UpsertProvider(context.Background(), gateway.Provider{ID: second, Name: second,
		Secret: secondSecret, Enabled: true, WalletProtocol: gateway.WalletProtocolEvolution}); err != nil {
		t.Fatal(err)
	}
	if a := decodeEvo(t, h.evoPost(second, "debit", h.providerSecret, raw), raw, http.StatusUnauthorized); a.Status != "INVALID_TOKEN_ID" {
		t.Fatalf("the first provider's secret at the second's path: %+v", a)
	}
	if a := decodeEvo(t, h.evoPost(second, "debit", secondSecret, raw), raw, http.StatusOK); a.Status != "INVALID_SID" || a.Balance.String() != "0" {
		t.Fatalf("the first provider's sid at the second's path: %+v, want INVALID_SID", a)
	}
	if n := len(h.Events(s.wallet, domain.EventBetPlaced)); n != 0 {
		t.Fatalf("%d bets booked without the right authToken", n)
	}
	// The provider's secret does not open the native wallet for it.
	rec = h.WalletCall(h.provider, h.providerSecret, "bet", map[string]any{"session_id": s.sid,
		"transaction_id": "n-1", "amount": "1"})
	apitest.WantError(t, rec, http.StatusUnauthorized, "UNAUTHORIZED")
	// The right token books it.
	wantEvo(t, decodeEvo(t, h.evoPost(h.provider, "debit", h.providerSecret, raw), raw, http.StatusOK), "OK", "90.00")

	// A disabled provider is refused like an unknown one.
	if err := h.Gateway.UpsertProvider(context.Background(), gateway.Provider{ID: h.provider, Name: "Evolution test",
		Secret: h.providerSecret, Enabled: false}); err != nil {
		t.Fatal(err)
	}
	bal := s.body("balance", "", "", nil)
	if a := decodeEvo(t, h.evoPost(h.provider, "balance", h.providerSecret, bal), bal, http.StatusUnauthorized); a.Status != "INVALID_TOKEN_ID" {
		t.Fatalf("disabled provider: %+v", a)
	}
}
