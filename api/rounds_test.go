package api_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/gateway/rsasig"
)

// caletaRoundAPI is Caleta's Games API round call on loopback: it checks
// each POST /api/game/round's X-Auth-Signature with our launch key's
// public half and its operator_id, as Caleta does, and answers the
// document's shapes — the address of its back office's page of the round,
// or 405 {"code": "100", "message": "Invalid Round"} for a round it does
// not know.
type caletaRoundAPI struct {
	*httptest.Server
	calls chan map[string]any
}

func newCaletaRoundAPI(t *testing.T, verify *rsasig.Key, operatorID string, unknown ...string) *caletaRoundAPI {
	t.Helper()
	g := &caletaRoundAPI{calls: make(chan map[string]any, 16)}
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		answer := func(status int, v any) {
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(v)
		}
		if r.URL.Path != "/api/game/round" || r.Method != http.MethodPost {
			answer(http.StatusNotFound, map[string]string{"error": "no such path"})
			return
		}
		if err := gateway.VerifyRSASHA256(verify, body, r.Header.Get("X-Auth-Signature")); err != nil {
			answer(http.StatusForbidden, map[string]string{"error": "invalid signature"})
			return
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil || m["operator_id"] != operatorID {
			answer(http.StatusNotFound, map[string]string{"error": "The operator_id does not correspond to any existing Operator."})
			return
		}
		g.calls <- m
		round, _ := m["round"].(string)
		user, _ := m["user"].(string)
		for _, u := range unknown {
			if round == u {
				answer(http.StatusMethodNotAllowed, map[string]string{"code": "100", "message": "Invalid Round"})
				return
			}
		}
		answer(http.StatusOK, map[string]string{"url": "https://backoffice.caleta.example/round_details/" + round + "/" + user})
	}))
	t.Cleanup(g.Close)
	return g
}

// rdRound is GET /api/v1/rounds/{round_id}'s data as a client reads it.
type rdRound struct {
	RoundID      string  `json:"round_id"`
	Provider     string  `json:"provider"`
	Game         *string `json:"game"`
	PlayerID     string  `json:"player_id"`
	Currency     string  `json:"currency"`
	Status       string  `json:"status"`
	GameResultID string  `json:"game_result_id"`
	StartedAt    string  `json:"started_at"`
	Position     int64   `json:"position"`
	Totals       struct {
		Bets      json.Number `json:"bets"`
		Wins      json.Number `json:"wins"`
		Refunds   json.Number `json:"refunds"`
		Reversals json.Number `json:"reversals"`
		Net       json.Number `json:"net"`
	} `json:"totals"`
	Transactions []struct {
		Type         string      `json:"type"`
		Amount       json.Number `json:"amount"`
		Status       string      `json:"status"`
		ExternalID   *string     `json:"external_id"`
		ReferenceID  *string     `json:"reference_id"`
		Promo        bool        `json:"promo"`
		CampaignID   *string     `json:"campaign_id"`
		RewardID     *string     `json:"reward_id"`
		RoundID      *string     `json:"round_id"`
		Position     int64       `json:"position"`
		CreatedAt    string      `json:"created_at"`
		BalanceAfter json.Number `json:"balance_after"`
	} `json:"transactions"`
	ProviderRoundURL    *string `json:"provider_round_url"`
	ProviderRoundDetail string  `json:"provider_round_detail"`
}

// rdFixture is a client's history with rounds at a Caleta provider (whose
// Games API is on loopback), at a Caleta provider whose endpoint is down,
// and at the demo provider, one round id at two of them; and a rival
// client with a round of its own.
type rdFixture struct {
	h             *apitest.Harness
	client, rival apitest.Client
	walletOnly    apitest.Client
	games         *caletaRoundAPI
}

