package api_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/adapters/postgres/auditstore"
	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// The Caleta wallet (docs/protocols/caleta.md), tested from the Caleta
// Gaming System API 1.5 document: RSA-SHA256 of the raw body, standard
// base64, in X-Auth-Signature; integer amounts ×100000; every answer HTTP
// 200 with an RS_ status.

// caletaHarness is slHarness whose provider is on the caleta protocol,
// with the provider's private key (generated here) to sign its calls.
type caletaHarness struct {
	*slHarness
	key *rsa.PrivateKey
}

func newRSAKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func publicPEM(t *testing.T, k *rsa.PrivateKey) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

func newCaletaHarness(t *testing.T) *caletaHarness {
	t.Helper()
	h := &caletaHarness{slHarness: newSLHarness(t), key: newRSAKey(t)}
	if err := h.Gateway.UpsertProvider(context.Background(), gateway.Provider{ID: h.provider, Name: "Caleta test",
		Secret: h.providerSecret, Enabled: true, WalletProtocol: gateway.WalletProtocolCaleta,
		WalletPublicKey: publicPEM(t, h.key)}); err != nil {
		t.Fatal(err)
	}
	return h
}

// caletaSign is the document's X-Auth-Signature of body: RSA-SHA256
// (PKCS #1 v1.5) with key, standard base64. Written from the document,
// not taken from the code under test.
func caletaSign(t *testing.T, key *rsa.PrivateKey, body []byte) string {
	t.Helper()
	sum := sha256.Sum256(body)
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(sig)
}

// caletaPost sends raw to provider's op with signature sig ("" sends no
// header).
func (h *caletaHarness) caletaPost(provider, op string, raw []byte, sig string) *httptest.ResponseRecorder {
	h.t.Helper()
	hdr := map[string]string{}
	if sig != "" {
		hdr["X-Auth-Signature"] = sig
	}
	return h.Do(apitest.Request{Method: http.MethodPost, Path: "/provider/caleta/" + provider + "/wallet/" + op,
		Body: raw, Header: hdr})
}

// caletaAnswer is the document's BalanceResponse.
type caletaAnswer struct {
	User        string `json:"user"`
	Status      string `json:"status"`
	RequestUUID string `json:"request_uuid"`
	Currency    string `json:"currency"`
	Balance     *int64 `json:"balance"`
}

// caletaSession is one launched session of a fresh player.
type caletaSession struct {
	h      *caletaHarness
	token  string
	player string
	wallet domain.AccountID
	client apitest.Client
}

func (h *caletaHarness) session(balance string) caletaSession {
	h.t.Helper()
	c := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch}, gateway.LaunchSettings{})
	user := apitest.UID("player")
	a := h.mustLaunch(c, user, balance, nil)
	return caletaSession{h: h, token: a.SessionID, player: user, wallet: domain.PlayerWallet(c.ID, user, slEUR), client: c}
}

