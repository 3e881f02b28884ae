package domain

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Free-bet rewards (docs/promotions.md). An operator's campaign grants a
// player a number of free bets of one value on a provider's game, valid
// until a time. The reward's record (TxReward) counts what was used; its
// grant, cancellation and expiry are ledger events that move no money, and
// each free bet is the promo bet that spends it.
const (
	// EventRewardGranted grants a reward: free_bets free bets of amount
	// each, until expires_at. Nothing moves.
	EventRewardGranted EventType = "promo.reward_granted.v1"
	// EventRewardCancelled cancels an unused reward: free_bets is what was
	// withdrawn. Nothing moves.
	EventRewardCancelled EventType = "promo.reward_cancelled.v1"
	// EventRewardExpired ends a reward at its expiry: free_bets is what
	// was left unused. Nothing moves.
	EventRewardExpired EventType = "promo.reward_expired.v1"
)

// TxReward is the record of a free-bet reward.
const TxReward TxKind = "reward"

// Reward states (TxRecord.State of a TxReward).
const (
	RewardActive    = "active"
	RewardCancelled = "cancelled"
	RewardExpired   = "expired"
)

// ErrRewardNotActive refuses a free bet on, or a cancellation of, a reward
// that is cancelled, expired, used up, or (to cancel) already used.
var ErrRewardNotActive = errors.New("reward is not active")

// RewardKey is the record key of a client's reward (the operator's id).
func RewardKey(client, reward string) string { return "reward|" + client + "|" + reward }

// RewardGrant is a reward to grant: the campaign's terms for one player.
type RewardGrant struct {
	Client, Player, Campaign, Reward, Provider, Game string
	// ProviderRef is the provider's id of the reward where its promotion
	// API gave one ("" otherwise).
	ProviderRef string
	BetValue    Money // of one free bet
	FreeBets    int64
	ValidFrom   time.Time
	ValidUntil  time.Time
}

// Request is the grant's fingerprint: what a retry must repeat.
func (g RewardGrant) Request() map[string]string {
	return map[string]string{
		"kind": string(TxReward), "player_id": g.Player, "campaign_id": g.Campaign, "provider": g.Provider,
		"game_id": g.Game, "currency": g.BetValue.Currency().Code(), "bet_value": g.BetValue.String(),
		"free_bets": strconv.FormatInt(g.FreeBets, 10), "valid_from": g.ValidFrom.UTC().Format(time.RFC3339),
		"valid_until": g.ValidUntil.UTC().Format(time.RFC3339),
	}
}

