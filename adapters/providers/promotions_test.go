package providers_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/promo"
	"github.com/pitboss/pitboss/providersim"
)

// Tests of the providers' promotion APIs (Caleta's Freebets API, TBB's
// Free Spin API) against real servers on loopback: the simulator's
// provider side (which verifies each signature and checks each body
// against the document) and recording servers for the exact wire.

var (
	// validFrom is in a zone of its own: the wire says it in UTC.
	validFrom  = time.Date(2026, 5, 1, 14, 0, 0, 0, time.FixedZone("CEST", 2*3600))
	validUntil = time.Date(2026, 5, 31, 23, 59, 59, 0, time.UTC)
	eur        = domain.MustCurrency("EUR")
)

func campaignOf(game string, cur domain.Currency, betMinor int64, bets int) promo.ProviderCampaign {
	return promo.ProviderCampaign{CampaignID: "camp-1", Name: "Spring spins", GameCode: game, Currency: cur,
		BetValue: domain.FromMinor(betMinor, cur), FreeBets: bets, ValidFrom: validFrom, ValidUntil: validUntil}
}

func grantOf(c promo.ProviderCampaign, ref, reward string) promo.ProviderGrant {
	return promo.ProviderGrant{CampaignID: c.CampaignID, CampaignRef: ref, RewardID: reward, PlayerID: "player-7",
		SubPartnerID: "casino-1", GameCode: c.GameCode, Currency: c.Currency, BetValue: c.BetValue, FreeBets: c.FreeBets,
		ValidFrom: c.ValidFrom, ValidUntil: c.ValidUntil}
}