func newRDFixture(t *testing.T) *rdFixture {
	t.Helper()
	ctx := context.Background()
	h := apitest.New(t, apitest.Options{})
	key := newRSAKey(t)
	pub, err := rsasig.Prepare(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	creds := gateway.LaunchCredentials{OperatorID: "pitboss-op", Country: "BR",
		Secret: string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))}
	f := &rdFixture{h: h, games: newCaletaRoundAPI(t, pub, "pitboss-op", "R-gone")}
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close() // connection refused
	h.AddProvider("caleta", "Caleta Gaming", gateway.ProviderKindCaleta, f.games.URL)
	h.AddProvider("caleta-down", "Caleta Gaming (down)", gateway.ProviderKindCaleta, down.URL)
	h.AddProvider("demo", "Demo", gateway.ProviderKindDemo)
	for _, id := range []string{"caleta", "caleta-down"} {
		if err := h.Gateway.SetProviderLaunchCredentials(ctx, id, creds); err != nil {
			t.Fatal(err)
		}
	}
	f.client = h.NewClient(gateway.ScopeTransactionsRead, gateway.ScopeTransactionsWrite)
	f.rival = h.NewClient(gateway.ScopeTransactionsRead, gateway.ScopeTransactionsWrite)
	f.walletOnly = apitest.Client{ID: f.client.ID}
	f.walletOnly.Key, _ = h.IssueKey(f.client.ID, gateway.ScopeWalletRead)
	h.Deposit(f.client, "p1", "100", "EUR")
	h.Deposit(f.client, "p2", "100", "EUR")
	h.Deposit(f.rival, "p1", "100", "EUR")

	eur := domain.MustCurrency("EUR")
	game := func(c apitest.Client, player, provider, round, tx string) domain.GameTx {
		return domain.GameTx{Client: c.ID, Player: player, Provider: provider, Game: "torch", Round: round,
			ExternalTxID: tx, Currency: eur}
	}
	money := func(s string) domain.Money {
		m, err := domain.ParseMoney(s, eur)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	cmd := h.Commands
	// R-1 at caleta: a bet, a bet refunded, a free bet, a win closing it.
	must(cmd.PlaceBet(ctx, game(f.client, "p1", "caleta", "R-1", "b1"), money("10")))
	must(cmd.PlaceBet(ctx, game(f.client, "p1", "caleta", "R-1", "b2"), money("2.50")))
	must(cmd.Rollback(ctx, game(f.client, "p1", "caleta", "R-1", "rb1"), "b2"))
	free := game(f.client, "p1", "caleta", "R-1", "fb1")
	free.Promo, free.Campaign, free.Reward = true, "camp-1", "rew-1"
	must(cmd.PlaceBet(ctx, free, money("0")))
	win := game(f.client, "p1", "caleta", "R-1", "w1")
	win.RoundClosed = true
	must(cmd.CreditWin(ctx, win, money("25"), "b1"))
	// R-1 at demo too (another player), D-7 at demo only, R-gone unknown
	// to Caleta, R-9 at the Caleta that is down, and the rival's X-9.
	must(cmd.PlaceBet(ctx, game(f.client, "p2", "demo", "R-1", "d1"), money("1")))
	must(cmd.PlaceBet(ctx, game(f.client, "p2", "demo", "D-7", "d2"), money("1")))
	must(cmd.PlaceBet(ctx, game(f.client, "p1", "caleta", "R-gone", "g1"), money("1")))
	must(cmd.PlaceBet(ctx, game(f.client, "p1", "caleta-down", "R-9", "x1"), money("1")))
	must(cmd.PlaceBet(ctx, game(f.rival, "p1", "caleta", "X-9", "b1"), money("3")))
	h.Pump()
	return f
}

func (f *rdFixture) get(path, key string) *httptest.ResponseRecorder {
	return f.h.Call(http.MethodGet, path, key, "")
}

