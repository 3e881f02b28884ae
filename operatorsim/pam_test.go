package operatorsim_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/pitboss/pitboss/operatorsim"
)

// TestPAMChecksEveryCall: the API token, correlation id, provider,
// player and session are checked, each with the document's code.
func TestPAMChecksEveryCall(t *testing.T) {
	t.Parallel()
	sim, base := startSim(t, operatorsim.Config{})
	tok, err := sim.AddPlayer("p1", "EUR", "100.00")
	if err != nil {
		t.Fatal(err)
	}
	other, err := sim.AddPlayer("p2", "EUR", "100.00")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		path       string
		edit       func(*http.Request)
		wantStatus int
		wantCode   string
	}{
		{"ok", "/players/p1/balance", func(*http.Request) {}, 200, ""},
		{"no bearer", "/players/p1/balance", func(r *http.Request) { r.Header.Del("Authorization") }, 401, "PAM_ERR_API_TOKEN"},
		{"wrong bearer", "/players/p1/balance", func(r *http.Request) { r.Header.Set("Authorization", "Bearer nope") },
			401, "PAM_ERR_API_TOKEN"},
		{"no correlation id", "/players/p1/balance", func(r *http.Request) { r.Header.Del("X-Correlation-ID") },
			400, "PAM_ERR_UNDEFINED"},
		{"no provider", "/players/p1/balance", func(r *http.Request) { r.URL.RawQuery = "" }, 400, "PAM_ERR_MISSING_PROVIDER"},
		{"unknown token", "/players/p1/balance", func(r *http.Request) {
			r.Header.Set("X-Player-Token", "0123456789abcdef0123456789abcdef")
		}, 401, "PAM_ERR_SESSION_NOT_FOUND"},
		{"token too short", "/players/p1/balance", func(r *http.Request) { r.Header.Set("X-Player-Token", tok[:31]) },
			401, "PAM_ERR_SESSION_NOT_FOUND"},
		{"another player's token", "/players/p1/balance", func(r *http.Request) { r.Header.Set("X-Player-Token", other) },
			401, "PAM_ERR_SESSION_NOT_FOUND"},
		{"unknown player", "/players/nobody/balance", func(*http.Request) {}, 200, "PAM_ERR_PLAYER_NOT_FOUND"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPAM(t, base, "p1", tok)
			req := p.request(http.MethodGet, tc.path, nil, nil)
			tc.edit(req)
			a := do(t, client, req)
			if a.status != tc.wantStatus || a.code() != tc.wantCode {
				t.Fatalf("got %d %q, want %d %q: %s", a.status, a.code(), tc.wantStatus, tc.wantCode, a.raw)
			}
			if tc.wantCode != "" && a.path("status") != "ERROR" {
				t.Fatalf("status %v, want ERROR", a.path("status"))
			}
		})
	}
}

// TestPAMSessionAndBalance: the session names the token's player and
// currency; the balance has the document's three amounts as numbers.
func TestPAMSessionAndBalance(t *testing.T) {
	t.Parallel()
	sim, base := startSim(t, operatorsim.Config{})
	tok, err := sim.AddPlayer("p1", "EUR", "123.45")
	if err != nil {
		t.Fatal(err)
	}
	p := newPAM(t, base, "p1", tok)
	s := do(t, client, p.request(http.MethodGet, "/players/session", nil, nil))
	for k, want := range map[string]any{"status": "OK", "session.playerId": "p1", "session.token": tok,
		"session.currency": "EUR", "session.country": "MT", "session.language": "EN"} {
		if got := s.path(k); got != want {
			t.Errorf("%s = %v, want %v", k, got, want)
		}
	}
	b := p.balance()
	if b.status != 200 || b.num("balance.cashAmount") != "123.45" || b.num("balance.bonusAmount") != "0.00" ||
		b.num("balance.promoAmount") != "0.00" {
		t.Fatalf("balance %d %s", b.status, b.raw)
	}
}

// pamStep is one addTransaction of a rule's case and what it must answer.
type pamStep struct {
	typ, id, round, cash string
	betRef               string
	bonus, promo         string // "" is 0
	gameOver             bool
	player               string // "" is p1
	currency             string // "" is EUR
	wantCode             string // "" is OK
	wantCash             string // p1's cash after it
}