// caletaSim is the simulator's Caleta Freebets server, verifying with the
// public half of our test launch key, for operator op-77 (kindRoute's).
func caletaSim(t *testing.T, prepaids ...providersim.PromoPrepaid) *providersim.PromoServer {
	t.Helper()
	s, err := providersim.StartPromoServer(providersim.PromoConfig{Protocol: "caleta", OperatorKey: &testLaunchKey().PublicKey,
		OperatorID: "op-77", Prepaids: prepaids, Out: t.Output()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// tbbSim is the simulator's TBB Free Spin server, verifying with
// testSecret.
func tbbSim(t *testing.T, provider string) *providersim.PromoServer {
	t.Helper()
	s, err := providersim.StartPromoServer(providersim.PromoConfig{Protocol: "tbb", Secret: testSecret,
		ProviderName: provider, Out: t.Output()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func noDeviations(t *testing.T, s *providersim.PromoServer) {
	t.Helper()
	if devs := s.Deviations(); len(devs) != 0 {
		t.Fatalf("%d deviations: %v", len(devs), devs)
	}
}

func rejected(t *testing.T, err error) *gateway.ProviderRejectedError {
	t.Helper()
	var rej *gateway.ProviderRejectedError
	if !errors.As(err, &rej) {
		t.Fatalf("error %v (%T), want *gateway.ProviderRejectedError", err, err)
	}
	return rej
}

func TestPromotionsSupportCaletaAndTBBOnly(t *testing.T) {
	p := newRegistry(t).Promotions()
	for protocol, want := range map[string]bool{"caleta": true, "tbb": true, "pitboss": false, "evolution": false,
		"redtiger": false, "": false} {
		if got := p.Supports(protocol); got != want {
			t.Errorf("Supports(%q) = %v, want %v", protocol, got, want)
		}
	}
	_, err := p.CreateCampaign(context.Background(), promo.Target{Route: route("p", gateway.ProviderKindJSON, time.Hour,
		"https://a.example"), Protocol: "evolution"}, campaignOf("g", eur, 20, 10))
	if err == nil {
		t.Fatal("a campaign through a protocol without a promotion API did not fail")
	}
}

// The whole Freebets flow against the simulator: a campaign on a prepaid,
// a reward under our id, its retry, a reward reusing our id for another
// player (refused), the cancel; every call signed and as the document
// says.
func TestCaletaFreebetsCampaignGrantCancel(t *testing.T) {
	sim := caletaSim(t)
	reg := newRegistry(t)
	p := reg.Promotions()
	tg := promo.Target{Route: kindRoute("caleta", gateway.ProviderKindCaleta, sim.URL), Protocol: promo.ProtocolCaleta}
	ctx := context.Background()
	// The simulator serves the Games API's launch too.
	if u, err := reg.Launch(ctx, tg.Route, launchReq()); err != nil || !strings.HasPrefix(u, sim.URL+"/games/") {
		t.Fatalf("launch through the simulator: %q, %v", u, err)
	}
	c := campaignOf("cg_magicforest", eur, 20, 10) // 0.20 EUR
	ref, err := p.CreateCampaign(ctx, tg, c)
	if err != nil || ref == "" {
		t.Fatalf("campaign %q, %v", ref, err)
	}
	g := grantOf(c, ref, "reward-1")
	for i := range 2 { // the second is a retry: the same reward
		got, err := p.GrantReward(ctx, tg, g)
		if err != nil || got != "reward-1" {
			t.Fatalf("grant %d: %q, %v", i+1, got, err)
		}
	}
	rws := sim.Rewards()
	want := providersim.FreeBetReward{Ref: "reward-1", Campaign: ref, Player: "player-7", Game: "cg_magicforest",
		Currency: "EUR", BetValue: 20, FreeBets: 10, Remaining: 10, Start: "2026-05-01T12:00:00", End: "2026-05-31T23:59:59"}
	if len(rws) != 1 || !sameReward(rws[0], want) {
		t.Fatalf("rewards at the provider %+v\nwant one %+v", rws, want)
	}
	other := g // our reward id again, for another player
	other.PlayerID = "player-8"
	if rej := rejected(t, grantErr(p.GrantReward(ctx, tg, other))); rej.Status != http.StatusConflict ||
		!strings.Contains(rej.Message, "other content") {
		t.Fatalf("refusal %+v", rej)
	}
	if err := p.CancelReward(ctx, tg, promo.ProviderCancel{RewardID: "reward-1", RewardRef: "reward-1",
		PlayerID: "player-7", GameCode: "cg_magicforest"}); err != nil {
		t.Fatal(err)
	}
	if rw, _ := sim.Reward("reward-1"); !rw.Canceled {
		t.Fatalf("reward %+v not cancelled at the provider", rw)
	}
	// Another process (no memory of the campaign's prepaid) grants on the
	// same campaign: it looks the prepaid up in the operator's campaigns.
	if got, err := reg.Promotions().GrantReward(ctx, tg, grantOf(c, ref, "reward-2")); err != nil || got != "reward-2" {
		t.Fatalf("grant by another process: %q, %v", got, err)
	}
	if n := sim.Calls("/api/freebet/campaigns/list"); n != 1 {
		t.Fatalf("campaigns/list called %d times, want 1", n)
	}
	noDeviations(t, sim)
}

func grantErr(_ string, err error) error { return err }

func sameReward(got, want providersim.FreeBetReward) bool {
	return got.Ref == want.Ref && got.Campaign == want.Campaign && got.Player == want.Player && got.Game == want.Game &&
		got.Currency == want.Currency && got.BetValue == want.BetValue && got.FreeBets == want.FreeBets &&
		got.Remaining == want.Remaining && got.Start == want.Start && got.End == want.End && got.Canceled == want.Canceled
}

// The exact wire of each Freebets call: paths, bodies (money as integers
// of 1/100000, datetimes YYYY-MM-DDThh:mm:ss in UTC), every body signed
// with our launch key.
func TestCaletaFreebetsFieldMapping(t *testing.T) {
	answers := map[string]string{
		"/api/freebet/prepaids/list": `[{"prepaid_uuid":"pp-other","game_id":1,"currency":"EUR","bet_value":100000,"bet_count":null},
			{"prepaid_uuid":"pp-open","game_id":1,"currency":"EUR","bet_value":null,"bet_count":null},
			{"prepaid_uuid":"pp-exact","game_id":1,"currency":"EUR","bet_value":150000,"bet_count":25}]`,
		"/api/freebet/campaigns/create": `{"campaign_uuid":"cmp-9","prepaid_uuid":"pp-exact","name":"Spring spins","game_id":1,"bet_value":150000,"bet_count":25}`,
		"/api/freebet/rewards/create":   `{"reward_uuid":"reward-1","prepaid_uuid":"pp-exact","user":"player-7","game_id":1,"bet_value":150000,"bet_count":25}`,
		"/api/freebet/rewards/cancel":   `{"reward_uuid":"reward-1","prepaid_uuid":"pp-exact","user":"player-7","game_id":1}`,
	}
	srv, got := signedRecorder(t, "X-Auth-Signature", func(path string) (int, string) { return http.StatusOK, answers[path] })
	p := newRegistry(t).Promotions()
	tg := promo.Target{Route: kindRoute("caleta", gateway.ProviderKindCaleta, srv.URL), Protocol: promo.ProtocolCaleta}
	ctx := context.Background()
	c := campaignOf("cg_magicforest", eur, 150, 25) // 1.50 EUR
	ref, err := p.CreateCampaign(ctx, tg, c)
	if err != nil || ref != "cmp-9" {
		t.Fatalf("campaign %q, %v", ref, err)
	}
	if _, err := p.GrantReward(ctx, tg, grantOf(c, ref, "reward-1")); err != nil {
		t.Fatal(err)
	}
	if err := p.CancelReward(ctx, tg, promo.ProviderCancel{RewardID: "reward-1", RewardRef: "reward-1"}); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		path string
		body map[string]any
	}{
		{"/api/freebet/prepaids/list", map[string]any{"operator_id": "op-77", "game_code": "cg_magicforest", "currency": "EUR"}},
		{"/api/freebet/campaigns/create", map[string]any{"name": "Spring spins", "prepaid_uuid": "pp-exact",
			"currency": "EUR", "bet_value": 150000.0, "bet_count": 25.0, "start_time": "2026-05-01T12:00:00",
			"end_time": "2026-05-31T23:59:59"}},
		{"/api/freebet/rewards/create", map[string]any{"user": "player-7", "sub_partner_id": "casino-1",
			"operator_id": "op-77", "prepaid_uuid": "pp-exact", "campaign_uuid": "cmp-9", "reward_uuid": "reward-1",
			"start_time": "2026-05-01T12:00:00", "end_time": "2026-05-31T23:59:59", "bet_value": 150000.0, "bet_count": 25.0}},
		{"/api/freebet/rewards/cancel", map[string]any{"operator_id": "op-77", "reward_uuid": "reward-1"}},
	}
	for _, w := range want {
		s := <-got
		if s.path != w.path || s.ctype != "application/json" {
			t.Fatalf("call %s (%s), want %s", s.path, s.ctype, w.path)
		}
		if err := gateway.VerifyRSASHA256(prepared(t, &testLaunchKey().PublicKey), s.body, s.sig); err != nil {
			t.Fatalf("%s: X-Auth-Signature does not verify: %v", s.path, err)
		}
		if m := decodeBody(t, s.body); !reflect.DeepEqual(m, w.body) {
			t.Fatalf("%s body %v\nwant %v", s.path, m, w.body)
		}
	}
}

// A provider's answer that is not yes: its refusals (no failover, the
// breaker stays closed), and answers that would grant other free bets
// than ours.
func TestCaletaFreebetsRefusals(t *testing.T) {
	ctx := context.Background()
	t.Run("no prepaid fits", func(t *testing.T) {
		sim := caletaSim(t, providersim.PromoPrepaid{UUID: "pp-1", GameCode: "cg_magicforest", Currency: "EUR",
			BetValue: "1.00"}, providersim.PromoPrepaid{UUID: "pp-2", GameCode: "cg_magicforest", Currency: "EUR", BetCount: 50})
		p := newRegistry(t).Promotions()
		tg := promo.Target{Route: kindRoute("caleta", gateway.ProviderKindCaleta, sim.URL), Protocol: promo.ProtocolCaleta}
		_, err := p.CreateCampaign(ctx, tg, campaignOf("cg_magicforest", eur, 20, 10))
		if rej := rejected(t, err); !strings.Contains(rej.Message, "no prepaid") {
			t.Fatalf("refusal %+v", rej)
		}
		if n := sim.Calls("/api/freebet/campaigns/create"); n != 0 {
			t.Fatalf("a campaign was created %d times without a prepaid", n)
		}
		noDeviations(t, sim)
	})
	t.Run("grant refused", func(t *testing.T) {
		sim := caletaSim(t)
		reg := newRegistry(t)
		p := reg.Promotions()
		other := newProvider(t, failing(http.StatusInternalServerError))
		tg := promo.Target{Route: kindRoute("caleta", gateway.ProviderKindCaleta, sim.URL, other.URL), Protocol: promo.ProtocolCaleta}
		c := campaignOf("cg_magicforest", eur, 20, 10)
		ref, err := p.CreateCampaign(ctx, tg, c)
		if err != nil {
			t.Fatal(err)
		}
		sim.RefuseGrants(true)
		for range 3 { // more than BreakerFailures
			_, err := p.GrantReward(ctx, tg, grantOf(c, ref, "reward-1"))
			if rej := rejected(t, err); rej.Status != http.StatusBadRequest || !strings.Contains(rej.Message, "refused") {
				t.Fatalf("refusal %+v", rej)
			}
		}
		if len(sim.Rewards()) != 0 || other.hits.Load() != 0 {
			t.Fatalf("rewards %v, second endpoint hit %d times", sim.Rewards(), other.hits.Load())
		}
		if h := reg.Health(tg.Route); h.Status != gateway.ProviderAvailable {
			t.Fatalf("health %+v after refusals, want available", h)
		}
	})
	for _, tc := range []struct{ name, reward, contains string }{
		{"another reward_uuid", `{"reward_uuid":"theirs-1","prepaid_uuid":"pp","user":"player-7","game_id":1}`, "not ours"},
		{"other free bets", `{"reward_uuid":"reward-1","prepaid_uuid":"pp","user":"player-7","game_id":1,"bet_value":100000,"bet_count":10}`,
			"bet_value 100000, ours 20000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := signedRecorder(t, "X-Auth-Signature", func(path string) (int, string) {
				if path == "/api/freebet/campaigns/list" {
					return http.StatusOK, `[{"campaign_uuid":"cmp-1","prepaid_uuid":"pp","name":"n","game_id":1}]`
				}
				return http.StatusOK, tc.reward
			})
			p := newRegistry(t).Promotions()
			tg := promo.Target{Route: kindRoute("caleta", gateway.ProviderKindCaleta, srv.URL), Protocol: promo.ProtocolCaleta}
			_, err := p.GrantReward(ctx, tg, grantOf(campaignOf("g", eur, 20, 10), "cmp-1", "reward-1"))
			if rej := rejected(t, err); !strings.Contains(rej.Message, tc.contains) {
				t.Fatalf("refusal %+v, want one saying %q", rej, tc.contains)
			}
		})
	}
}

// 5xx, 429 and unreadable answers fail over to the next endpoint and count
// against the failing endpoint's breaker, which launches share; every
// endpoint down is unavailable, with the breakers open.
func TestPromotionFailoverAndBreakers(t *testing.T) {
	ctx := context.Background()
	sim := caletaSim(t)
	for _, tc := range []struct {
		name  string
		first func(w http.ResponseWriter, r *http.Request)
	}{
		{"503", failing(http.StatusServiceUnavailable)},
		{"429", failing(http.StatusTooManyRequests)},
		{"not JSON", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "<html>") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := newProvider(t, tc.first)
			reg := newRegistry(t)
			p := reg.Promotions()
			tg := promo.Target{Route: kindRoute("caleta", gateway.ProviderKindCaleta, first.URL, sim.URL),
				Protocol: promo.ProtocolCaleta}
			c := campaignOf("cg_magicforest", eur, 20, 10)
			ref, err := p.CreateCampaign(ctx, tg, c) // prepaids/list and campaigns/create: two failures
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.GrantReward(ctx, tg, grantOf(c, ref, "reward-"+tc.name)); err != nil {
				t.Fatal(err)
			}
			if n := first.hits.Load(); n != 2 {
				t.Fatalf("first endpoint called %d times, want 2 (then its breaker opened)", n)
			}
			if h := reg.Health(tg.Route); h.Status != gateway.ProviderDegraded {
				t.Fatalf("health %+v, want degraded", h)
			}
		})
	}
	t.Run("all down", func(t *testing.T) {
		a, b := newProvider(t, failing(http.StatusBadGateway)), newProvider(t, failing(http.StatusInternalServerError))
		reg := newRegistry(t)
		p := reg.Promotions()
		tg := promo.Target{Route: kindRoute("caleta", gateway.ProviderKindCaleta, a.URL, b.URL), Protocol: promo.ProtocolCaleta}
		g := grantOf(campaignOf("cg_magicforest", eur, 20, 10), "cmp-1", "reward-1")
		wantReasons := [][]string{{"status_502", "status_500"}, {"status_502", "status_500"},
			{"breaker_open", "breaker_open"}}
		for i, want := range wantReasons {
			_, err := p.GrantReward(ctx, tg, g)
			pu := unavailable(t, err)
			var got []string
			for _, f := range pu.Endpoints {
				got = append(got, f.Reason)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("call %d: endpoint reasons %v, want %v", i+1, got, want)
			}
		}
		if h := reg.Health(tg.Route); h.Status != gateway.ProviderUnavailable || h.RetryAfter <= 0 {
			t.Fatalf("health %+v, want unavailable with a retry-after", h)
		}
		// The breakers are the launches' too: a launch calls no endpoint.
		before := a.hits.Load() + b.hits.Load()
		if _, err := reg.Launch(ctx, tg.Route, launchReq()); err == nil {
			t.Fatal("a launch through open breakers succeeded")
		}
		if after := a.hits.Load() + b.hits.Load(); after != before {
			t.Fatalf("a launch through open breakers made %d calls", after-before)
		}
	})
}