// TestRoundDetail: GET /api/v1/rounds/{round_id} answers a round of the
// client's history — its bets, wins and rollbacks as the history lists
// them, totals and status — with the provider's own page of it where its
// protocol has one (Caleta's POST /api/game/round, signed with our launch
// key, answered by a real server on loopback); the link's trouble never
// fails the answer.
func TestRoundDetail(t *testing.T) {
	t.Parallel()
	f := newRDFixture(t)
	full := f.client.Key

	t.Run("with the provider's link", func(t *testing.T) {
		rec := f.get("/api/v1/rounds/R-1?provider=caleta", full)
		r := apitest.Data[rdRound](t, rec)
		if rec.Header().Get(api.HeaderLedgerPosition) == "" {
			t.Error("no X-Ledger-Position")
		}
		if r.RoundID != "R-1" || r.Provider != "caleta" || r.Game == nil || *r.Game != "torch" || r.PlayerID != "p1" ||
			r.Currency != "EUR" || r.Status != "settled" || r.GameResultID == "" || r.StartedAt == "" || r.Position == 0 {
			t.Fatalf("round %+v", r)
		}
		if tot := r.Totals; tot.Bets != "12.50" || tot.Wins != "25.00" || tot.Refunds != "2.50" || tot.Reversals != "0.00" ||
			tot.Net != "15.00" {
			t.Fatalf("totals %+v", tot)
		}
		var got []string
		for _, x := range r.Transactions {
			ref := ""
			if x.ReferenceID != nil {
				ref = ">" + *x.ReferenceID
			}
			got = append(got, x.Type+":"+*x.ExternalID+ref+":"+x.Amount.String()+":"+x.Status)
			if x.RoundID == nil || *x.RoundID != "R-1" || x.Position == 0 || x.CreatedAt == "" {
				t.Errorf("transaction %+v", x)
			}
		}
		want := []string{"bet:b1:-10.00:settled", "bet:b2:-2.50:rolled_back", "rollback:rb1>b2:2.50:settled",
			"bet:fb1:0.00:settled", "win:w1>b1:25.00:settled"}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("transactions %v\nwant %v", got, want)
		}
		if fb := r.Transactions[3]; !fb.Promo || fb.CampaignID == nil || *fb.CampaignID != "camp-1" || fb.RewardID == nil ||
			*fb.RewardID != "rew-1" {
			t.Fatalf("free bet %+v", fb)
		}
		if r.ProviderRoundDetail != "available" || r.ProviderRoundURL == nil ||
			*r.ProviderRoundURL != "https://backoffice.caleta.example/round_details/R-1/p1" {
			t.Fatalf("link %v %q", r.ProviderRoundURL, r.ProviderRoundDetail)
		}
		// What Caleta was asked: the document's game_round_body, signed
		// (the server above verified it).
		call := <-f.games.calls
		if want := map[string]any{"operator_id": "pitboss-op", "transaction_uuid": "b1", "user": "p1", "round": "R-1"}; !reflect.DeepEqual(call, want) {
			t.Fatalf("Games API call %v\nwant %v", call, want)
		}
		// The game result it names is the transaction detail's.
		d := apitest.Data[struct {
			Type    string `json:"type"`
			RoundID string `json:"round_id"`
		}](t, f.get("/api/v1/transactions/"+r.GameResultID, full))
		if d.Type != "game_result" || d.RoundID != "R-1" {
			t.Fatalf("game result %+v", d)
		}
	})

	// Every 200 without a link: the history is the answer whatever the
	// provider does.
	for _, tc := range []struct {
		name, path, detail, provider string
	}{
		{"a protocol without a round-detail call", "/api/v1/rounds/D-7", "unsupported", "demo"},
		{"the same id named at the other provider", "/api/v1/rounds/R-1?provider=demo", "unsupported", "demo"},
		{"a round the provider refuses", "/api/v1/rounds/R-gone", "refused", "caleta"},
		{"a provider that cannot be reached", "/api/v1/rounds/R-9", "unavailable", "caleta-down"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := apitest.Data[rdRound](t, f.get(tc.path, full))
			if r.ProviderRoundDetail != tc.detail || r.ProviderRoundURL != nil || r.Provider != tc.provider ||
				len(r.Transactions) != 1 || r.Status != "pending" || r.Totals.Bets != "1.00" || r.Totals.Net != "-1.00" {
				t.Fatalf("round %+v, want provider_round_detail %s and no link", r, tc.detail)
			}
			// The raw answer has the link as null, not left out.
			var raw struct {
				Data map[string]json.RawMessage `json:"data"`
			}
			if err := json.Unmarshal(f.get(tc.path, full).Body.Bytes(), &raw); err != nil ||
				string(raw.Data["provider_round_url"]) != "null" {
				t.Fatalf("provider_round_url %s (%v)", raw.Data["provider_round_url"], err)
			}
		})
	}

	t.Run("errors", func(t *testing.T) {
		for _, tc := range []struct {
			name, path, key string
			status          int
			code, field     string
		}{
			{"a round id with a character no id has", "/api/v1/rounds/R!1", full, 400, wire.CodeInvalidRequest, "round_id"},
			{"a round id too long", "/api/v1/rounds/" + string(make129()), full, 400, wire.CodeInvalidRequest, "round_id"},
			{"a provider that is no id", "/api/v1/rounds/R-1?provider=a%20b", full, 400, wire.CodeInvalidRequest, "provider"},
			{"a bad min_position", "/api/v1/rounds/R-1?provider=caleta&min_position=-1", full, 400, wire.CodeInvalidRequest,
				"min_position"},
			{"no key", "/api/v1/rounds/R-1?provider=caleta", "", 401, wire.CodeUnauthorized, ""},
			{"a wrong key", "/api/v1/rounds/R-1?provider=caleta", "pb_test_nope", 401, wire.CodeUnauthorized, ""},
			{"no transactions:read", "/api/v1/rounds/R-1?provider=caleta", f.walletOnly.Key, 403, wire.CodeForbidden, ""},
			{"an unknown round", "/api/v1/rounds/R-404", full, 404, wire.CodeNotFound, "round_id"},
			{"another client's round", "/api/v1/rounds/X-9", full, 404, wire.CodeNotFound, "round_id"},
			{"another client's round, its provider named", "/api/v1/rounds/X-9?provider=caleta", full, 404, wire.CodeNotFound,
				"round_id"},
			{"a round of another provider than named", "/api/v1/rounds/D-7?provider=caleta", full, 404, wire.CodeNotFound,
				"round_id"},
			{"an unknown provider", "/api/v1/rounds/R-1?provider=nobody", full, 404, wire.CodeNotFound, "round_id"},
			{"an id of rounds at two providers", "/api/v1/rounds/R-1", full, 409, wire.CodeRoundAmbiguous, "provider"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e := apitest.WantError(t, f.get(tc.path, tc.key), tc.status, tc.code)
				if tc.field != "" && e.Error.Details["field"] != tc.field {
					t.Fatalf("details %v, want field %s", e.Error.Details, tc.field)
				}
				if tc.status == http.StatusConflict {
					if got := e.Error.Details["providers"]; !reflect.DeepEqual(got, []any{"caleta", "demo"}) {
						t.Fatalf("providers %v, want caleta and demo", got)
					}
				}
			})
		}
		// The rival reads its own X-9; our client's R-1 is not its.
		if r := apitest.Data[rdRound](t, f.get("/api/v1/rounds/X-9", f.rival.Key)); r.PlayerID != "p1" || r.Totals.Bets != "3.00" {
			t.Fatalf("rival's round %+v", r)
		}
		apitest.WantError(t, f.get("/api/v1/rounds/R-1?provider=caleta", f.rival.Key), http.StatusNotFound, wire.CodeNotFound)
	})
}

// make129 is a round id one character longer than an id may be.
func make129() []byte {
	b := make([]byte, domain.MaxIDLength+1)
	for i := range b {
		b[i] = 'r'
	}
	return b
}