// DecideRewardGrant grants g: a promo.reward_granted.v1 on the player's
// wallet stream and the reward's record. The command layer answers a retry
// with the original grant; a new grant under a used reward id is refused.
func DecideRewardGrant(r Reader, g RewardGrant, env Env) (Change, error) {
	for _, f := range []struct{ name, v string }{{"client_id", g.Client}, {"player_id", g.Player},
		{"campaign_id", g.Campaign}, {"reward_id", g.Reward}, {"provider", g.Provider}, {"game_id", g.Game}} {
		if err := ValidateID(f.name, f.v); err != nil {
			return Change{}, err
		}
	}
	if g.ProviderRef != "" {
		if err := ValidateID("provider_reward_ref", g.ProviderRef); err != nil {
			return Change{}, err
		}
	}
	cur := g.BetValue.Currency()
	switch {
	case cur.IsZero():
		return Change{}, ErrUnknownCurrency
	case g.BetValue.minor <= 0:
		return Change{}, fmt.Errorf("bet value %s must be greater than zero: %w", g.BetValue, ErrInvalidAmount)
	case g.FreeBets < 1:
		return Change{}, fmt.Errorf("free bets %d must be at least 1: %w", g.FreeBets, ErrInvalidArgument)
	case !g.ValidUntil.After(g.ValidFrom):
		return Change{}, fmt.Errorf("reward valid until %s, not after %s: %w", g.ValidUntil.UTC().Format(time.RFC3339),
			g.ValidFrom.UTC().Format(time.RFC3339), ErrInvalidArgument)
	case !env.Now.Before(g.ValidUntil):
		return Change{}, fmt.Errorf("reward valid until %s, which has passed: %w",
			g.ValidUntil.UTC().Format(time.RFC3339), ErrInvalidArgument)
	}
	key := RewardKey(g.Client, g.Reward)
	if err := unusedID(r, key, "reward", g.Reward); err != nil {
		return Change{}, err
	}
	player := PlayerWallet(g.Client, g.Player, cur)
	d := EventData{ClientID: g.Client, PlayerID: g.Player, Provider: g.Provider, GameID: g.Game,
		Currency: cur.code, Amount: g.BetValue.String(), FreeBets: g.FreeBets,
		BalanceAfter: FormatMinor(r.Account(player).Balance, cur.Exponent()), Promo: true,
		CampaignID: g.Campaign, RewardID: g.Reward, ProviderRef: g.ProviderRef,
		ExpiresAt: g.ValidUntil.UTC().Format(time.RFC3339), Postings: []Posting{}}
	rec := TxRecord{Key: key, Kind: TxReward, Account: player, PlayerID: g.Player, Currency: cur.code,
		Amount: g.BetValue.minor, EventID: env.EventID, Campaign: g.Campaign, Reward: g.Reward,
		FreeBets: g.FreeBets, State: RewardActive, ValidUntil: g.ValidUntil.UTC().Format(time.RFC3339),
		Request: g.Request()}
	return Change{Event: newEvent(EventRewardGranted, player, env, d), Records: []TxRecord{rec}}, nil
}

// RewardEnd ends a reward: a cancellation (Expire false) or its expiry.
type RewardEnd struct {
	Client, Reward string
	Expire         bool
	// Reason is said in the event (the operator's, or the expiry's).
	Reason string
}

// RewardEndKey is the idempotency key of a reward's end: a reward ends once.
func RewardEndKey(client, reward string) string { return "rewardend|" + client + "|" + reward }

// DecideRewardEnd cancels or expires the reward e names. A cancellation
// takes an active reward none of whose free bets was used; an expiry, an
// active reward past its validity with free bets left. The event says how
// many free bets were withdrawn.
func DecideRewardEnd(r Reader, e RewardEnd, env Env) (Change, error) {
	if err := ValidateID("reward_id", e.Reward); err != nil {
		return Change{}, err
	}
	if err := CheckText("reason", e.Reason, MaxReasonLength); err != nil {
		return Change{}, err
	}
	rec, ok := r.Record(RewardKey(e.Client, e.Reward))
	if !ok || rec.Kind != TxReward {
		return Change{}, fmt.Errorf("reward %s: %w", e.Reward, ErrNotFound)
	}
	left := rec.FreeBets - rec.Used
	until, err := time.Parse(time.RFC3339, rec.ValidUntil)
	if err != nil {
		return Change{}, fmt.Errorf("reward %s valid until %q: %w", e.Reward, rec.ValidUntil, ErrInvalidArgument)
	}
	typ, state := EventRewardCancelled, RewardCancelled
	switch {
	case rec.State != RewardActive:
		return Change{}, fmt.Errorf("reward %s is %s: %w", e.Reward, rec.State, ErrRewardNotActive)
	case left <= 0:
		return Change{}, fmt.Errorf("reward %s is used up: %w", e.Reward, ErrRewardNotActive)
	case e.Expire && env.Now.Before(until):
		return Change{}, fmt.Errorf("reward %s is valid until %s: %w", e.Reward, rec.ValidUntil, ErrRewardNotActive)
	case e.Expire:
		typ, state = EventRewardExpired, RewardExpired
	case rec.Used > 0:
		return Change{}, fmt.Errorf("reward %s has %d free bets used: only an unused reward is cancelled: %w",
			e.Reward, rec.Used, ErrRewardNotActive)
	}
	cur, err := ParseCurrency(rec.Currency)
	if err != nil {
		return Change{}, fmt.Errorf("reward %s: %w", e.Reward, err)
	}
	d := EventData{ClientID: e.Client, PlayerID: rec.PlayerID, Provider: rec.Request["provider"],
		GameID: rec.Request["game_id"], Currency: cur.code, Amount: FormatMinor(rec.Amount, cur.Exponent()),
		FreeBets: left, BalanceAfter: FormatMinor(r.Account(rec.Account).Balance, cur.Exponent()), Promo: true,
		CampaignID: rec.Campaign, RewardID: e.Reward, Reason: e.Reason, Postings: []Posting{}}
	own := TxRecord{Key: RewardEndKey(e.Client, e.Reward), Kind: TxKind(state), Account: rec.Account,
		PlayerID: rec.PlayerID, Currency: rec.Currency, EventID: env.EventID, Reward: e.Reward}
	rec.State = state
	return Change{Event: newEvent(typ, rec.Account, env, d), Records: []TxRecord{own, rec}}, nil
}