func TestPromotionsNotConfigured(t *testing.T) {
	ctx := context.Background()
	noOperator := kindRoute("c1", gateway.ProviderKindCaleta, "https://a.example")
	noOperator.LaunchOperatorID = ""
	noKey := kindRoute("c2", gateway.ProviderKindCaleta, "https://a.example")
	noKey.LaunchSecret = "not a key"
	noSecret := route("t1", gateway.ProviderKindJSON, time.Hour, "https://a.example")
	noSecret.Secret = ""
	demo := route("d1", gateway.ProviderKindDemo, time.Hour)
	for name, tg := range map[string]promo.Target{
		"caleta without operator id": {Route: noOperator, Protocol: promo.ProtocolCaleta},
		"caleta without key":         {Route: noKey, Protocol: promo.ProtocolCaleta},
		"tbb without secret":         {Route: noSecret, Protocol: promo.ProtocolTBB},
		"demo kind, no endpoint":     {Route: demo, Protocol: promo.ProtocolTBB},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := newRegistry(t).Promotions().GrantReward(ctx, tg, grantOf(campaignOf("g", eur, 20, 10), "", "r-1"))
			if pu := unavailable(t, err); pu.Reason != "not_configured" {
				t.Fatalf("unavailable %+v, want not_configured", pu)
			}
		})
	}
	_, err := newRegistry(t).Promotions().CreateCampaign(ctx, promo.Target{Route: kindRoute("c3", gateway.ProviderKindCaleta,
		"https://a.example"), Protocol: promo.ProtocolCaleta}, campaignOf("g", domain.MustCurrency("ETH"), 20, 10))
	var fe *gateway.FieldError
	if !errors.As(err, &fe) || fe.Field != "currency" {
		t.Fatalf("a currency Caleta cannot say: %v, want a currency field error", err)
	}
}

