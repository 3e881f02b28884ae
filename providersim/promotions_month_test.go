package providersim_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres/auditstore"
	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/providersim"
)

// TestCampaignMonthEnd is a month of one free-bet campaign as finance sees
// it, over Caleta's Freebets API (the provider simulator's side of it) and
// Caleta's wallet: a campaign of 5 free bets of 0.20 EUR is created at the
// provider, rewards are granted to 100 players (one grant retried, one the
// provider refuses), the provider spends some of them through the wallet,
// the operator cancels one, the rest expire. The campaign report and the
// GGR report's promo columns then agree to the cent, and both recompute
// from the ledger's events alone; the simulator saw no deviation.
func TestCampaignMonthEnd(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	clock := apitest.StoppedAt(start)
	h := apitest.New(t, apitest.Options{Clock: clock, LedgerClock: clock})
	ctx := context.Background()

	ourKey, _ := rsaKey(t)            // our launch key: signs the Games and Freebets API calls
	walletKey, walletPub := rsaKey(t) // the provider's: signs its wallet calls
	ps, err := providersim.StartPromoServer(providersim.PromoConfig{Protocol: gateway.WalletProtocolCaleta,
		OperatorKey: &ourKey.PublicKey, OperatorID: "pitboss-op"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ps.Close() })

	provider, game := apitest.UID("caleta"), apitest.UID("slot")
	p := gateway.Provider{ID: provider, Name: "Caleta", Secret: "secret-" + apitest.UID("s"), Enabled: true,
		WalletProtocol: gateway.WalletProtocolCaleta, WalletPublicKey: walletPub}
	if err := h.Gateway.UpsertProvider(ctx, p); err != nil {
		t.Fatal(err)
	}
	route(t, h, provider, gateway.ProviderKindCaleta, ps.URL)
	der, err := x509.MarshalPKCS8PrivateKey(ourKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Gateway.SetProviderLaunchCredentials(ctx, provider, gateway.LaunchCredentials{OperatorID: "pitboss-op", Country: "MT",
		Secret: string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))}); err != nil {
		t.Fatal(err)
	}
	h.AddGame(game, provider, "Caleta slot", "slots", true)
	c := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch, gateway.ScopePromotionsRead,
		gateway.ScopePromotionsWrite, gateway.ScopeReportsRead}, gateway.LaunchSettings{DefaultCurrency: "EUR"})

	call := func(method, path string, body any) map[string]any {
		t.Helper()
		return data(t, h, c, method, path, body)
	}

	// The campaign, made at Caleta first.
	camp := call(http.MethodPost, "/api/v1/campaigns", map[string]any{"campaign_id": "march-spins",
		"name": "March spins", "provider": provider, "games": []string{game}, "currency": "EUR", "bet_value": "0.20",
		"free_bets": 5, "valid_until": start.AddDate(0, 0, 10).Format(time.RFC3339)})
	if camp["at_provider"] != true || ps.Calls("/api/freebet/campaigns/create") != 1 {
		t.Fatalf("campaign %v, %d creates at the provider", camp, ps.Calls("/api/freebet/campaigns/create"))
	}

	// 100 rewards, then one retried: nothing granted twice.
	player := func(i int) string { return fmt.Sprintf("mp-%03d", i) }
	reward := func(i int) string { return fmt.Sprintf("march-%03d", i) }
	var grants []map[string]any
	for i := range 100 {
		grants = append(grants, map[string]any{"reward_id": reward(i), "player_id": player(i)})
	}
	got := call(http.MethodPost, "/api/v1/campaigns/march-spins/rewards", map[string]any{"rewards": grants})
	if got["granted"] != 100.0 {
		t.Fatalf("granted %v", got["granted"])
	}
	got = call(http.MethodPost, "/api/v1/campaigns/march-spins/rewards", map[string]any{"rewards": grants[7:8]})
	if got["replayed"] != 1.0 || got["granted"] != 0.0 {
		t.Fatalf("retry %v", got)
	}
	if n := ps.Calls("/api/freebet/rewards/create"); n != 100 {
		t.Fatalf("%d rewards created at the provider, want 100", n)
	}
	// A grant the provider refuses leaves nothing booked.
	ps.RefuseGrants(true)
	got = call(http.MethodPost, "/api/v1/campaigns/march-spins/rewards", map[string]any{"rewards": []map[string]any{
		{"reward_id": "march-refused", "player_id": "mp-refused"}}})
	ps.RefuseGrants(false)
	if got["refused"] != 1.0 {
		t.Fatalf("refused grant %v", got)
	}
	if rec := h.Call(http.MethodPost, "/api/v1/campaigns/march-spins/rewards/march-refused/cancel", c.Key, nil); rec.Code != http.StatusNotFound {
		t.Fatalf("the refused reward exists: %d %s", rec.Code, rec.Body)
	}

	// The provider spends: players 0-29 all five free bets, 30-39 two.
	spend := func(i, bets int, wins []string) {
		t.Helper()
		session := launch(t, h, c, game, player(i))
		rep, err := ps.SpendFreeBets(ctx, providersim.Spend{Config: providersim.Config{Protocol: gateway.WalletProtocolCaleta,
			BaseURL: h.URL, Provider: provider, Game: game, Player: player(i), Currency: "EUR", PrivateKey: walletKey,
			Secret: p.Secret}, Session: session, Reward: reward(i), Bets: bets, Wins: wins})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Deviations) != 0 {
			t.Fatalf("player %d: %d deviations: %v", i, len(rep.Deviations), rep.Deviations)
		}
	}
	for i := range 30 {
		spend(i, 5, []string{"0.40", "0", "1.00", "0.20", "0"}) // 1.60 each
	}
	for i := 30; i < 40; i++ {
		spend(i, 2, []string{"2.50", "0.10"}) // 2.60 each
	}
	const wantWins = "74.00" // 30 x 1.60 + 10 x 2.60

	// The operator cancels an unused reward; a used one stays.
	if r := call(http.MethodPost, "/api/v1/campaigns/march-spins/rewards/"+reward(99)+"/cancel", map[string]any{"reason": "closed account"}); r["state"] != "cancelled" {
		t.Fatalf("cancel %v", r)
	}
	if rw, _ := ps.Reward(reward(99)); !rw.Canceled {
		t.Fatal("the provider still holds the cancelled reward")
	}
	if rec := h.Call(http.MethodPost, "/api/v1/campaigns/march-spins/rewards/"+reward(3)+"/cancel", c.Key, nil); rec.Code != http.StatusConflict {
		t.Fatalf("cancel of a used reward: %d %s", rec.Code, rec.Body)
	}

	// Month-end: the rest expire.
	clock.Advance(11 * 24 * time.Hour)
	if n, err := h.Promotions.ExpireDue(ctx, 1000); err != nil || n != 69 {
		t.Fatalf("expired %d (%v), want the 69 rewards with free bets left", n, err)
	}
	if dev := ps.Deviations(); len(dev) != 0 {
		t.Fatalf("the provider saw %d deviations: %v", len(dev), dev)
	}

	// The reports, over March.
	h.Pump()
	type reportLine struct {
		Rewards, Granted, Used, Cancelled, Expired, Left int64
		PromoBets, PromoWins, PromoWinReversals, Cost    json.Number
	}
	rec := h.Get("/api/v1/reports/campaigns?from=2026-03-01&to=2026-03-31", c.Key)
	var rep struct {
		Data struct {
			Campaigns []struct {
				Rewards   int64       `json:"rewards"`
				Granted   int64       `json:"free_bets_granted"`
				Used      int64       `json:"free_bets_used"`
				Cancelled int64       `json:"free_bets_cancelled"`
				Expired   int64       `json:"free_bets_expired"`
				Left      int64       `json:"free_bets_left"`
				PromoBets json.Number `json:"promo_bets"`
				PromoWins json.Number `json:"promo_wins"`
				Reversals json.Number `json:"promo_win_reversals"`
				Cost      json.Number `json:"cost"`
			} `json:"campaigns"`
		} `json:"data"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &rep); err != nil || len(rep.Data.Campaigns) != 1 {
		t.Fatalf("report %d %s (%v)", rec.Code, rec.Body, err)
	}
	line := rep.Data.Campaigns[0]
	report := reportLine{Rewards: line.Rewards, Granted: line.Granted, Used: line.Used, Cancelled: line.Cancelled,
		Expired: line.Expired, Left: line.Left, PromoBets: line.PromoBets, PromoWins: line.PromoWins,
		PromoWinReversals: line.Reversals, Cost: line.Cost}
	want := reportLine{Rewards: 100, Granted: 500, Used: 170, Cancelled: 5, Expired: 325, Left: 0,
		PromoBets: "0.00", PromoWins: wantWins, PromoWinReversals: "0.00", Cost: wantWins}
	if report != want {
		t.Fatalf("campaign report %+v, want %+v", report, want)
	}

	// The GGR report's promo columns over the same days tie to the cent.
	rec = h.Get("/api/v1/reports/ggr?from=2026-03-01&to=2026-03-31", c.Key)
	var ggr struct {
		Data []struct {
			PromoBets         json.Number `json:"promo_bets"`
			PromoWins         json.Number `json:"promo_wins"`
			PromoWinReversals json.Number `json:"promo_win_reversals"`
		} `json:"data"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &ggr); err != nil {
		t.Fatal(err)
	}
	var ggrWins, ggrBets int64
	for _, r := range ggr.Data {
		ggrWins += cents(t, r.PromoWins) - cents(t, r.PromoWinReversals)
		ggrBets += cents(t, r.PromoBets)
	}
	if ggrWins != cents(t, line.PromoWins)-cents(t, line.Reversals) || ggrBets != cents(t, line.PromoBets) {
		t.Fatalf("GGR promo wins %d, bets %d; campaign %s, %s", ggrWins, ggrBets, line.PromoWins, line.PromoBets)
	}

	// And both recompute from the ledger's events alone.
	fromEvents := reportLine{PromoBets: "0.00", PromoWinReversals: "0.00"}
	var wins, bets int64
	rows, err := h.Pool.Query(ctx, `SELECT body FROM events ORDER BY position`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var body []byte
		if err := rows.Scan(&body); err != nil {
			t.Fatal(err)
		}
		e, err := domain.DecodeBody(body)
		if err != nil {
			t.Fatal(err)
		}
		d := e.Data
		if d.ClientID != c.ID || d.CampaignID != "march-spins" {
			continue
		}
		switch e.Type {
		case domain.EventRewardGranted:
			fromEvents.Rewards++
			fromEvents.Granted += d.FreeBets
		case domain.EventRewardCancelled:
			fromEvents.Cancelled += d.FreeBets
		case domain.EventRewardExpired:
			fromEvents.Expired += d.FreeBets
		case domain.EventBetPlaced:
			fromEvents.Used++
			bets += cents(t, json.Number(d.Amount))
		case domain.EventWinCredited:
			wins += cents(t, json.Number(d.Amount))
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	fromEvents.Left = fromEvents.Granted - fromEvents.Used - fromEvents.Cancelled - fromEvents.Expired
	fromEvents.PromoWins = json.Number(domain.FormatMinor(wins, 2))
	fromEvents.PromoBets = json.Number(domain.FormatMinor(bets, 2))
	fromEvents.Cost = json.Number(domain.FormatMinor(wins-bets, 2))
	if fromEvents != report {
		t.Fatalf("from the events %+v, the report %+v", fromEvents, report)
	}

	// verify: the chain, double entry, the accounts and the read models
	// rebuilt from the events (the reward events have no history row).
	vr, err := h.Audit.Verify(ctx, auditstore.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !vr.OK {
		t.Fatalf("verify: %+v", vr)
	}
}

// launch opens a session of player in game with the signed launch and
// returns the session id the provider is handed.
func launch(t *testing.T, h *apitest.Harness, c apitest.Client, game, player string) string {
	t.Helper()
	ts := strconv.FormatInt(h.Clock.Now().Unix(), 10)
	q := url.Values{"api_key": {c.Key}, "user_id": {player}, "game_uid": {game}, "balance": {"0"}, "ts": {ts},
		"sig": {apitest.SignLaunch(c.Secret, c.Key, player, game, "0", ts)}, "currency_code": {"EUR"}}
	rec := h.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/launch?" + q.Encode()})
	var a struct {
		OK        bool   `json:"ok"`
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil || !a.OK || a.SessionID == "" {
		t.Fatalf("launch of %s: %d %s", player, rec.Code, rec.Body)
	}
	return a.SessionID
}

// cents reads a decimal amount of 2 decimals exactly.
func cents(t *testing.T, n json.Number) int64 {
	t.Helper()
	m, err := domain.ParseMoney(n.String(), domain.MustCurrency("EUR"))
	if err != nil {
		t.Fatalf("amount %q: %v", n, err)
	}
	return m.Minor()
}

// TestCampaignOverTBB grants a campaign's rewards through The Bet Brothers'
// Free Spin API and spends them as its Game Events can — bets of 0 on the
// game, matched to the player's active reward — then cancels one at the
// supplier: the report counts what the events say.
func TestCampaignOverTBB(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 4, 6, 9, 0, 0, 0, time.UTC)
	clock := apitest.StoppedAt(start)
	h := apitest.New(t, apitest.Options{Clock: clock, LedgerClock: clock})
	ctx := context.Background()
	provider, game := apitest.UID("tbb"), apitest.UID("slot")
	p := gateway.Provider{ID: provider, Name: "TBB supplier", Secret: "secret-" + apitest.UID("s"), Enabled: true,
		WalletProtocol: gateway.WalletProtocolTBB}
	ps, err := providersim.StartPromoServer(providersim.PromoConfig{Protocol: gateway.WalletProtocolTBB, Secret: p.Secret,
		ProviderName: provider})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ps.Close() })
	if err := h.Gateway.UpsertProvider(ctx, p); err != nil {
		t.Fatal(err)
	}
	route(t, h, provider, gateway.ProviderKindJSON, ps.URL)
	h.AddGame(game, provider, "TBB slot", "slots", true)
	c := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch, gateway.ScopePromotionsRead,
		gateway.ScopePromotionsWrite, gateway.ScopeReportsRead}, gateway.LaunchSettings{DefaultCurrency: "EUR"})
	do := func(method, path string, body any) map[string]any {
		t.Helper()
		return data(t, h, c, method, path, body)
	}
	do(http.MethodPost, "/api/v1/campaigns", map[string]any{"campaign_id": "april", "provider": provider,
		"games": []string{game}, "currency": "EUR", "bet_value": "0.10", "free_bets": 3,
		"valid_until": start.AddDate(0, 0, 7).Format(time.RFC3339)})
	got := do(http.MethodPost, "/api/v1/campaigns/april/rewards", map[string]any{"rewards": []map[string]any{
		{"reward_id": "april-a", "player_id": "tp-a"}, {"reward_id": "april-b", "player_id": "tp-b"}}})
	if got["granted"] != 2.0 {
		t.Fatalf("grant %v", got)
	}
	list := ps.Rewards()
	if len(list) != 2 {
		t.Fatalf("the supplier holds %d rewards, want 2", len(list))
	}
	session := launch(t, h, c, game, "tp-a")
	rep, err := ps.SpendFreeBets(ctx, providersim.Spend{Config: providersim.Config{Protocol: gateway.WalletProtocolTBB,
		BaseURL: h.URL, Provider: provider, Game: game, Player: "tp-a", Currency: "EUR", Secret: p.Secret},
		Session: session, Reward: list[0].Ref, Wins: []string{"0.30", "0", "1.20"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Deviations) != 0 {
		t.Fatalf("%d deviations: %v", len(rep.Deviations), rep.Deviations)
	}
	if r := do(http.MethodPost, "/api/v1/campaigns/april/rewards/april-b/cancel", nil); r["state"] != "cancelled" {
		t.Fatalf("cancel %v", r)
	}
	if rw, _ := ps.Reward(list[1].Ref); !rw.Canceled {
		t.Fatal("the supplier still holds the cancelled reward")
	}
	h.Pump()
	rec := h.Get("/api/v1/reports/campaigns", c.Key)
	var out struct {
		Data struct {
			Campaigns []struct {
				Used      int64       `json:"free_bets_used"`
				Cancelled int64       `json:"free_bets_cancelled"`
				PromoWins json.Number `json:"promo_wins"`
			} `json:"campaigns"`
		} `json:"data"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || len(out.Data.Campaigns) != 1 {
		t.Fatalf("report %s (%v)", rec.Body, err)
	}
	if l := out.Data.Campaigns[0]; l.Used != 3 || l.Cancelled != 3 || l.PromoWins.String() != "1.50" {
		t.Fatalf("report %+v", l)
	}
	if dev := ps.Deviations(); len(dev) != 0 {
		t.Fatalf("the supplier saw %d deviations: %v", len(dev), dev)
	}
}

// data sends a request with c's key and returns its answer's data; any
// other status than 200 fails the test.
func data(t *testing.T, h *apitest.Harness, c apitest.Client, method, path string, body any) map[string]any {
	t.Helper()
	rec := h.Call(method, path, c.Key, body)
	if rec.Code != http.StatusOK {
		t.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
	}
	var env struct {
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil {
		t.Fatal(err)
	}
	return env.Data
}

// route points provider's launches (and promotion calls) of kind at url.
func route(t *testing.T, h *apitest.Harness, provider, kind, url string) {
	t.Helper()
	if err := h.Gateway.SetProviderRoute(context.Background(), gateway.ProviderRoute{ProviderID: provider, Kind: kind,
		Endpoints: []string{url}, Balancing: gateway.BalancingPriority, Timeout: 5 * time.Second,
		BreakerFailures: 3, BreakerCooldown: time.Minute}); err != nil {
		t.Fatal(err)
	}
}