func (s pamStep) body() tx {
	b := newTx(s.typ, s.id, s.round, s.cash)
	b.ProviderBetRef, b.IsGameOver = s.betRef, s.gameOver
	if s.bonus != "" {
		b.BonusAmount = json.RawMessage(s.bonus)
	}
	if s.promo != "" {
		b.PromoAmount = json.RawMessage(s.promo)
	}
	if s.currency != "" {
		b.Currency = s.currency
	}
	return b
}

// The transaction types, short for the table.
const W, D, C = "WITHDRAW", "DEPOSIT", "CANCEL"

// pamRuleCases are addTransaction's rules, a case each.
var pamRuleCases = []struct {
	name  string
	steps []pamStep
}{
	{"withdraw debits", []pamStep{{typ: W, id: "w1", round: "r1", cash: "10.00", wantCash: "90.00"}}},
	{"withdraw beyond cash", []pamStep{{typ: W, id: "w1", round: "r1", cash: "100.01",
		wantCode: "PAM_ERR_CASH_OVERDRAFT", wantCash: "100.00"}}},
	{"withdraw beyond bonus", []pamStep{{typ: W, id: "w1", round: "r1", cash: "1", bonus: "0.01",
		wantCode: "PAM_ERR_BONUS_OVERDRAFT", wantCash: "100.00"}}},
	{"promo withdraw beyond promo", []pamStep{{typ: "PROMOWITHDRAW", id: "w1", round: "r1", cash: "0", promo: "10.01",
		wantCode: "PAM_ERR_PROMO_OVERDRAFT", wantCash: "100.00"}}},
	{"promo withdraw from promo", []pamStep{{typ: "PROMOWITHDRAW", id: "w1", round: "r1", cash: "0", promo: "10",
		wantCash: "100.00"}}},
	{"withdraw re-sent moves once", []pamStep{
		{typ: W, id: "w1", round: "r1", cash: "10", wantCash: "90.00"},
		{typ: W, id: "w1", round: "r1", cash: "10", wantCash: "90.00"}}},
	{"withdraw id reused with another amount", []pamStep{
		{typ: W, id: "w1", round: "r1", cash: "10", wantCash: "90.00"},
		{typ: W, id: "w1", round: "r1", cash: "11", wantCode: "PAM_ERR_DUPLICATE_TRANS", wantCash: "90.00"}}},
	{"withdraw id reused by another player", []pamStep{
		{typ: W, id: "w1", round: "r1", cash: "10", wantCash: "90.00"},
		{typ: W, id: "w1", round: "r1", cash: "10", player: "p2", wantCode: "PAM_ERR_DUPLICATE_TRANS", wantCash: "90.00"}}},
	{"withdraw into a round over", []pamStep{
		{typ: W, id: "w1", round: "r1", cash: "10", gameOver: true, wantCash: "90.00"},
		{typ: W, id: "w2", round: "r1", cash: "10", wantCode: "PAM_ERR_TRANS_ALREADY_SETTLED", wantCash: "90.00"}}},
	{"negative amount", []pamStep{{typ: W, id: "w1", round: "r1", cash: "-1", wantCode: "PAM_ERR_NEGATIVE_STAKE",
		wantCash: "100.00"}}},
	{"currency not the session's", []pamStep{{typ: W, id: "w1", round: "r1", cash: "1", currency: "USD",
		wantCode: "PAM_ERR_TRANS_CURRENCY", wantCash: "100.00"}}},
	{"deposit credits", []pamStep{
		{typ: W, id: "w1", round: "r1", cash: "10", wantCash: "90.00"},
		{typ: D, id: "d1", round: "r1", cash: "25.50", wantCash: "115.50"}}},
	{"deposit re-sent moves once", []pamStep{
		{typ: W, id: "w1", round: "r1", cash: "10", wantCash: "90.00"},
		{typ: D, id: "d1", round: "r1", cash: "25", gameOver: true, wantCash: "115.00"},
		{typ: D, id: "d1", round: "r1", cash: "25", gameOver: true, wantCash: "115.00"}}},
	{"deposit with no round", []pamStep{{typ: D, id: "d1", round: "r9", cash: "5", wantCode: "PAM_ERR_TRANS_NOT_FOUND",
		wantCash: "100.00"}}},
	{"deposit id on another round", []pamStep{
		{typ: W, id: "w1", round: "r1", cash: "10", wantCash: "90.00"},
		{typ: W, id: "w2", round: "r2", cash: "10", wantCash: "80.00"},
		{typ: D, id: "d1", round: "r1", cash: "5", wantCash: "85.00"},
		{typ: D, id: "d1", round: "r2", cash: "5", wantCode: "PAM_ERR_DUPLICATE_TRANS", wantCash: "85.00"}}},
	{"deposit with a withdraw's id of another round", []pamStep{
		{typ: W, id: "w1", round: "r1", cash: "10", wantCash: "90.00"},
		{typ: W, id: "w2", round: "r2", cash: "10", wantCash: "80.00"},
		{typ: D, id: "w1", round: "r2", cash: "5", wantCode: "PAM_ERR_DUPLICATE_TRANS", wantCash: "80.00"}}},
	{"deposit with its withdraw's id", []pamStep{
		{typ: W, id: "t1", round: "r1", cash: "10", wantCash: "90.00"},
		{typ: D, id: "t1", round: "r1", cash: "30", wantCash: "120.00"}}},
	{"deposit on a round over", []pamStep{
		{typ: W, id: "w1", round: "r1", cash: "10", gameOver: true, wantCash: "90.00"},
		{typ: D, id: "d1", round: "r1", cash: "5", wantCode: "PAM_ERR_TRANS_ALREADY_SETTLED", wantCash: "90.00"}}},
	{"second deposit after game over", []pamStep{
		{typ: W, id: "w1", round: "r1", cash: "10", wantCash: "90.00"},
		{typ: D, id: "d1", round: "r1", cash: "5", gameOver: true, wantCash: "95.00"},
		{typ: D, id: "d2", round: "r1", cash: "5", wantCode: "PAM_ERR_TRANS_ALREADY_SETTLED", wantCash: "95.00"}}},
	{"deposit toward a cancelled withdraw", []pamStep{
		{typ: W, id: "w1", round: "r1", cash: "10", wantCash: "90.00"},
		{typ: C, id: "w1", betRef: "w1", round: "r1", cash: "10", wantCash: "100.00"},
		{typ: D, id: "d1", round: "r1", cash: "5", wantCode: "PAM_ERR_TRANS_ALREADY_CANCELLED", wantCash: "100.00"}}},
	{"promo deposit needs no withdraw", []pamStep{{typ: "PROMODEPOSIT", id: "p1", round: "r7", cash: "5",
		wantCash: "105.00"}}},
	{"cancel gives the withdraw back", []pamStep{
		{typ: W, id: "w1", round: "r1", cash: "10", wantCash: "90.00"},
		{typ: C, id: "w1", betRef: "w1", round: "r1", cash: "10", wantCash: "100.00"}}},
	{"cancel re-sent is the same cancel", []pamStep{
		{typ: W, id: "w1", round: "r1", cash: "10", wantCash: "90.00"},
		{typ: C, id: "w1", betRef: "w1", round: "r1", cash: "10", wantCash: "100.00"},
		{typ: C, id: "w1", betRef: "w1", round: "r1", cash: "10", wantCash: "100.00"}}},
	{"second, different cancel", []pamStep{
		{typ: W, id: "w1", round: "r1", cash: "10", wantCash: "90.00"},
		{typ: C, id: "w1", betRef: "w1", round: "r1", cash: "10", wantCash: "100.00"},
		{typ: C, id: "w1", betRef: "w1", round: "r1", cash: "9", wantCode: "PAM_ERR_TRANS_ALREADY_CANCELLED",
			wantCash: "100.00"}}},
	{"promo cancel of a promo withdraw", []pamStep{
		{typ: "PROMOWITHDRAW", id: "w1", round: "r1", cash: "0", promo: "4", wantCash: "100.00"},
		{typ: "PROMOCANCEL", id: "w1", betRef: "w1", round: "r1", cash: "0", promo: "4", wantCash: "100.00"}}},
	{"cancel of an unknown withdraw", []pamStep{{typ: C, id: "w9", betRef: "w9", round: "r1", cash: "10",
		wantCode: "PAM_ERR_CANCEL_NOT_FOUND", wantCash: "100.00"}}},
	{"cancel of another player's withdraw", []pamStep{
		{typ: W, id: "w1", round: "r1", cash: "10", player: "p2", wantCash: "100.00"},
		{typ: C, id: "w1", betRef: "w1", round: "r1", cash: "10", wantCode: "PAM_ERR_CANCEL_NOT_FOUND", wantCash: "100.00"}}},
	{"cancel after the round's deposit", []pamStep{
		{typ: W, id: "w1", round: "r1", cash: "10", wantCash: "90.00"},
		{typ: D, id: "d1", round: "r1", cash: "20", wantCash: "110.00"},
		{typ: C, id: "w1", betRef: "w1", round: "r1", cash: "10", wantCode: "PAM_ERR_TRANS_ALREADY_SETTLED",
			wantCash: "110.00"}}},
	{"cancel of a deposit", []pamStep{
		{typ: "PROMODEPOSIT", id: "p1", cash: "5", wantCash: "105.00"},
		{typ: C, id: "p1", betRef: "p1", cash: "5", wantCode: "PAM_ERR_CANCEL_NON_WITHDRAW", wantCash: "105.00"}}},
	{"cancel of a lost round's withdraw", []pamStep{
		{typ: W, id: "w1", round: "r1", cash: "10", gameOver: true, wantCash: "90.00"},
		{typ: C, id: "w1", betRef: "w1", round: "r1", cash: "10", wantCash: "100.00"}}},
}