// TBB's Free Spin API against the simulator: no campaign call, free spins
// granted and cancelled, the fault switch's refusal; every call signed and
// as the document says.
func TestTBBFreeSpinsGrantCancel(t *testing.T) {
	ctx := context.Background()
	sim := tbbSim(t, "tbb-acme")
	reg := newRegistry(t)
	p := reg.Promotions()
	tg := promo.Target{Route: route("tbb-acme", gateway.ProviderKindJSON, time.Hour, sim.URL), Protocol: promo.ProtocolTBB}
	// The simulator serves the json kind's launch too.
	if u, err := reg.Launch(ctx, tg.Route, launchReq()); err != nil || !strings.HasPrefix(u, sim.URL+"/games/") {
		t.Fatalf("launch through the simulator: %q, %v", u, err)
	}
	c := campaignOf("acme::42", eur, 20, 10)
	ref, err := p.CreateCampaign(ctx, tg, c)
	if err != nil || ref != "" {
		t.Fatalf("campaign %q, %v; want none at TBB", ref, err)
	}
	bonus, err := p.GrantReward(ctx, tg, grantOf(c, ref, "reward-1"))
	if err != nil || bonus == "" {
		t.Fatalf("grant %q, %v", bonus, err)
	}
	want := providersim.FreeBetReward{Ref: bonus, Campaign: "camp-1", Player: "player-7", Game: "acme::42", Currency: "EUR",
		BetValue: 20, FreeBets: 10, Remaining: 10, Start: "2026-05-01T12:00:00", End: "2026-05-31T23:59:59"}
	if rw, ok := sim.Reward(bonus); !ok || !sameReward(rw, want) {
		t.Fatalf("reward at the provider %+v\nwant %+v", rw, want)
	}
	if err := p.CancelReward(ctx, tg, promo.ProviderCancel{RewardID: "reward-1", RewardRef: bonus, PlayerID: "player-7",
		GameCode: "acme::42"}); err != nil {
		t.Fatal(err)
	}
	if rw, _ := sim.Reward(bonus); !rw.Canceled {
		t.Fatal("the free spins were not cancelled at the provider")
	}
	sim.RefuseGrants(true)
	_, err = p.GrantReward(ctx, tg, grantOf(c, "", "reward-2"))
	if rej := rejected(t, err); rej.Status != http.StatusBadRequest || rej.Code != "400" || !strings.Contains(rej.Message, "refused") {
		t.Fatalf("refusal %+v", rej)
	}
	if len(sim.Rewards()) != 1 {
		t.Fatalf("a refused grant was kept: %v", sim.Rewards())
	}
	noDeviations(t, sim)

	// Signed with another secret: the supplier's 403, a refusal.
	bad := tg
	bad.Route.Secret = "not-the-secret"
	sim.RefuseGrants(false)
	if rej := rejected(t, grantErr(p.GrantReward(ctx, bad, grantOf(c, "", "reward-3")))); rej.Status != http.StatusForbidden {
		t.Fatalf("refusal %+v, want 403", rej)
	}
}