// spendReward links a promo bet to the reward it names, when the reward is
// one the ledger granted: the bet must be the reward's (player, provider,
// currency, game when the call names one), the reward active, valid and
// not used up. It returns the reward's record with one more free bet used
// and g naming the reward's campaign; ok is false for a reward the ledger
// never granted (a provider's own campaign), which is booked as before.
func spendReward(r Reader, g GameTx, now time.Time) (GameTx, TxRecord, bool, error) {
	if !g.Promo || g.Reward == "" {
		return g, TxRecord{}, false, nil
	}
	rec, ok := r.Record(RewardKey(g.Client, g.Reward))
	if !ok || rec.Kind != TxReward {
		return g, TxRecord{}, false, nil
	}
	until, err := time.Parse(time.RFC3339, rec.ValidUntil)
	switch {
	case rec.PlayerID != g.Player:
		return g, rec, false, fmt.Errorf("reward %s: %w", g.Reward, ErrPlayerMismatch)
	case rec.Request["provider"] != g.Provider:
		return g, rec, false, fmt.Errorf("reward %s is for provider %s: %w: %w", g.Reward, rec.Request["provider"],
			ErrRewardNotActive, ErrInvalidArgument)
	case rec.Currency != g.Currency.code:
		return g, rec, false, fmt.Errorf("reward %s in %s: %w", g.Reward, rec.Currency, ErrCurrencyMismatch)
	case g.Game != "" && rec.Request["game_id"] != "" && rec.Request["game_id"] != g.Game:
		return g, rec, false, fmt.Errorf("reward %s is for game %s: %w: %w", g.Reward, rec.Request["game_id"],
			ErrRewardNotActive, ErrInvalidArgument)
	case rec.State != RewardActive:
		return g, rec, false, fmt.Errorf("reward %s is %s: %w: %w", g.Reward, rec.State, ErrRewardNotActive, ErrInvalidArgument)
	case rec.Used >= rec.FreeBets:
		return g, rec, false, fmt.Errorf("reward %s is used up: %w: %w", g.Reward, ErrRewardNotActive, ErrInvalidArgument)
	case err != nil || !now.Before(until):
		return g, rec, false, fmt.Errorf("reward %s expired at %s: %w: %w", g.Reward, rec.ValidUntil,
			ErrRewardNotActive, ErrInvalidArgument)
	}
	rec.Used++
	g.Campaign = rec.Campaign
	return g, rec, true, nil
}

// freeRound makes a win in a round whose bet spent a reward a promo win of
// that reward: the provider may not say so (The Bet Brothers' Game Events
// have no promotion fields), and the campaign is ours.
func freeRound(g GameTx, round TxRecord) GameTx {
	if round.Reward == "" || (g.Reward != "" && g.Reward != round.Reward) {
		return g
	}
	g.Promo, g.Reward, g.Campaign = true, round.Reward, round.Campaign
	return g
}