// TestPAMTransactionRules: every rule of addTransaction, each case a
// fresh wallet (p1 with 100.00 EUR and 10.00 promo, p2 with 100.00 EUR).
func TestPAMTransactionRules(t *testing.T) {
	t.Parallel()
	for _, tc := range pamRuleCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sim, base := startSim(t, operatorsim.Config{})
			tokens := map[string]string{}
			for _, id := range []string{"p1", "p2"} {
				tok, err := sim.Fund(id, "EUR", "100.00", "", map[string]string{"p1": "10"}[id])
				if err != nil {
					t.Fatal(err)
				}
				tokens[id] = tok
			}
			txIDs := map[string]string{}
			for i, s := range tc.steps {
				player := s.player
				if player == "" {
					player = "p1"
				}
				a := newPAM(t, base, player, tokens[player]).add(s.body())
				if a.status != 200 || a.code() != s.wantCode {
					t.Fatalf("step %d (%s %s): %d %q, want %q: %s", i, s.typ, s.id, a.status, a.code(), s.wantCode, a.raw)
				}
				if got := cash(t, sim, "p1", "EUR"); got != s.wantCash {
					t.Fatalf("step %d (%s %s): p1 cash %s, want %s", i, s.typ, s.id, got, s.wantCash)
				}
				if player == "p1" && a.num("transactionResult.balance.cashAmount") != s.wantCash {
					t.Fatalf("step %d: answered balance %s, want %s", i, a.num("transactionResult.balance.cashAmount"), s.wantCash)
				}
				if s.wantCode != "" {
					continue
				}
				id, _ := a.path("transactionResult.transactionId").(string)
				key := s.typ + "/" + s.id
				if prev, seen := txIDs[key]; seen && prev != id {
					t.Fatalf("step %d: re-send answered transactionId %s, first %s", i, id, prev)
				}
				txIDs[key] = id
			}
		})
	}
}