// The exact wire of TBB's calls: amount a JSON number with exactly the
// currency's decimals, brand_id from the launch operator id when it is an
// integer, provider_name our provider id, the HMAC of the raw body.
func TestTBBFreeSpinFieldMapping(t *testing.T) {
	for _, tc := range []struct {
		name, operator, currency, amount string
		minor                            int64
		brand                            float64
	}{
		{"EUR, numeric operator id", "100", "EUR", "0.20", 20, 100},
		{"JPY, no operator id", "", "JPY", "100", 100, 1},
		{"KWD, operator id not a number", "op-77", "KWD", "1.500", 1500, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, got := signedRecorder(t, "X-Request-Sign", func(path string) (int, string) {
				if strings.HasSuffix(path, "/create") {
					return http.StatusOK, `{"status":"success","bonus_id":54636}`
				}
				return http.StatusOK, `{"status":"success"}`
			})
			rt := route("tbb-acme", gateway.ProviderKindJSON, time.Hour, srv.URL)
			rt.LaunchOperatorID = tc.operator
			tg := promo.Target{Route: rt, Protocol: promo.ProtocolTBB}
			p := newRegistry(t).Promotions()
			cur := domain.MustCurrency(tc.currency)
			bonus, err := p.GrantReward(context.Background(), tg, grantOf(campaignOf("acme::42", cur, tc.minor, 10), "", "reward-1"))
			if err != nil || bonus != "54636" {
				t.Fatalf("grant %q, %v", bonus, err)
			}
			if err := p.CancelReward(context.Background(), tg, promo.ProviderCancel{RewardID: "reward-1", RewardRef: bonus,
				PlayerID: "player-7", GameCode: "acme::42"}); err != nil {
				t.Fatal(err)
			}
			s := <-got
			if s.path != "/supplier_api/freespin/create" || s.sig != hmacHex(testSecret, s.body) {
				t.Fatalf("create: %s signed %q", s.path, s.sig)
			}
			if !strings.Contains(string(s.body), `"amount":`+tc.amount+`,`) {
				t.Fatalf("create body %s: amount is not %s", s.body, tc.amount)
			}
			wantCreate := map[string]any{"provider_name": "tbb-acme", "provider_id": 1.0, "player_id": "player-7",
				"game_symbol": "acme::42", "rounds": 10.0, "amount": decodeBody(t, []byte(`{"a":`+tc.amount+`}`))["a"],
				"currency_code": tc.currency, "start_date": "2026-05-01T12:00:00", "end_date": "2026-05-31T23:59:59",
				"bonus_code": "camp-1", "brand_id": tc.brand}
			if m := decodeBody(t, s.body); !reflect.DeepEqual(m, wantCreate) {
				t.Fatalf("create body %v\nwant %v", m, wantCreate)
			}
			s = <-got
			wantCancel := map[string]any{"provider_name": "tbb-acme", "provider_id": 1.0, "player_id": "player-7",
				"game_symbol": "acme::42", "bonus_id": 54636.0, "brand_id": tc.brand}
			if m := decodeBody(t, s.body); s.path != "/supplier_api/freespin/cancel" || s.sig != hmacHex(testSecret, s.body) ||
				!reflect.DeepEqual(m, wantCancel) {
				t.Fatalf("cancel %s signed %q body %v\nwant %v", s.path, s.sig, m, wantCancel)
			}
		})
	}
}