// body is op's body with the document's required fields, fields added or
// replaced (a nil value removes one).
func (s caletaSession) body(op string, fields map[string]any) []byte {
	s.h.t.Helper()
	b := map[string]any{"token": s.token, "request_uuid": apitest.UID("req"), "game_code": s.h.game}
	switch op {
	case "balance":
		b["supplier_user"] = "cg_" + s.player
	case "bet", "win":
		b["supplier_user"] = "cg_" + s.player
		b["currency"] = "EUR"
		b["round"] = "CG-1"
		b["round_closed"] = false
		b["is_free"] = false
	case "rollback":
		b["round"] = "CG-1"
		b["round_closed"] = false
	case "check":
		b = map[string]any{"token": s.token}
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

// call sends op signed with the provider's key.
func (s caletaSession) call(op string, fields map[string]any) caletaAnswer {
	s.h.t.Helper()
	raw := s.body(op, fields)
	return decodeCaleta(s.h.t, s.h.caletaPost(s.h.provider, op, raw, caletaSign(s.h.t, s.h.key, raw)), raw)
}

// decodeCaleta reads an answer, which is always HTTP 200 JSON echoing the
// request's request_uuid.
func decodeCaleta(t *testing.T, rec *httptest.ResponseRecorder, sent []byte) caletaAnswer {
	t.Helper()
	if rec.Code != http.StatusOK {
		t.Fatalf("HTTP %d, want 200: %s", rec.Code, rec.Body)
	}
	a := apitest.Decode[caletaAnswer](t, rec)
	var req struct {
		RequestUUID string `json:"request_uuid"`
	}
	_ = json.Unmarshal(sent, &req)
	if a.RequestUUID != req.RequestUUID {
		t.Fatalf("request_uuid %q, sent %q", a.RequestUUID, req.RequestUUID)
	}
	return a
}

func wantCaletaOK(t *testing.T, a caletaAnswer, balance int64, user string) {
	t.Helper()
	if a.Status != "RS_OK" || a.Balance == nil || *a.Balance != balance || a.Currency != "EUR" || a.User != user {
		t.Fatalf("answer %+v (balance %v), want RS_OK with balance %d for %s", a, deref(a.Balance), balance, user)
	}
}

func wantCaletaStatus(t *testing.T, a caletaAnswer, status string) {
	t.Helper()
	if a.Status != status || a.Balance != nil {
		t.Fatalf("answer %+v, want %s without a balance", a, status)
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestCaletaWallet plays the Caleta wallet against the real ledger: every
// status of the document that applies, idempotency, rollbacks, precision
// and the unsupported free-bet and jackpot fields.
func TestCaletaWallet(t *testing.T) {
	h := newCaletaHarness(t)

	t.Run("balance, bet, win: the native ledger events, amounts ×100000", func(t *testing.T) {
		s := h.session("100")
		wantCaletaOK(t, s.call("balance", nil), 10_000_000, s.player)
		wantCaletaOK(t, s.call("bet", map[string]any{"transaction_uuid": "b-1", "amount": 1_000_000}), 9_000_000, s.player)
		wantCaletaOK(t, s.call("win", map[string]any{"transaction_uuid": "w-1", "reference_transaction_uuid": "b-1",
			"amount": 2_550_000, "round_closed": true}), 11_550_000, s.player)
		if got := h.Balance(s.wallet); got != 11_550 {
			t.Fatalf("wallet %d minor, want 11550", got)
		}
		bets, wins := h.Events(s.wallet, domain.EventBetPlaced), h.Events(s.wallet, domain.EventWinCredited)
		if len(bets) != 1 || len(wins) != 1 {
			t.Fatalf("%d bet and %d win events, want 1 and 1", len(bets), len(wins))
		}
		b, w := bets[0].Data, wins[0].Data
		if b.Amount != "10.00" || b.BalanceAfter != "90.00" || b.ExternalTxID != "b-1" || b.RoundID != "CG-1" ||
			b.GameID != h.game || b.SessionID != s.token || b.Provider != h.provider || b.Promo {
			t.Fatalf("bet event %+v", b)
		}
		if w.Amount != "25.50" || w.BalanceAfter != "115.50" || w.ReferenceTx != "b-1" || !w.RoundClosed {
			t.Fatalf("win event %+v", w)
		}
		// A lost round closed with a win of 0, as the document allows.
		wantCaletaOK(t, s.call("bet", map[string]any{"transaction_uuid": "b-2", "round": "CG-2", "amount": 500_000}), 11_050_000, s.player)
		wantCaletaOK(t, s.call("win", map[string]any{"transaction_uuid": "w-2", "reference_transaction_uuid": "b-2",
			"round": "CG-2", "amount": 0, "round_closed": true}), 11_050_000, s.player)
	})

	t.Run("history, balances and GGR read the calls as native ones", func(t *testing.T) {
		c := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch, gateway.ScopeTransactionsRead, gateway.ScopeWalletRead,
			gateway.ScopeReportsRead}, gateway.LaunchSettings{})
		user := apitest.UID("player")
		a := h.mustLaunch(c, user, "100", nil)
		s := caletaSession{h: h, token: a.SessionID, player: user, wallet: domain.PlayerWallet(c.ID, user, slEUR)}
		wantCaletaOK(t, s.call("bet", map[string]any{"transaction_uuid": "b-1", "amount": 1_000_000}), 9_000_000, s.player)
		wantCaletaOK(t, s.call("win", map[string]any{"transaction_uuid": "w-1", "reference_transaction_uuid": "b-1",
			"amount": 2_550_000, "round_closed": true}), 11_550_000, s.player)
		h.Pump()
		type row struct {
			Type         string `json:"type"`
			ExternalTxID string `json:"external_id"`
			Provider     string `json:"provider"`
		}
		rows := apitest.Data[[]row](t, h.Get("/api/v1/transactions?player_id="+user, c.Key))
		seen := map[string]bool{}
		for _, r := range rows {
			seen[r.Type+" "+r.ExternalTxID] = true
		}
		if !seen["bet b-1"] || !seen["win w-1"] {
			t.Fatalf("history %+v, want the bet b-1 and the win w-1", rows)
		}
		rec := h.Get("/api/v1/wallet/balance?player_id="+user+"&currency=EUR", c.Key)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "115.5") {
			t.Fatalf("balance: %d %s", rec.Code, rec.Body)
		}
		rec = h.Get("/api/v1/reports/ggr", c.Key)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "-15.5") {
			t.Fatalf("GGR (10.00 staked, 25.50 won): %d %s", rec.Code, rec.Body)
		}
	})

	t.Run("same transaction_uuid: same answer; another payload: duplicate", func(t *testing.T) {
		s := h.session("100")
		bet := map[string]any{"transaction_uuid": "b-1", "amount": 1_000_000}
		wantCaletaOK(t, s.call("bet", bet), 9_000_000, s.player)
		wantCaletaOK(t, s.call("bet", map[string]any{"transaction_uuid": "b-2", "amount": 500_000}), 8_500_000, s.player)
		// The retry answers the original balance and books nothing.
		wantCaletaOK(t, s.call("bet", bet), 9_000_000, s.player)
		if n := len(h.Events(s.wallet, domain.EventBetPlaced)); n != 2 {
			t.Fatalf("%d bet events, want 2", n)
		}
		for _, other := range []map[string]any{
			{"transaction_uuid": "b-1", "amount": 1_100_000},
			{"transaction_uuid": "b-1", "amount": 1_000_000, "round": "CG-9"},
		} {
			wantCaletaStatus(t, s.call("bet", other), "RS_ERROR_DUPLICATE_TRANSACTION")
		}
		wantCaletaStatus(t, s.call("win", map[string]any{"transaction_uuid": "b-1", "reference_transaction_uuid": "b-2",
			"amount": 1_000_000}), "RS_ERROR_DUPLICATE_TRANSACTION")
		if got := h.Balance(s.wallet); got != 8_500 {
			t.Fatalf("wallet %d, want 8500", got)
		}
	})

	t.Run("rollback, win after rollback, rollback of an unknown transaction", func(t *testing.T) {
		s := h.session("100")
		wantCaletaOK(t, s.call("bet", map[string]any{"transaction_uuid": "b-1", "amount": 1_000_000}), 9_000_000, s.player)
		rb := map[string]any{"transaction_uuid": "rb-1", "reference_transaction_uuid": "b-1", "user": s.player}
		wantCaletaOK(t, s.call("rollback", rb), 10_000_000, s.player)
		wantCaletaOK(t, s.call("rollback", rb), 10_000_000, s.player) // retried
		if n := len(h.Events(s.wallet, domain.EventBetRolledBack)); n != 1 {
			t.Fatalf("%d rollback events, want 1", n)
		}
		wantCaletaStatus(t, s.call("win", map[string]any{"transaction_uuid": "w-1", "reference_transaction_uuid": "b-1",
			"amount": 1_000_000}), "RS_ERROR_TRANSACTION_ROLLED_BACK")
		wantCaletaStatus(t, s.call("win", map[string]any{"transaction_uuid": "w-2", "reference_transaction_uuid": "never",
			"amount": 1_000_000}), "RS_ERROR_TRANSACTION_DOES_NOT_EXIST")

		// A rollback before its bet moves nothing; the late bet is refused.
		wantCaletaOK(t, s.call("rollback", map[string]any{"transaction_uuid": "rb-2", "reference_transaction_uuid": "b-late"}),
			10_000_000, s.player)
		wantCaletaStatus(t, s.call("bet", map[string]any{"transaction_uuid": "b-late", "amount": 1_000_000}),
			"RS_ERROR_TRANSACTION_ROLLED_BACK")
		if got := h.Balance(s.wallet); got != 10_000 {
			t.Fatalf("wallet %d, want 10000", got)
		}
		// The rollback's user must be the session's player.
		wantCaletaStatus(t, s.call("rollback", map[string]any{"transaction_uuid": "rb-3", "reference_transaction_uuid": "b-1",
			"user": "someone-else"}), "RS_ERROR_INVALID_TOKEN")
	})

	t.Run("not enough money, wrong currency, unknown game, unknown token", func(t *testing.T) {
		s := h.session("10")
		wantCaletaStatus(t, s.call("bet", map[string]any{"transaction_uuid": "b-1", "amount": 1_000_001_000}), "RS_ERROR_NOT_ENOUGH_MONEY")
		wantCaletaStatus(t, s.call("bet", map[string]any{"transaction_uuid": "b-2", "amount": 100_000, "currency": "USD"}), "RS_ERROR_WRONG_CURRENCY")
		wantCaletaStatus(t, s.call("bet", map[string]any{"transaction_uuid": "b-3", "amount": 100_000, "game_code": "no-such-game"}), "RS_ERROR_INVALID_GAME")
		wantCaletaStatus(t, s.call("balance", map[string]any{"game_code": "no-such-game"}), "RS_ERROR_INVALID_GAME")
		unknown := "no-such-session"
		for _, tc := range []struct {
			op     string
			fields map[string]any
		}{
			{"balance", map[string]any{"token": unknown}},
			{"bet", map[string]any{"token": unknown, "transaction_uuid": "x-1", "amount": 100_000}},
			{"win", map[string]any{"token": unknown, "transaction_uuid": "x-2", "reference_transaction_uuid": "x-1", "amount": 100_000}},
			{"rollback", map[string]any{"token": unknown, "transaction_uuid": "x-3", "reference_transaction_uuid": "x-1"}},
		} {
			wantCaletaStatus(t, s.call(tc.op, tc.fields), "RS_ERROR_INVALID_TOKEN")
		}
		if got := h.Balance(s.wallet); got != 1_000 {
			t.Fatalf("wallet %d, want 1000", got)
		}
	})

	t.Run("amounts: exact in the currency's decimals or refused", func(t *testing.T) {
		s := h.session("100")
		wantCaletaOK(t, s.call("bet", map[string]any{"transaction_uuid": "b-1", "amount": 1_000}), 9_999_000, s.player) // 0.01 EUR
		for i, amount := range []any{100, 1, 999, -1_000, 1.5, "1000", 1e20, 9223372036854775807} {
			a := s.call("bet", map[string]any{"transaction_uuid": "bad-" + string(rune('a'+i)), "amount": amount})
			wantCaletaStatus(t, a, "RS_ERROR_WRONG_TYPES")
		}
		// The largest whole-cent amount: converted exactly, then refused
		// by the ledger for want of money.
		wantCaletaStatus(t, s.call("bet", map[string]any{"transaction_uuid": "b-max", "amount": int64(9223372036854775000)}),
			"RS_ERROR_NOT_ENOUGH_MONEY")
		if got := h.Balance(s.wallet); got != 9_999 {
			t.Fatalf("wallet %d, want 9999", got)
		}
	})

	t.Run("bodies: syntax and types", func(t *testing.T) {
		s := h.session("100")
		for _, tc := range []struct {
			name, status string
			raw          []byte
		}{
			{"not JSON", "RS_ERROR_WRONG_SYNTAX", []byte(`{"token":`)},
			{"empty", "RS_ERROR_WRONG_SYNTAX", []byte(``)},
			{"round_closed a string", "RS_ERROR_WRONG_TYPES", s.body("bet", map[string]any{"transaction_uuid": "t-1", "amount": 100_000, "round_closed": "yes"})},
			{"unknown field", "RS_ERROR_WRONG_TYPES", s.body("bet", map[string]any{"transaction_uuid": "t-2", "amount": 100_000, "bonus": 1})},
			{"no transaction_uuid", "RS_ERROR_WRONG_TYPES", s.body("bet", map[string]any{"amount": 100_000})},
			{"no amount", "RS_ERROR_WRONG_TYPES", s.body("bet", map[string]any{"transaction_uuid": "t-3"})},
			{"no request_uuid", "RS_ERROR_WRONG_TYPES", s.body("bet", map[string]any{"transaction_uuid": "t-4", "amount": 100_000, "request_uuid": nil})},
		} {
			a := decodeCaleta(t, h.caletaPost(h.provider, "bet", tc.raw, caletaSign(t, h.key, tc.raw)), tc.raw)
			if a.Status != tc.status {
				t.Errorf("%s: %+v, want %s", tc.name, a, tc.status)
			}
		}
		if n := len(h.Events(s.wallet, domain.EventBetPlaced)); n != 0 {
			t.Fatalf("%d bets booked from refused bodies", n)
		}
	})

	t.Run("free bets are promo money with their ids; a jackpot part is jackpot money", func(t *testing.T) {
		c := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch, gateway.ScopeTransactionsRead,
			gateway.ScopeReportsRead}, gateway.LaunchSettings{})
		user := apitest.UID("player")
		a := h.mustLaunch(c, user, "100", nil)
		s := caletaSession{h: h, token: a.SessionID, player: user, wallet: domain.PlayerWallet(c.ID, user, slEUR)}
		free := map[string]any{"is_free": true, "campaign_uuid": "c-1", "reward_uuid": "r-1"}
		with := func(base, extra map[string]any) map[string]any {
			out := map[string]any{}
			for _, m := range []map[string]any{base, extra} {
				for k, v := range m {
					out[k] = v
				}
			}
			return out
		}
		wantCaletaOK(t, s.call("bet", map[string]any{"transaction_uuid": "b-1", "amount": 100_000}), 9_900_000, s.player)
		// The free bet's amount is its nominal value: the campaign pays it.
		wantCaletaOK(t, s.call("bet", with(free, map[string]any{"transaction_uuid": "fb-1", "round": "CG-2",
			"amount": 100_000})), 9_900_000, s.player)
		wantCaletaOK(t, s.call("win", with(free, map[string]any{"transaction_uuid": "fw-1", "round": "CG-2",
			"reference_transaction_uuid": "fb-1", "amount": 300_000})), 10_200_000, s.player)
		// The ids are part of a retry: the same ones replay, another is a duplicate.
		wantCaletaOK(t, s.call("bet", with(free, map[string]any{"transaction_uuid": "fb-1", "round": "CG-2",
			"amount": 100_000})), 9_900_000, s.player)
		wantCaletaStatus(t, s.call("bet", with(free, map[string]any{"transaction_uuid": "fb-1", "round": "CG-2",
			"amount": 100_000, "reward_uuid": "r-2"})), "RS_ERROR_DUPLICATE_TRANSACTION")
		// A jackpot part larger than the win is refused; nothing is booked.
		wantCaletaStatus(t, s.call("win", map[string]any{"transaction_uuid": "w-x", "reference_transaction_uuid": "b-1",
			"amount": 100_000, "jackpot_win": 200_000}), "RS_ERROR_WRONG_TYPES")
		wantCaletaOK(t, s.call("win", map[string]any{"transaction_uuid": "w-1", "reference_transaction_uuid": "b-1",
			"amount": 10_000_000, "jackpot_win": 9_000_000}), 20_200_000, s.player)
		wantCaletaStatus(t, s.call("win", map[string]any{"transaction_uuid": "w-1", "reference_transaction_uuid": "b-1",
			"amount": 10_000_000, "jackpot_win": 8_000_000}), "RS_ERROR_DUPLICATE_TRANSACTION")
		if n := len(h.Events(s.wallet, domain.EventWinCredited)); n != 2 {
			t.Fatalf("%d wins booked, want 2", n)
		}
		h.Pump()
		type row struct {
			Type       string       `json:"type"`
			External   string       `json:"external_id"`
			Amount     json.Number  `json:"amount"`
			Promo      bool         `json:"promo"`
			Jackpot    *json.Number `json:"jackpot"`
			CampaignID *string      `json:"campaign_id"`
			RewardID   *string      `json:"reward_id"`
		}
		got := map[string]string{}
		for _, r := range apitest.Data[[]row](t, h.Get("/api/v1/transactions?player_id="+user, c.Key)) {
			if r.Type != "bet" && r.Type != "win" {
				continue
			}
			str := func(p *string) string {
				if p == nil {
					return "-"
				}
				return *p
			}
			jp := "-"
			if r.Jackpot != nil {
				jp = string(*r.Jackpot)
			}
			got[r.External] = fmt.Sprintf("%s %s promo=%v jackpot=%s %s/%s", r.Type, r.Amount, r.Promo, jp,
				str(r.CampaignID), str(r.RewardID))
		}
		want := map[string]string{
			"b-1":  "bet -1.00 promo=false jackpot=- -/-",
			"fb-1": "bet 0.00 promo=true jackpot=- c-1/r-1",
			"fw-1": "win 3.00 promo=true jackpot=- c-1/r-1",
			"w-1":  "win 100.00 promo=false jackpot=90.00 -/-",
		}
		if !maps.Equal(got, want) {
			t.Fatalf("history %v, want %v", got, want)
		}
		ggr := func() map[string]any {
			t.Helper()
			rows := apitest.Data[[]map[string]any](t, h.Get("/api/v1/reports/ggr", c.Key))
			if len(rows) != 1 {
				t.Fatalf("GGR rows %v", rows)
			}
			return rows[0]
		}
		// Real money: 1.00 staked, 10.00 of the win; the free bet and its
		// win are promo money; 90.00 is the jackpot's.
		wantCols := func(g map[string]any, want map[string]string) {
			t.Helper()
			for k, v := range want {
				if fmt.Sprint(g[k]) != v {
					t.Errorf("GGR %s = %s, want %s (%v)", k, g[k], v, g)
				}
			}
		}
		wantCols(ggr(), map[string]string{"bets": "1.00", "wins": "10.00", "ggr": "-9.00", "promo_bets": "0.00",
			"promo_wins": "3.00", "promo_ggr": "-3.00", "jackpot_wins": "90.00", "jackpot_win_reversals": "0.00",
			"jackpot_ggr": "-90.00"})
		// The rollback of the jackpot win takes its jackpot part back from
		// the jackpot column, the rest from wins.
		wantCaletaOK(t, s.call("rollback", map[string]any{"transaction_uuid": "rb-1", "reference_transaction_uuid": "w-1"}),
			10_200_000, s.player)
		h.Pump()
		wantCols(ggr(), map[string]string{"wins": "10.00", "win_reversals": "10.00", "ggr": "1.00",
			"jackpot_wins": "90.00", "jackpot_win_reversals": "90.00", "jackpot_ggr": "0.00", "promo_ggr": "-3.00"})
		rec := h.Do(apitest.Request{Method: http.MethodGet, Path: "/api/v1/reports/ggr", Key: c.Key,
			Header: map[string]string{"Accept": "text/csv"}})
		header, _, _ := strings.Cut(rec.Body.String(), "\n")
		if rec.Code != http.StatusOK || header != "currency,bets,bet_refunds,net_bets,wins,win_reversals,net_wins,ggr,"+
			"promo_bets,promo_bet_refunds,promo_wins,promo_win_reversals,promo_ggr,jackpot_wins,jackpot_win_reversals,"+
			"jackpot_ggr,rounds,players" {
			t.Fatalf("CSV %d: %s", rec.Code, rec.Body)
		}
	})

	t.Run("check answers the token", func(t *testing.T) {
		s := h.session("100")
		raw := s.body("check", nil)
		rec := h.caletaPost(h.provider, "check", raw, caletaSign(t, h.key, raw))
		var a struct{ Token, Status string }
		if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil || rec.Code != http.StatusOK || a.Token != s.token || a.Status != "RS_OK" {
			t.Fatalf("check: %d %s", rec.Code, rec.Body)
		}
		raw = s.body("check", map[string]any{"token": "nope"})
		rec = h.caletaPost(h.provider, "check", raw, caletaSign(t, h.key, raw))
		a.Token, a.Status = "", ""
		if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil || a.Status != "RS_ERROR_INVALID_TOKEN" || a.Token != "" {
			t.Fatalf("check of an unknown token: %d %s", rec.Code, rec.Body)
		}
	})

	t.Run("the ledger's chain verifies after the calls", func(t *testing.T) {
		rep, err := h.Audit.Verify(context.Background(), auditstore.VerifyOptions{SkipReadModels: true})
		if err != nil || !rep.OK {
			t.Fatalf("verify: %+v, %v", rep, err)
		}
	})

	t.Run("an expired token takes no bet, but wins and rollbacks", func(t *testing.T) {
		s := h.session("100")
		wantCaletaOK(t, s.call("bet", map[string]any{"transaction_uuid": "b-1", "amount": 1_000_000}), 9_000_000, s.player)
		wantCaletaOK(t, s.call("bet", map[string]any{"transaction_uuid": "b-2", "round": "CG-2", "amount": 1_000_000}), 8_000_000, s.player)
		h.Clock.Advance(slSessionTTL)
		wantCaletaStatus(t, s.call("bet", map[string]any{"transaction_uuid": "b-3", "amount": 1_000_000}), "RS_ERROR_TOKEN_EXPIRED")
		wantCaletaOK(t, s.call("bet", map[string]any{"transaction_uuid": "b-1", "amount": 1_000_000}), 9_000_000, s.player) // a retry
		wantCaletaOK(t, s.call("win", map[string]any{"transaction_uuid": "w-1", "reference_transaction_uuid": "b-1",
			"amount": 3_000_000}), 11_000_000, s.player)
		wantCaletaOK(t, s.call("rollback", map[string]any{"transaction_uuid": "rb-2", "reference_transaction_uuid": "b-2",
			"round": "CG-2"}), 12_000_000, s.player)
	})
}

