package promo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/pitboss/pitboss/domain"
)

// GrantInput is one reward an operator grants: its own id, the player,
// and the game (required when the campaign has more than one).
type GrantInput struct {
	RewardID, PlayerID, GameID string
}

// GrantResult is the outcome of one grant of a request: the reward, or
// the error that refused it (nothing booked then).
type GrantResult struct {
	RewardID string
	Reward   Reward
	Created  bool // false: a retry answered with the original grant
	Err      error
}

// Grant grants each reward of in under the client's campaign, each on its
// own: the provider's promotion API is asked first where there is one, and
// a refusal there leaves nothing booked. A reward id already granted
// answers its original grant without asking the provider again.
func (s *Service) Grant(ctx context.Context, clientID, campaignID string, in []GrantInput) ([]GrantResult, error) {
	if len(in) == 0 || len(in) > MaxGrantsPerRequest {
		return nil, fieldErr("rewards", "rewards must list 1 to %d rewards", MaxGrantsPerRequest)
	}
	c, err := s.Campaign(ctx, clientID, campaignID)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for i, g := range in {
		if err := domain.ValidateID("reward_id", g.RewardID); err != nil {
			return nil, fieldErr(fmt.Sprintf("rewards[%d].reward_id", i), "%v", err)
		}
		if seen[g.RewardID] {
			return nil, fieldErr(fmt.Sprintf("rewards[%d].reward_id", i), "reward %s is listed twice", g.RewardID)
		}
		seen[g.RewardID] = true
		if err := domain.ValidateID("player_id", g.PlayerID); err != nil {
			return nil, fieldErr(fmt.Sprintf("rewards[%d].player_id", i), "%v", err)
		}
		if _, err := gameOf(c, g.GameID); err != nil {
			return nil, fieldErr(fmt.Sprintf("rewards[%d].game_id", i), "%v", err)
		}
	}
	out := make([]GrantResult, len(in))
	for i, g := range in {
		r, created, err := s.grantOne(ctx, c, g)
		out[i] = GrantResult{RewardID: g.RewardID, Reward: r, Created: created, Err: err}
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
	}
	return out, nil
}

func gameOf(c Campaign, game string) (string, error) {
	switch {
	case game == "" && len(c.Games) == 1:
		return c.Games[0], nil
	case game == "":
		return "", fmt.Errorf("campaign %s has %d games: name one", c.ID, len(c.Games))
	}
	for _, g := range c.Games {
		if g == game {
			return game, nil
		}
	}
	return "", fmt.Errorf("game %s is not one of campaign %s's", game, c.ID)
}

func (s *Service) grantOne(ctx context.Context, c Campaign, in GrantInput) (Reward, bool, error) {
	game, _ := gameOf(c, in.GameID)
	now := s.clock.Now()
	from := c.ValidFrom
	if now.After(from) {
		from = now.UTC().Truncate(time.Second)
	}
	g := domain.RewardGrant{Client: c.ClientID, Player: in.PlayerID, Campaign: c.ID, Reward: in.RewardID,
		Provider: c.ProviderID, Game: game, BetValue: c.BetValue, FreeBets: c.FreeBets,
		ValidFrom: c.ValidFrom, ValidUntil: c.ValidUntil}
	// Booked already: the ledger answers with the original (or refuses
	// other terms under the id), and the provider is not asked again.
	if _, err := s.store.Reward(ctx, c.ClientID, in.RewardID); err == nil {
		return s.book(ctx, g)
	} else if !errors.Is(err, domain.ErrNotFound) {
		return Reward{}, false, err
	}
	req := g.Request()
	kept, ok, err := s.store.Grant(ctx, c.ClientID, in.RewardID)
	if err != nil {
		return Reward{}, false, err
	}
	if ok {
		if !maps.Equal(kept.Request, req) || kept.CampaignID != c.ID {
			return Reward{}, false, conflict("reward "+in.RewardID, kept.Request, req)
		}
		g.ProviderRef = kept.ProviderRef
		return s.book(ctx, g)
	}
	if !now.Before(c.ValidUntil) {
		return Reward{}, false, fmt.Errorf("campaign %s ended at %s: %w", c.ID,
			c.ValidUntil.UTC().Format(time.RFC3339), domain.ErrRewardNotActive)
	}
	target, supported, err := s.target(ctx, c.ProviderID)
	if err != nil {
		return Reward{}, false, err
	}
	if supported {
		code, err := s.gameCode(ctx, game)
		if err != nil {
			return Reward{}, false, err
		}
		ref, err := s.providers.GrantReward(ctx, target, ProviderGrant{CampaignID: c.ID, CampaignRef: c.ProviderRefs[game],
			RewardID: in.RewardID, PlayerID: in.PlayerID, SubPartnerID: c.ClientID, GameCode: code,
			Currency: c.BetValue.Currency(), BetValue: c.BetValue, FreeBets: int(c.FreeBets), ValidFrom: from,
			ValidUntil: c.ValidUntil})
		if err != nil {
			return Reward{}, false, fmt.Errorf("reward %s at provider %s: %w", in.RewardID, c.ProviderID, err)
		}
		g.ProviderRef = ref
	}
	kept, err = s.store.SaveGrant(ctx, Grant{ClientID: c.ClientID, RewardID: in.RewardID, CampaignID: c.ID,
		Request: req, ProviderRef: g.ProviderRef})
	if err != nil {
		return Reward{}, false, err
	}
	if !maps.Equal(kept.Request, req) { // a concurrent grant of the id with other terms won
		return Reward{}, false, conflict("reward "+in.RewardID, kept.Request, req)
	}
	g.ProviderRef = kept.ProviderRef
	return s.book(ctx, g)
}