func TestTBBFreeSpinAnswers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		check  func(t *testing.T, err error)
	}{
		{"refusal in the addendum's shape", http.StatusNotFound, `{"code":404,"message":"player not found"}`,
			func(t *testing.T, err error) {
				if rej := rejected(t, err); rej.Code != "404" || rej.Message != "player not found" {
					t.Fatalf("refusal %+v", rej)
				}
			}},
		{"200 that is not success", http.StatusOK, `{"status":"failed","message":"game has no free spins"}`,
			func(t *testing.T, err error) {
				if rej := rejected(t, err); !strings.Contains(rej.Message, "no free spins") {
					t.Fatalf("refusal %+v", rej)
				}
			}},
		{"success without bonus_id", http.StatusOK, `{"status":"success"}`,
			func(t *testing.T, err error) {
				if pu := unavailable(t, err); pu.Endpoints[0].Reason != "bad_response" {
					t.Fatalf("unavailable %+v", pu)
				}
			}},
		{"500", http.StatusInternalServerError, `{"code":500,"message":"boom"}`,
			func(t *testing.T, err error) {
				if pu := unavailable(t, err); pu.Endpoints[0].Reason != "status_500" {
					t.Fatalf("unavailable %+v", pu)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := signedRecorder(t, "X-Request-Sign", func(string) (int, string) { return tc.status, tc.body })
			tg := promo.Target{Route: route("tbb-acme", gateway.ProviderKindJSON, time.Hour, srv.URL), Protocol: promo.ProtocolTBB}
			_, err := newRegistry(t).Promotions().GrantReward(context.Background(), tg,
				grantOf(campaignOf("acme::42", eur, 20, 10), "", "reward-1"))
			tc.check(t, err)
		})
	}
}

// signedRecorder is a provider that records each call (path, content
// type, the signature in header, the body) and answers what answer says.
func signedRecorder(t *testing.T, header string, answer func(path string) (int, string)) (*provider, <-chan seenRequest) {
	t.Helper()
	got := make(chan seenRequest, 16)
	p := newProvider(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seenRequest{method: r.Method, path: r.URL.Path, ctype: r.Header.Get("Content-Type"), sig: r.Header.Get(header),
			body: b}
		status, body := answer(r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	})
	return p, got
}