// TestCaletaWalletSignature: a call is refused RS_ERROR_INVALID_SIGNATURE,
// booking nothing, unless its raw body is signed with the key of the
// caleta provider its path names; the native wallet refuses that provider.
func TestCaletaWalletSignature(t *testing.T) {
	h := newCaletaHarness(t)
	s := h.session("100")
	raw := s.body("bet", map[string]any{"transaction_uuid": "b-1", "amount": 1_000_000})
	good := caletaSign(t, h.key, raw)
	altered := s.body("bet", map[string]any{"transaction_uuid": "b-1", "amount": 9_000_000})
	other := newRSAKey(t)

	native := apitest.UID("native")
	if err := h.Gateway.UpsertProvider(context.Background(), gateway.Provider{ID: native, Name: native,
		Secret: "s", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, provider, sig string
		raw                 []byte
	}{
		{"no signature", h.provider, "", raw},
		{"not base64", h.provider, "%%%not-base64%%%", raw},
		{"base64 of garbage", h.provider, base64.StdEncoding.EncodeToString([]byte("garbage")), raw},
		{"another key", h.provider, caletaSign(t, other, raw), raw},
		{"body altered after signing", h.provider, good, altered},
		{"URL-safe base64", h.provider, base64.URLEncoding.EncodeToString(mustDecode(t, good)), raw},
		{"unknown provider", "no-such-provider", good, raw},
		{"a provider on the pitboss protocol", native, good, raw},
	} {
		a := decodeCaleta(t, h.caletaPost(tc.provider, "bet", tc.raw, tc.sig), tc.raw)
		if a.Status != "RS_ERROR_INVALID_SIGNATURE" || a.Balance != nil {
			t.Errorf("%s: %+v, want RS_ERROR_INVALID_SIGNATURE", tc.name, a)
		}
	}
	if n := len(h.Events(s.wallet, domain.EventBetPlaced)); n != 0 {
		t.Fatalf("%d bets booked without a good signature", n)
	}
	// A signed body replayed to another path is refused: the calls'
	// fields differ (docs/protocols/caleta.md#authentication).
	for _, op := range []string{"win", "rollback", "balance"} {
		if a := decodeCaleta(t, h.caletaPost(h.provider, op, raw, good), raw); a.Status != "RS_ERROR_WRONG_TYPES" {
			t.Errorf("the bet's body at %s: %+v, want RS_ERROR_WRONG_TYPES", op, a)
		}
	}
	// The provider's own protocol's secret does not open the native wallet.
	rec := h.WalletCall(h.provider, h.providerSecret, "bet", map[string]any{"session_id": s.token,
		"transaction_id": "n-1", "amount": "1"})
	apitest.WantError(t, rec, http.StatusUnauthorized, "UNAUTHORIZED")
	// The good signature books it.
	wantCaletaOK(t, decodeCaleta(t, h.caletaPost(h.provider, "bet", raw, good), raw), 9_000_000, s.player)

	// A new key replaces the old one at once in this process: the old
	// key's signatures are refused, the new key's accepted.
	rotated := newRSAKey(t)
	if err := h.Gateway.UpsertProvider(context.Background(), gateway.Provider{ID: h.provider, Name: "Caleta test",
		Secret: h.providerSecret, Enabled: true, WalletPublicKey: publicPEM(t, rotated)}); err != nil {
		t.Fatal(err)
	}
	bal := s.body("balance", nil)
	if a := decodeCaleta(t, h.caletaPost(h.provider, "balance", bal, caletaSign(t, h.key, bal)), bal); a.Status != "RS_ERROR_INVALID_SIGNATURE" {
		t.Fatalf("the old key after rotation: %+v", a)
	}
	wantCaletaOK(t, decodeCaleta(t, h.caletaPost(h.provider, "balance", bal, caletaSign(t, rotated, bal)), bal), 9_000_000, s.player)

	// A disabled provider is refused like an unknown one.
	if err := h.Gateway.UpsertProvider(context.Background(), gateway.Provider{ID: h.provider, Name: "Caleta test",
		Secret: h.providerSecret, Enabled: false}); err != nil {
		t.Fatal(err)
	}
	raw2 := s.body("balance", nil)
	if a := decodeCaleta(t, h.caletaPost(h.provider, "balance", raw2, caletaSign(t, h.key, raw2)), raw2); a.Status != "RS_ERROR_INVALID_SIGNATURE" {
		t.Fatalf("disabled provider: %+v", a)
	}
}

func mustDecode(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestStatusQueryForEveryProtocol: the transaction status query (issue 18
// item 5(a)) answers a provider on another wallet protocol too — here
// Caleta's, whose document has no such call — signed with its secret by
// our scheme v2, about the transactions its own protocol booked; its money
// calls stay refused on our protocol.
func TestStatusQueryForEveryProtocol(t *testing.T) {
	h := newCaletaHarness(t)
	s := h.session("100")
	wantCaletaOK(t, s.call("bet", map[string]any{"transaction_uuid": "st-b1", "amount": 1_000_000}), 9_000_000, s.player)
	status := func(id string) txStatus {
		t.Helper()
		rec := h.WalletCall(h.provider, h.providerSecret, "status", map[string]any{"session_id": s.token, "transaction_id": id})
		if rec.Code != http.StatusOK {
			t.Fatalf("status %s: %d %s", id, rec.Code, rec.Body)
		}
		return apitest.Decode[txStatus](t, rec)
	}
	if got := status("st-b1").Transaction; got.State != "found" || got.Kind != "bet" || got.Amount == nil || got.Amount.String() != "10.00" {
		t.Fatalf("the Caleta bet's status %+v", got)
	}
	if got := status("never").Transaction; got.State != "not_found" {
		t.Fatalf("an unknown id's status %+v", got)
	}
	rec := h.WalletCall(h.provider, h.providerSecret, "bet", map[string]any{"session_id": s.token, "transaction_id": "st-b2", "amount": "1"})
	apitest.WantError(t, rec, http.StatusUnauthorized, wire.CodeUnauthorized)
}
