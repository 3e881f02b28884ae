package domain_test

import (
	"errors"
	"testing"
	"time"

	"github.com/pitboss/pitboss/domain"
)

// grantOf is a reward of 3 free bets of 1.00 EUR on book-1, valid for a
// day from t0.
func grantOf(reward string, mods ...func(*domain.RewardGrant)) domain.RewardGrant {
	g := domain.RewardGrant{Client: client, Player: player, Campaign: "spring", Reward: reward, Provider: provider,
		Game: "book-1", BetValue: amt("1.00"), FreeBets: 3, ValidFrom: t0.Add(-time.Hour), ValidUntil: t0.Add(24 * time.Hour)}
	for _, m := range mods {
		m(&g)
	}
	return g
}

func grant(g domain.RewardGrant) decision {
	return func(r domain.Reader, env domain.Env) (domain.Change, error) {
		return domain.DecideRewardGrant(r, g, env)
	}
}

func endReward(reward string, expire bool) decision {
	return func(r domain.Reader, env domain.Env) (domain.Change, error) {
		return domain.DecideRewardEnd(r, domain.RewardEnd{Client: client, Reward: reward, Expire: expire}, env)
	}
}

// at makes d decide at now instead of the harness's time.
func at(now time.Time, d decision) decision {
	return func(r domain.Reader, env domain.Env) (domain.Change, error) {
		env.Now = now
		return d(r, env)
	}
}

func spends(reward string) gameOpt {
	return func(g *domain.GameTx) { g.Promo, g.Reward, g.Game = true, reward, "book-1" }
}