// TestPAMLookups: GET transactions returns what was stored, by
// providerTransactionId or providerBetRef, so a client can resolve an
// unknown outcome; GET gamerounds the round with its end.
func TestPAMLookups(t *testing.T) {
	t.Parallel()
	sim, base := startSim(t, operatorsim.Config{})
	tok, err := sim.AddPlayer("p1", "EUR", "100.00")
	if err != nil {
		t.Fatal(err)
	}
	p := newPAM(t, base, "p1", tok)
	for _, b := range []tx{newTx("WITHDRAW", "w1", "r1", "10.00"), newTx("WITHDRAW", "w2", "r2", "1.00")} {
		if a := p.add(b); a.code() != "" {
			t.Fatal(a.raw)
		}
	}
	c := newTx("CANCEL", "w1", "r1", "10.00")
	c.ProviderBetRef = "w1"
	if a := p.add(c); a.code() != "" {
		t.Fatal(a.raw)
	}
	get := func(q url.Values) answer {
		return do(t, client, p.request(http.MethodGet, "/players/p1/transactions", q, nil))
	}
	byID := get(url.Values{"providerTransactionId": {"w1"}})
	list, _ := byID.path("transactions").([]any)
	if byID.status != 200 || len(list) != 2 {
		t.Fatalf("by id: %d %s", byID.status, byID.raw)
	}
	first, _ := list[0].(map[string]any)
	if first["transactionType"] != "WITHDRAW" || first["cashAmount"].(json.Number).String() != "10.00" ||
		first["providerRoundId"] != "r1" {
		t.Fatalf("first transaction %v", first)
	}
	byRef := get(url.Values{"providerBetRef": {"w1"}, "providerTransactionId": {"w2"}})
	if list, _ := byRef.path("transactions").([]any); len(list) != 1 || list[0].(map[string]any)["transactionType"] != "CANCEL" {
		t.Fatalf("by bet ref (prioritized): %s", byRef.raw)
	}
	if none := get(url.Values{"providerTransactionId": {"nope"}}); none.status != 200 || none.raw != "{\"status\":\"OK\",\"transactions\":[]}\n" {
		t.Fatalf("unknown id: %s", none.raw)
	}
	if bad := get(nil); bad.status != 400 || bad.code() != "PAM_ERR_UNDEFINED" {
		t.Fatalf("no lookup parameter: %d %s", bad.status, bad.raw)
	}
	round := func(id string) answer {
		return do(t, client, p.request(http.MethodGet, "/players/p1/gamerounds/"+id, nil, nil))
	}
	if r := round("r2"); r.path("gameround.providerRoundId") != "r2" || r.path("gameround.providerGameId") != "slot" ||
		r.path("gameround.startTime") != "2026-05-01T12:00:00Z" || r.path("gameround.endTime") != nil {
		t.Fatalf("round r2: %s", r.raw)
	}
	over := newTx("WITHDRAW", "w3", "r3", "1.00")
	over.IsGameOver, over.TransactionDateTime = true, "2026-05-01T12:00:05Z"
	if a := p.add(over); a.code() != "" {
		t.Fatal(a.raw)
	}
	if r := round("r3"); r.path("gameround.endTime") != "2026-05-01T12:00:05Z" {
		t.Fatalf("round r3 over: %s", r.raw)
	}
	if r := round("r404"); r.status != 200 || r.code() != "PAM_ERR_ROUND_NOT_FOUND" {
		t.Fatalf("unknown round: %s", r.raw)
	}
}

