package commands

import (
	"context"

	"github.com/pitboss/pitboss/domain"
)

// GrantReward grants a free-bet reward (domain.DecideRewardGrant): one
// promo.reward_granted.v1 on the player's wallet stream, no money moved.
// Retrying with the same reward id and terms answers the original grant;
// other terms under the same id are an *domain.IdempotencyConflictError.
func (h *Handler) GrantReward(ctx context.Context, g domain.RewardGrant) (Result, error) {
	account := domain.PlayerWallet(g.Client, g.Player, g.BetValue.Currency())
	return h.run(ctx, domain.RewardKey(g.Client, g.Reward), g.Request(), []domain.AccountID{account}, nil,
		func(r domain.Reader, env domain.Env) (domain.Change, error) {
			return domain.DecideRewardGrant(r, g, env)
		})
}

// EndReward cancels or expires a reward (domain.DecideRewardEnd). A reward
// ends once: a second call answers the first end, whatever it was.
func (h *Handler) EndReward(ctx context.Context, e domain.RewardEnd, wallet domain.AccountID) (Result, error) {
	req := map[string]string{"kind": "reward_end", "reward_id": e.Reward}
	return h.run(ctx, domain.RewardEndKey(e.Client, e.Reward), req, []domain.AccountID{wallet},
		[]string{domain.RewardKey(e.Client, e.Reward)},
		func(r domain.Reader, env domain.Env) (domain.Change, error) {
			return domain.DecideRewardEnd(r, e, env)
		})
}
