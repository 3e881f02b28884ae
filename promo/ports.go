package promo

import (
	"context"
	"time"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// Promotion API protocols: a provider's own API for granting free bets,
// chosen by its wallet protocol (docs/promotions.md).
const (
	// ProtocolCaleta is the Freebets API of the Caleta Gaming System API
	// (prepaids, campaigns, rewards create and cancel), at the provider's
	// launch endpoints, signed RSA-SHA256 with our launch key as its Games
	// API is.
	ProtocolCaleta = "caleta"
	// ProtocolTBB is The Bet Brothers' supplier Free Spin API (create,
	// cancel), at the provider's launch endpoints, signed HMAC-SHA256 with
	// the provider's secret as its Game Events are.
	ProtocolTBB = "tbb"
)

// Target is the provider a promotion call goes to: its launch route
// (endpoints, timeout, breakers, our credentials) and the wallet protocol
// that names its promotion API.
type Target struct {
	Route    gateway.ProviderRoute
	Protocol string // the provider's wallet protocol (gateway.WalletProtocol*)
}

// ProviderCampaign is a campaign as a provider's API is asked to create it,
// for one game.
type ProviderCampaign struct {
	CampaignID string // ours (the operator's id)
	Name       string
	GameCode   string // the provider's code of the game
	Currency   domain.Currency
	BetValue   domain.Money // of one free bet
	FreeBets   int          // per reward
	ValidFrom  time.Time
	ValidUntil time.Time
}

// ProviderGrant is one reward as a provider's API is asked to grant it.
type ProviderGrant struct {
	CampaignID string // ours
	// CampaignRef is the provider's id of the campaign for this game, as
	// CreateCampaign answered it ("" when it has none).
	CampaignRef string
	RewardID    string // ours (the operator's id); Caleta's reward_uuid
	PlayerID    string
	// SubPartnerID is the client the player belongs to (Caleta's
	// sub_partner_id).
	SubPartnerID string
	GameCode     string
	Currency     domain.Currency
	BetValue     domain.Money
	FreeBets     int
	ValidFrom    time.Time
	ValidUntil   time.Time
}

// ProviderCancel is one reward as a provider's API is asked to cancel it.
type ProviderCancel struct {
	RewardID string // ours
	// RewardRef is the provider's id of the reward, as GrantReward
	// answered it ("" when it has none).
	RewardRef string
	PlayerID  string
	GameCode  string
}

// ProviderPromotions is a provider's own promotion API. A provider whose
// protocol has none has its campaigns recorded on our side only.
//
// A refusal by the provider is a *gateway.ProviderRejectedError; a
// provider no endpoint of which could answer is a
// *gateway.ProviderUnavailableError (the launch's errors, so the API maps
// them the same way).
type ProviderPromotions interface {
	// Supports reports whether protocol has a promotion API here.
	Supports(protocol string) bool
	// CreateCampaign creates c at the provider and returns its id of it.
	CreateCampaign(ctx context.Context, t Target, c ProviderCampaign) (ref string, err error)
	// GrantReward grants g at the provider and returns its id of the reward.
	GrantReward(ctx context.Context, t Target, g ProviderGrant) (ref string, err error)
	// CancelReward cancels an unused reward at the provider.
	CancelReward(ctx context.Context, t Target, c ProviderCancel) error
}