// TestPAMRefusesBadBodies: a body the schema refuses is 400, nothing
// moves.
func TestPAMRefusesBadBodies(t *testing.T) {
	t.Parallel()
	sim, base := startSim(t, operatorsim.Config{})
	tok, err := sim.AddPlayer("p1", "EUR", "100.00")
	if err != nil {
		t.Fatal(err)
	}
	long := ""
	for range 41 {
		long += "x"
	}
	for i, tc := range []struct {
		name string
		edit func(*tx) any
	}{
		{"not JSON", func(*tx) any { return rawBody(`{"currency":`) }},
		{"amount as a string", func(b *tx) any { b.CashAmount = json.RawMessage(`"10.00"`); return b }},
		{"amount missing", func(b *tx) any { b.BonusAmount = nil; return b }},
		{"more decimals than EUR has", func(b *tx) any { b.CashAmount = json.RawMessage(`10.001`); return b }},
		{"unknown type", func(b *tx) any { b.TransactionType = "BET"; return b }},
		{"no date", func(b *tx) any { b.TransactionDateTime = "yesterday"; return b }},
		{"no id", func(b *tx) any { b.ProviderTxID = ""; return b }},
		{"id over 40", func(b *tx) any { b.ProviderTxID = long; return b }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newTx("WITHDRAW", "bad-"+strconv.Itoa(i), "r1", "10.00")
			a := newPAM(t, base, "p1", tok).add(tc.edit(&b))
			if a.status != 400 || a.code() != "PAM_ERR_UNDEFINED" {
				t.Fatalf("%d %s", a.status, a.raw)
			}
		})
	}
	if got := cash(t, sim, "p1", "EUR"); got != "100.00" || len(sim.Transactions()) != 0 {
		t.Fatalf("cash %s, %d transactions after refusals", got, len(sim.Transactions()))
	}
}