func conflict(key string, original, given map[string]string) error {
	for _, k := range []string{"player_id", "campaign_id", "game_id", "provider", "currency", "bet_value",
		"free_bets", "valid_from", "valid_until"} {
		if original[k] != given[k] {
			return &domain.IdempotencyConflictError{Key: key, Field: k, Original: original[k], Given: given[k]}
		}
	}
	return &domain.IdempotencyConflictError{Key: key, Field: "request"}
}

// book records the grant in the ledger (a retry answers the original) and
// reads the reward back.
func (s *Service) book(ctx context.Context, g domain.RewardGrant) (Reward, bool, error) {
	res, err := s.ledger.GrantReward(ctx, g)
	if err != nil {
		return Reward{}, false, fmt.Errorf("grant reward %s: %w", g.Reward, err)
	}
	r, err := s.store.Reward(ctx, g.Client, g.Reward)
	if err != nil {
		return Reward{}, false, fmt.Errorf("read reward %s: %w", g.Reward, err)
	}
	return r, !res.Replayed, nil
}

// Cancel cancels an unused reward of the client's campaign: at the
// provider first where it granted it (a refusal there, e.g. a reward the
// player already started, leaves it active), then in the ledger. A
// cancelled reward's cancellation answers it again.
func (s *Service) Cancel(ctx context.Context, clientID, campaignID, rewardID, reason string) (Reward, error) {
	if err := domain.CheckText("reason", reason, domain.MaxReasonLength); err != nil {
		return Reward{}, fieldErr("reason", "%v", err)
	}
	if err := possibleID("campaign", campaignID); err != nil {
		return Reward{}, err
	}
	if err := possibleID("reward", rewardID); err != nil {
		return Reward{}, err
	}
	r, err := s.store.Reward(ctx, clientID, rewardID)
	if err != nil {
		return Reward{}, err
	}
	if r.CampaignID != campaignID {
		return Reward{}, fmt.Errorf("reward %s of campaign %s: %w", rewardID, campaignID, domain.ErrNotFound)
	}
	if r.State == domain.RewardCancelled {
		return r, nil
	}
	if r.State != domain.RewardActive || r.Used > 0 {
		return Reward{}, fmt.Errorf("reward %s is %s with %d of %d free bets used: only an unused active reward is cancelled: %w",
			rewardID, r.State, r.Used, r.FreeBets, domain.ErrRewardNotActive)
	}
	c, err := s.store.Campaign(ctx, clientID, campaignID)
	if err != nil {
		return Reward{}, err
	}
	target, supported, err := s.target(ctx, c.ProviderID)
	if err != nil {
		return Reward{}, err
	}
	if supported {
		code, err := s.gameCode(ctx, r.GameID)
		if err != nil {
			return Reward{}, err
		}
		if err := s.providers.CancelReward(ctx, target, ProviderCancel{RewardID: rewardID, RewardRef: r.ProviderRef,
			PlayerID: r.PlayerID, GameCode: code}); err != nil {
			return Reward{}, fmt.Errorf("cancel reward %s at provider %s: %w", rewardID, c.ProviderID, err)
		}
	}
	if reason == "" {
		reason = "cancelled by the operator"
	}
	if _, err := s.ledger.EndReward(ctx, domain.RewardEnd{Client: clientID, Reward: rewardID, Reason: reason},
		domain.PlayerWallet(clientID, r.PlayerID, r.BetValue.Currency())); err != nil {
		return Reward{}, fmt.Errorf("cancel reward %s: %w", rewardID, err)
	}
	return s.store.Reward(ctx, clientID, rewardID)
}

// ExpireDue books the expiry of up to limit rewards whose validity ended,
// with free bets left: the provider expires them on its side at the same
// end, so it is not asked. It returns how many it expired.
func (s *Service) ExpireDue(ctx context.Context, limit int) (int, error) {
	due, err := s.store.DueRewards(ctx, s.clock.Now(), limit)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range due {
		if r.Left() == 0 {
			continue
		}
		_, err := s.ledger.EndReward(ctx, domain.RewardEnd{Client: r.ClientID, Reward: r.ID, Expire: true,
			Reason: "expired"}, domain.PlayerWallet(r.ClientID, r.PlayerID, r.BetValue.Currency()))
		switch {
		case errors.Is(err, domain.ErrRewardNotActive):
			continue // used up or ended meanwhile
		case err != nil:
			return n, fmt.Errorf("expire reward %s of %s: %w", r.ID, r.ClientID, err)
		}
		n++
	}
	return n, nil
}

// FreeSpin is the reward a bet of nothing spends when its protocol cannot
// name one (The Bet Brothers' Game Events): the player's oldest active
// reward on the provider's game; ok false when none.
func (s *Service) FreeSpin(ctx context.Context, clientID, providerID, playerID, gameID, currency string) (string, bool, error) {
	return s.store.ActiveReward(ctx, clientID, providerID, playerID, gameID, currency, s.clock.Now())
}

// DefaultExpiryInterval is how often RunExpiry looks for ended rewards.
const DefaultExpiryInterval = time.Minute

// RunExpiry expires ended rewards every interval (DefaultExpiryInterval
// when zero) until ctx ends. Several instances may run it: a reward ends
// once in the ledger, and the other's attempt answers that end.
func (s *Service) RunExpiry(ctx context.Context, interval time.Duration, onError func(error)) error {
	if interval <= 0 {
		interval = DefaultExpiryInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		for {
			n, err := s.ExpireDue(ctx, 100)
			if err != nil && ctx.Err() == nil && onError != nil {
				onError(err)
			}
			if err != nil || n < 100 {
				break
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
