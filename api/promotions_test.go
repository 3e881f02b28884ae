package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

type campaignAnswer struct {
	CampaignID string      `json:"campaign_id"`
	Provider   string      `json:"provider"`
	Games      []string    `json:"games"`
	BetValue   json.Number `json:"bet_value"`
	FreeBets   int64       `json:"free_bets"`
	AtProvider bool        `json:"at_provider"`
	Created    *bool       `json:"created"`
}

type rewardAnswer struct {
	RewardID string `json:"reward_id"`
	PlayerID string `json:"player_id"`
	FreeBets int64  `json:"free_bets"`
	Used     int64  `json:"used"`
	Left     int64  `json:"left"`
	State    string `json:"state"`
}

type grantAnswer struct {
	Granted, Replayed, Refused int
	Rewards                    []struct {
		RewardID string        `json:"reward_id"`
		Status   string        `json:"status"`
		Reward   *rewardAnswer `json:"reward"`
		Error    *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Status  int    `json:"status"`
		} `json:"error"`
	} `json:"rewards"`
}

// TestPromotions runs a campaign of a provider without a promotion API
// (recorded on our side only) through the client API: creation, grants,
// free bets spent over the provider wallet, cancellation and expiry, each
// a ledger event.
func TestPromotions(t *testing.T) {
	h := newSLHarness(t)
	c := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch, gateway.ScopePromotionsRead,
		gateway.ScopePromotionsWrite, gateway.ScopeReportsRead}, gateway.LaunchSettings{})
	reader, _ := h.IssueKey(c.ID, gateway.ScopePromotionsRead)
	until := slTestNow.Add(7 * 24 * time.Hour).Format(time.RFC3339)
	campaign := map[string]any{"campaign_id": "spring", "name": "Spring spins", "provider": h.provider,
		"games": []string{h.game}, "currency": "EUR", "bet_value": "0.50", "free_bets": 3, "valid_until": until}

	t.Run("create, retry, conflict", func(t *testing.T) {
		got := apitest.Data[campaignAnswer](t, h.Call(http.MethodPost, "/api/v1/campaigns", c.Key, campaign))
		if got.CampaignID != "spring" || got.BetValue.String() != "0.50" || got.AtProvider || got.Created == nil || !*got.Created {
			t.Fatalf("created %+v", got)
		}
		again := apitest.Data[campaignAnswer](t, h.Call(http.MethodPost, "/api/v1/campaigns", c.Key, campaign))
		if again.Created == nil || *again.Created {
			t.Fatalf("retry %+v, want created false", again)
		}
		other := map[string]any{}
		for k, v := range campaign {
			other[k] = v
		}
		other["free_bets"] = 4
		apitest.WantError(t, h.Call(http.MethodPost, "/api/v1/campaigns", c.Key, other), http.StatusConflict,
			wire.CodeIdempotencyConflict)
	})

	t.Run("refusals", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			change map[string]any
			status int
			code   string
		}{
			{"no campaign id", map[string]any{"campaign_id": ""}, http.StatusBadRequest, wire.CodeInvalidRequest},
			{"no games", map[string]any{"campaign_id": "c2", "games": []string{}}, http.StatusBadRequest, wire.CodeInvalidRequest},
			{"a bet value of nothing", map[string]any{"campaign_id": "c3", "bet_value": "0"}, http.StatusBadRequest, wire.CodeInvalidRequest},
			{"too precise", map[string]any{"campaign_id": "c4", "bet_value": "0.505"}, http.StatusBadRequest, wire.CodeInvalidRequest},
			{"no free bets", map[string]any{"campaign_id": "c5", "free_bets": 0}, http.StatusBadRequest, wire.CodeInvalidRequest},
			{"ended", map[string]any{"campaign_id": "c6", "valid_until": slTestNow.Add(-time.Hour).Format(time.RFC3339)},
				http.StatusBadRequest, wire.CodeInvalidRequest},
			{"unknown provider", map[string]any{"campaign_id": "c7", "provider": "nobody"}, http.StatusNotFound, wire.CodeNotFound},
			{"unknown game", map[string]any{"campaign_id": "c8", "games": []string{"nothing"}}, http.StatusNotFound, wire.CodeNotFound},
			{"unknown field", map[string]any{"campaign_id": "c9", "colour": "red"}, http.StatusBadRequest, wire.CodeInvalidRequest},
		} {
			t.Run(tc.name, func(t *testing.T) {
				body := map[string]any{}
				for k, v := range campaign {
					body[k] = v
				}
				for k, v := range tc.change {
					body[k] = v
				}
				rec := h.Call(http.MethodPost, "/api/v1/campaigns", c.Key, body)
				if rec.Code != tc.status {
					t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
				}
			})
		}
		apitest.WantError(t, h.Call(http.MethodPost, "/api/v1/campaigns", reader, campaign), http.StatusForbidden,
			wire.CodeForbidden)
		apitest.WantError(t, h.Call(http.MethodPost, "/api/v1/campaigns", "", campaign), http.StatusUnauthorized,
			wire.CodeUnauthorized)
		apitest.WantError(t, h.Get("/api/v1/campaigns/nothing", c.Key), http.StatusNotFound, wire.CodeNotFound)
	})

	players := make([]string, 5)
	for i := range players {
		players[i] = fmt.Sprintf("fb-player-%d", i)
	}
	t.Run("grant, retry, refuse", func(t *testing.T) {
		var rewards []map[string]any
		for i, p := range players {
			rewards = append(rewards, map[string]any{"reward_id": fmt.Sprintf("rw-%d", i), "player_id": p})
		}
		got := apitest.Data[grantAnswer](t, h.Call(http.MethodPost, "/api/v1/campaigns/spring/rewards", c.Key,
			map[string]any{"rewards": rewards}))
		if got.Granted != 5 || got.Replayed != 0 || got.Refused != 0 {
			t.Fatalf("grant %+v", got)
		}
		retry := map[string]any{"rewards": []map[string]any{
			{"reward_id": "rw-0", "player_id": players[0]},                     // the same: replayed
			{"reward_id": "rw-1", "player_id": "someone-else"},                 // other terms: refused
			{"reward_id": "rw-x", "player_id": players[0], "game_id": "other"}, // not the campaign's game
		}}
		rec := h.Call(http.MethodPost, "/api/v1/campaigns/spring/rewards", c.Key, retry)
		if rec.Code != http.StatusBadRequest { // a game not the campaign's refuses the request before any grant
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		retry["rewards"] = retry["rewards"].([]map[string]any)[:2]
		rec = h.Call(http.MethodPost, "/api/v1/campaigns/spring/rewards", c.Key, retry)
		got = apitest.Data[grantAnswer](t, rec)
		if got.Replayed != 1 || got.Refused != 1 || got.Rewards[1].Error == nil ||
			got.Rewards[1].Error.Code != wire.CodeIdempotencyConflict || got.Rewards[1].Error.Status != http.StatusConflict ||
			!strings.Contains(rec.Body.String(), `"code":"IDEMPOTENCY_CONFLICT"`) {
			t.Fatalf("retry %+v", got)
		}
		if n := len(h.Events(domain.PlayerWallet(c.ID, players[0], slEUR), domain.EventRewardGranted)); n != 1 {
			t.Fatalf("%d grant events for rw-0, want 1", n)
		}
	})

	t.Run("free bets over the provider wallet", func(t *testing.T) {
		a := h.mustLaunch(c, players[0], "10.00", nil)
		call := func(op string, f map[string]any) *http.Response {
			f["session_id"] = a.SessionID
			rec := h.WalletCall(h.provider, h.providerSecret, op, f)
			return rec.Result()
		}
		// A bet of nothing spends the player's reward; its round's win is
		// the reward's promo win.
		for i := range 3 {
			round := fmt.Sprintf("fr-%d", i)
			if r := call("bet", map[string]any{"transaction_id": "fb-" + round, "round_id": round, "amount": "0"}); r.StatusCode != http.StatusOK {
				t.Fatalf("free bet %d: %d", i, r.StatusCode)
			}
			if r := call("win", map[string]any{"transaction_id": "fw-" + round, "round_id": round, "amount": "1.25",
				"round_closed": true}); r.StatusCode != http.StatusOK {
				t.Fatalf("free win %d: %d", i, r.StatusCode)
			}
		}
		// The reward is used up: a fourth bet of nothing is refused.
		if r := call("bet", map[string]any{"transaction_id": "fb-4", "round_id": "fr-4", "amount": "0"}); r.StatusCode == http.StatusOK {
			t.Fatal("a fourth free bet was taken")
		}
		// A free bet rolled back gives the free bet back to its reward.
		b := h.mustLaunch(c, players[2], "0", nil)
		for _, op := range []struct {
			name string
			body map[string]any
		}{{"bet", map[string]any{"transaction_id": "fb-rb", "round_id": "fr-rb", "amount": "0"}},
			{"rollback", map[string]any{"transaction_id": "rb-rb", "reference_transaction_id": "fb-rb", "round_id": "fr-rb"}}} {
			op.body["session_id"] = b.SessionID
			if rec := h.WalletCall(h.provider, h.providerSecret, op.name, op.body); rec.Code != http.StatusOK {
				t.Fatalf("%s: %d %s", op.name, rec.Code, rec.Body)
			}
		}
		list := apitest.Data[[]rewardAnswer](t, h.Get("/api/v1/campaigns/spring/rewards", reader))
		if len(list) != 5 || list[0].RewardID != "rw-0" || list[0].Used != 3 || list[0].Left != 0 ||
			list[2].Used != 0 || list[2].Left != 3 {
			t.Fatalf("rewards %+v", list)
		}
		wins := h.Events(domain.PlayerWallet(c.ID, players[0], slEUR), domain.EventWinCredited)
		if len(wins) != 3 || !wins[0].Data.Promo || wins[0].Data.CampaignID != "spring" || wins[0].Data.RewardID != "rw-0" {
			t.Fatalf("wins %+v", wins)
		}
		if got := h.Balance(domain.PlayerWallet(c.ID, players[0], slEUR)); got != 1000+375 {
			t.Fatalf("balance %d, want 13.75 (nothing staked, 3 x 1.25 won)", got)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		got := apitest.Data[rewardAnswer](t, h.Call(http.MethodPost, "/api/v1/campaigns/spring/rewards/rw-1/cancel", c.Key,
			map[string]any{"reason": "player asked"}))
		if got.State != "cancelled" || got.Left != 3 {
			t.Fatalf("cancelled %+v", got)
		}
		again := apitest.Data[rewardAnswer](t, h.Call(http.MethodPost, "/api/v1/campaigns/spring/rewards/rw-1/cancel", c.Key, nil))
		if again.State != "cancelled" {
			t.Fatalf("again %+v", again)
		}
		apitest.WantError(t, h.Call(http.MethodPost, "/api/v1/campaigns/spring/rewards/rw-0/cancel", c.Key, nil),
			http.StatusConflict, wire.CodeRewardNotActive)
		apitest.WantError(t, h.Call(http.MethodPost, "/api/v1/campaigns/spring/rewards/rw-9/cancel", c.Key, nil),
			http.StatusNotFound, wire.CodeNotFound)
		if n := len(h.Events(domain.PlayerWallet(c.ID, players[1], slEUR), domain.EventRewardCancelled)); n != 1 {
			t.Fatalf("%d cancel events, want 1", n)
		}
	})

	t.Run("expiry", func(t *testing.T) {
		n, err := h.Promotions.ExpireDue(context.Background(), 100)
		if err != nil || n != 0 {
			t.Fatalf("expired %d before the end (%v)", n, err)
		}
		h.Clock.Advance(8 * 24 * time.Hour)
		if n, err = h.Promotions.ExpireDue(context.Background(), 100); err != nil || n != 3 {
			t.Fatalf("expired %d, want the 3 unused (%v)", n, err)
		}
		list := apitest.Data[[]rewardAnswer](t, h.Get("/api/v1/campaigns/spring/rewards", reader))
		states := map[string]string{}
		for _, r := range list {
			states[r.RewardID] = r.State
		}
		want := map[string]string{"rw-0": "active", "rw-1": "cancelled", "rw-2": "expired", "rw-3": "expired", "rw-4": "expired"}
		for id, s := range want {
			if states[id] != s {
				t.Fatalf("states %v, want %v", states, want)
			}
		}
		if n, err = h.Promotions.ExpireDue(context.Background(), 100); err != nil || n != 0 {
			t.Fatalf("expired %d more (%v)", n, err)
		}
	})

	t.Run("report", func(t *testing.T) {
		h.Pump()
		day := slTestNow.Format(time.DateOnly)
		type line struct {
			CampaignID string      `json:"campaign_id"`
			Granted    int64       `json:"free_bets_granted"`
			Used       int64       `json:"free_bets_used"`
			Cancelled  int64       `json:"free_bets_cancelled"`
			Expired    int64       `json:"free_bets_expired"`
			Left       int64       `json:"free_bets_left"`
			PromoWins  json.Number `json:"promo_wins"`
			Cost       json.Number `json:"cost"`
		}
		rep := apitest.Data[struct {
			Campaigns []line `json:"campaigns"`
		}](t, h.Get("/api/v1/reports/campaigns?from="+day+"&to="+day, c.Key))
		if len(rep.Campaigns) != 1 {
			t.Fatalf("report %+v", rep)
		}
		got := rep.Campaigns[0]
		if got.Granted != 15 || got.Used != 3 || got.Cancelled != 3 || got.Expired != 9 || got.Left != 0 ||
			got.PromoWins.String() != "3.75" || got.Cost.String() != "3.75" {
			t.Fatalf("campaign line %+v", got)
		}
		ggr := apitest.Data[[]struct {
			PromoWins json.Number `json:"promo_wins"`
			PromoGGR  json.Number `json:"promo_ggr"`
		}](t, h.Get("/api/v1/reports/ggr?from="+day+"&to="+day, c.Key))
		if len(ggr) != 1 || ggr[0].PromoWins.String() != got.PromoWins.String() {
			t.Fatalf("GGR %+v, campaign promo wins %s", ggr, got.PromoWins)
		}
		csv := h.Do(apitest.Request{Method: http.MethodGet, Path: "/api/v1/reports/campaigns", Key: c.Key,
			Header: map[string]string{"Accept": "text/csv"}})
		if csv.Code != http.StatusOK || !strings.Contains(csv.Body.String(), "spring,Spring spins,") {
			t.Fatalf("CSV %d: %s", csv.Code, csv.Body)
		}
		apitest.WantError(t, h.Get("/api/v1/reports/campaigns?from=2026-03-20&to=2026-03-01", c.Key),
			http.StatusBadRequest, wire.CodeInvalidRequest)
		apitest.WantError(t, h.Get("/api/v1/reports/campaigns", reader), http.StatusForbidden, wire.CodeForbidden)
	})
}