func TestRewards(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		given []decision
		when  decision
		err   error
		typ   domain.EventType
		check func(t *testing.T, e domain.Event, r domain.Reader)
	}{
		{name: "a grant moves nothing and records the reward", when: grant(grantOf("rw-1")),
			typ: domain.EventRewardGranted, check: func(t *testing.T, e domain.Event, r domain.Reader) {
				rec, _ := r.Record(domain.RewardKey(client, "rw-1"))
				if rec.FreeBets != 3 || rec.Used != 0 || rec.State != domain.RewardActive || rec.Campaign != "spring" {
					t.Errorf("record = %+v", rec)
				}
				if len(e.Data.Postings) != 0 || e.Data.FreeBets != 3 || e.Data.Amount != "1.00" || !e.Data.Promo {
					t.Errorf("event data = %+v", e.Data)
				}
			}},
		{name: "a reward id is granted once", given: []decision{grant(grantOf("rw-1"))}, when: grant(grantOf("rw-1")),
			err: domain.ErrDuplicateTransaction},
		{name: "no free bets", when: grant(grantOf("rw-1", func(g *domain.RewardGrant) { g.FreeBets = 0 })),
			err: domain.ErrInvalidArgument},
		{name: "a bet value of nothing", when: grant(grantOf("rw-1", func(g *domain.RewardGrant) { g.BetValue = amt("0") })),
			err: domain.ErrInvalidAmount},
		{name: "a window already over", when: grant(grantOf("rw-1", func(g *domain.RewardGrant) {
			g.ValidFrom, g.ValidUntil = t0.Add(-2*time.Hour), t0.Add(-time.Hour)
		})), err: domain.ErrInvalidArgument},
		{name: "a free bet spends the reward and names our campaign", given: []decision{grant(grantOf("rw-1"))},
			when: bet("fb-1", amt("0"), spends("rw-1"), inRound("r1")), typ: domain.EventBetPlaced,
			check: func(t *testing.T, e domain.Event, r domain.Reader) {
				rec, _ := r.Record(domain.RewardKey(client, "rw-1"))
				round, _ := r.Record(domain.RoundKey(client, provider, "r1"))
				if rec.Used != 1 || round.Reward != "rw-1" || round.Campaign != "spring" {
					t.Errorf("reward %+v, round %+v", rec, round)
				}
				if e.Data.CampaignID != "spring" || e.Data.RewardID != "rw-1" || !e.Data.Promo {
					t.Errorf("event data = %+v", e.Data)
				}
			}},
		{name: "a win in the free round is the reward's promo win, named or not",
			given: []decision{fund("5.00"), grant(grantOf("rw-1")), bet("fb-1", amt("0"), spends("rw-1"), inRound("r1"))},
			when:  win("w-1", amt("2.50"), "", inRound("r1")), typ: domain.EventWinCredited,
			check: func(t *testing.T, e domain.Event, _ domain.Reader) {
				if !e.Data.Promo || e.Data.RewardID != "rw-1" || e.Data.CampaignID != "spring" {
					t.Errorf("event data = %+v", e.Data)
				}
			}},
		{name: "used up", given: []decision{grant(grantOf("rw-1", func(g *domain.RewardGrant) { g.FreeBets = 1 })),
			bet("fb-1", amt("0"), spends("rw-1"))},
			when: bet("fb-2", amt("0"), spends("rw-1")), err: domain.ErrRewardNotActive},
		{name: "another player's reward", given: []decision{grant(grantOf("rw-1"))},
			when: bet("fb-1", amt("0"), spends("rw-1"), by(stranger)), err: domain.ErrPlayerMismatch},
		{name: "another game", given: []decision{grant(grantOf("rw-1"))},
			when: bet("fb-1", amt("0"), spends("rw-1"), gameWith(func(g *domain.GameTx) { g.Game = "other" })),
			err:  domain.ErrRewardNotActive},
		{name: "after its validity", given: []decision{grant(grantOf("rw-1"))},
			when: at(t0.Add(25*time.Hour), bet("fb-1", amt("0"), spends("rw-1"))), err: domain.ErrRewardNotActive},
		{name: "a provider's own reward is booked as before", when: bet("fb-1", amt("0"), spends("their-7")),
			typ: domain.EventBetPlaced, check: func(t *testing.T, e domain.Event, _ domain.Reader) {
				if e.Data.RewardID != "their-7" || e.Data.CampaignID != "" {
					t.Errorf("event data = %+v", e.Data)
				}
			}},
		{name: "a rolled-back free bet gives its free bet back",
			given: []decision{grant(grantOf("rw-1")), bet("fb-1", amt("0"), spends("rw-1"), inRound("r1"))},
			when:  rollback("rb-1", "fb-1", inRound("r1")), typ: domain.EventBetRolledBack,
			check: func(t *testing.T, _ domain.Event, r domain.Reader) {
				if rec, _ := r.Record(domain.RewardKey(client, "rw-1")); rec.Used != 0 {
					t.Errorf("used = %d, want 0", rec.Used)
				}
			}},
		{name: "cancel an unused reward", given: []decision{grant(grantOf("rw-1"))}, when: endReward("rw-1", false),
			typ: domain.EventRewardCancelled, check: func(t *testing.T, e domain.Event, r domain.Reader) {
				rec, _ := r.Record(domain.RewardKey(client, "rw-1"))
				if rec.State != domain.RewardCancelled || e.Data.FreeBets != 3 {
					t.Errorf("record %+v, event %+v", rec, e.Data)
				}
			}},
		{name: "a used reward is not cancelled",
			given: []decision{grant(grantOf("rw-1")), bet("fb-1", amt("0"), spends("rw-1"))},
			when:  endReward("rw-1", false), err: domain.ErrRewardNotActive},
		{name: "a cancelled reward takes no free bet", given: []decision{grant(grantOf("rw-1")), endReward("rw-1", false)},
			when: bet("fb-1", amt("0"), spends("rw-1")), err: domain.ErrRewardNotActive},
		{name: "cancel an unknown reward", when: endReward("rw-9", false), err: domain.ErrNotFound},
		{name: "expire before the end", given: []decision{grant(grantOf("rw-1"))}, when: endReward("rw-1", true),
			err: domain.ErrRewardNotActive},
		{name: "expire what is left after the end",
			given: []decision{grant(grantOf("rw-1")), bet("fb-1", amt("0"), spends("rw-1"))},
			when:  at(t0.Add(25*time.Hour), endReward("rw-1", true)), typ: domain.EventRewardExpired,
			check: func(t *testing.T, e domain.Event, _ domain.Reader) {
				if e.Data.FreeBets != 2 {
					t.Errorf("free_bets = %d, want the 2 left", e.Data.FreeBets)
				}
			}},
		{name: "a used-up reward does not expire", given: []decision{
			grant(grantOf("rw-1", func(g *domain.RewardGrant) { g.FreeBets = 1 })), bet("fb-1", amt("0"), spends("rw-1"))},
			when: at(t0.Add(25*time.Hour), endReward("rw-1", true)), err: domain.ErrRewardNotActive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := given(t, tt.given...)
			_, e, err := h.when(tt.when)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if err != nil {
				return
			}
			if e.Type != tt.typ {
				t.Fatalf("type = %s, want %s", e.Type, tt.typ)
			}
			if tt.check != nil {
				tt.check(t, e, h.v)
			}
		})
	}
}
