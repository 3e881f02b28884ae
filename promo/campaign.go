package promo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// Bounds of a campaign.
const (
	MaxCampaignGames    = 50
	MaxFreeBets         = 10000
	MaxCampaignNameLen  = 200
	MaxGrantsPerRequest = 500
)

// Campaign is an operator's free-bet campaign: the terms every reward of it
// grants. Its id is the operator's.
type Campaign struct {
	ClientID   string
	ID         string
	Name       string
	ProviderID string
	Games      []string // our game ids
	BetValue   domain.Money
	FreeBets   int64 // per reward
	ValidFrom  time.Time
	ValidUntil time.Time
	// ProviderRefs maps a game to the provider's id of the campaign for it,
	// where its promotion API made one.
	ProviderRefs map[string]string
	// Recorded is true when the provider has no promotion API here: the
	// campaign and its rewards exist on our side only.
	Recorded  bool
	CreatedAt time.Time
}

// Request is the campaign's fingerprint: what a retried creation must
// repeat.
func (c Campaign) Request() map[string]string {
	return map[string]string{
		"name": c.Name, "provider": c.ProviderID, "games": strings.Join(c.Games, ","),
		"currency": c.BetValue.Currency().Code(), "bet_value": c.BetValue.String(),
		"free_bets": strconv.FormatInt(c.FreeBets, 10), "valid_from": c.ValidFrom.UTC().Format(time.RFC3339),
		"valid_until": c.ValidUntil.UTC().Format(time.RFC3339),
	}
}

// CampaignInput is what an operator sends to create a campaign.
type CampaignInput struct {
	ID, Name, ProviderID string
	Games                []string
	Currency             string
	BetValue             string // decimal text
	FreeBets             int64
	ValidFrom            time.Time // zero: now
	ValidUntil           time.Time
}

// Reward is a reward as the ledger holds it.
type Reward struct {
	ClientID, ID, CampaignID, PlayerID, ProviderID, GameID string
	BetValue                                               domain.Money
	FreeBets, Used                                         int64
	State                                                  string // domain.Reward*
	ValidUntil                                             time.Time
	ProviderRef                                            string
	GrantedAt                                              time.Time
	Position                                               int64 // of the grant event
}

// Left is how many free bets are left to use.
func (r Reward) Left() int64 { return max(r.FreeBets-r.Used, 0) }

// Grant is a reward the provider granted (or, for a provider without a
// promotion API, that we are about to book), kept before the ledger books
// it.
type Grant struct {
	ClientID, RewardID, CampaignID string
	Request                        map[string]string
	ProviderRef                    string
}

// Store keeps campaigns and reads rewards and what the campaign report
// adds up (adapters/postgres/promostore).
type Store interface {
	ReportStore
	// CreateCampaign stores c. When the client already has a campaign of
	// that id it returns the stored one and created false, whatever its
	// terms (the caller compares).
	CreateCampaign(ctx context.Context, c Campaign) (stored Campaign, created bool, err error)
	// Campaign is the client's campaign id; domain.ErrNotFound when none.
	Campaign(ctx context.Context, clientID, id string) (Campaign, error)
	// Campaigns lists the client's campaigns, newest first.
	Campaigns(ctx context.Context, clientID string) ([]Campaign, error)
	// SaveGrant keeps g unless a grant of its reward id is kept already;
	// it returns the kept one.
	SaveGrant(ctx context.Context, g Grant) (Grant, error)
	// Grant is the kept grant of a reward; ok false when none.
	Grant(ctx context.Context, clientID, rewardID string) (g Grant, ok bool, err error)
	// Rewards lists the rewards of a client's campaign, in grant order.
	Rewards(ctx context.Context, clientID, campaignID string) ([]Reward, error)
	// Reward is one reward; domain.ErrNotFound when the ledger has none.
	Reward(ctx context.Context, clientID, rewardID string) (Reward, error)
	// DueRewards are up to limit active rewards, of any client, whose
	// validity ended at or before now.
	DueRewards(ctx context.Context, now time.Time, limit int) ([]Reward, error)
	// ActiveReward is the oldest active reward with free bets left of the
	// player on the provider's game in currency, valid at now; ok false
	// when none.
	ActiveReward(ctx context.Context, clientID, providerID, playerID, gameID, currency string, now time.Time) (id string, ok bool, err error)
}

// Ledger books the rewards (*commands.Handler).
type Ledger interface {
	GrantReward(ctx context.Context, g domain.RewardGrant) (commands.Result, error)
	EndReward(ctx context.Context, e domain.RewardEnd, wallet domain.AccountID) (commands.Result, error)
}

// Catalog is what a campaign checks: the provider, its route and games.
type Catalog interface {
	Provider(ctx context.Context, id string) (gateway.Provider, error)
	ProviderRoute(ctx context.Context, id string) (gateway.ProviderRoute, error)
	Game(ctx context.Context, id string) (gateway.Game, error)
}

// Clock tells the time.
type Clock interface{ Now() time.Time }

// Service runs campaigns: it checks them against the catalog, asks the
// provider's own promotion API first where it has one, and books each
// reward's grant, cancellation and expiry in the ledger.
type Service struct {
	store     Store
	ledger    Ledger
	catalog   Catalog
	providers ProviderPromotions // nil: every campaign is recorded only
	clock     Clock
}

// NewService returns a Service. providers may be nil.
func NewService(store Store, ledger Ledger, catalog Catalog, providers ProviderPromotions, clock Clock) *Service {
	return &Service{store: store, ledger: ledger, catalog: catalog, providers: providers, clock: clock}
}

// FieldError is an input the campaign rules refuse (the API answers 400
// naming the field).
type FieldError = gateway.FieldError

func fieldErr(field, format string, args ...any) error {
	return &gateway.FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// ErrCampaignConflict is a creation under a campaign id the client already
// used for other terms.
var ErrCampaignConflict = errors.New("campaign id already used with other terms")

// CreateCampaign creates the client's campaign in, at the provider first
// where its protocol has a promotion API (one provider campaign per game).
// A retry with the same terms answers the stored campaign (created false)
// without asking the provider again.
func (s *Service) CreateCampaign(ctx context.Context, clientID string, in CampaignInput) (Campaign, bool, error) {
	c, err := s.checkCampaign(ctx, clientID, in)
	if err != nil {
		return Campaign{}, false, err
	}
	if old, err := s.store.Campaign(ctx, clientID, c.ID); err == nil {
		return s.sameCampaign(old, c)
	} else if !errors.Is(err, domain.ErrNotFound) {
		return Campaign{}, false, err
	}
	target, supported, err := s.target(ctx, c.ProviderID)
	if err != nil {
		return Campaign{}, false, err
	}
	c.ProviderRefs, c.Recorded = map[string]string{}, !supported
	if supported {
		for _, game := range c.Games {
			code, err := s.gameCode(ctx, game)
			if err != nil {
				return Campaign{}, false, err
			}
			ref, err := s.providers.CreateCampaign(ctx, target, ProviderCampaign{CampaignID: c.ID, Name: c.Name,
				GameCode: code, Currency: c.BetValue.Currency(), BetValue: c.BetValue, FreeBets: int(c.FreeBets),
				ValidFrom: c.ValidFrom, ValidUntil: c.ValidUntil})
			if err != nil {
				return Campaign{}, false, fmt.Errorf("campaign %s at provider %s, game %s: %w", c.ID, c.ProviderID, game, err)
			}
			c.ProviderRefs[game] = ref
		}
	}
	stored, created, err := s.store.CreateCampaign(ctx, c)
	if err != nil {
		return Campaign{}, false, err
	}
	if !created { // a concurrent creation won
		return s.sameCampaign(stored, c)
	}
	return stored, true, nil
}

func (s *Service) sameCampaign(old, c Campaign) (Campaign, bool, error) {
	want, got := c.Request(), old.Request()
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range want {
			if !yield(k) {
				return
			}
		}
	}) {
		if want[k] != got[k] {
			return Campaign{}, false, &domain.IdempotencyConflictError{Key: "campaign " + c.ID, Field: k,
				Original: got[k], Given: want[k]}
		}
	}
	return old, false, nil
}

// checkCampaign validates in and resolves it against the catalog.
func (s *Service) checkCampaign(ctx context.Context, clientID string, in CampaignInput) (Campaign, error) {
	if err := domain.ValidateID("campaign_id", in.ID); err != nil {
		return Campaign{}, fieldErr("campaign_id", "%v", err)
	}
	name := strings.TrimSpace(in.Name)
	if name == "" {
		name = in.ID
	}
	if err := domain.CheckText("name", name, MaxCampaignNameLen); err != nil {
		return Campaign{}, fieldErr("name", "%v", err)
	}
	if err := domain.ValidateID("provider", in.ProviderID); err != nil {
		return Campaign{}, fieldErr("provider", "%v", err)
	}
	if len(in.Games) == 0 || len(in.Games) > MaxCampaignGames {
		return Campaign{}, fieldErr("games", "games must list 1 to %d game ids", MaxCampaignGames)
	}
	cur, err := domain.ParseCurrency(in.Currency)
	if err != nil {
		return Campaign{}, fieldErr("currency", "currency %q is not configured", in.Currency)
	}
	bet, err := domain.ParseMoney(in.BetValue, cur)
	if err != nil {
		return Campaign{}, fieldErr("bet_value", "bet_value %q: %v", in.BetValue, err)
	}
	if !bet.IsPositive() {
		return Campaign{}, fieldErr("bet_value", "bet_value must be greater than zero")
	}
	if in.FreeBets < 1 || in.FreeBets > MaxFreeBets {
		return Campaign{}, fieldErr("free_bets", "free_bets must be 1 to %d", MaxFreeBets)
	}
	now := s.clock.Now().UTC().Truncate(time.Second)
	from := in.ValidFrom
	if from.IsZero() {
		from = now
	}
	from, until := from.UTC().Truncate(time.Second), in.ValidUntil.UTC().Truncate(time.Second)
	switch {
	case in.ValidUntil.IsZero():
		return Campaign{}, fieldErr("valid_until", "valid_until is required")
	case !until.After(from):
		return Campaign{}, fieldErr("valid_until", "valid_until must be after valid_from")
	case !until.After(now):
		return Campaign{}, fieldErr("valid_until", "valid_until has passed")
	}
	p, err := s.catalog.Provider(ctx, in.ProviderID)
	if err != nil {
		return Campaign{}, fmt.Errorf("provider %s: %w", in.ProviderID, err)
	}
	seen := map[string]bool{}
	for _, id := range in.Games {
		if seen[id] {
			return Campaign{}, fieldErr("games", "game %q is listed twice", id)
		}
		seen[id] = true
		g, err := s.catalog.Game(ctx, id)
		if err != nil {
			return Campaign{}, fmt.Errorf("game %s: %w", id, err)
		}
		if g.ProviderID != p.ID {
			return Campaign{}, fieldErr("games", "game %s is provider %s's, not %s's", id, g.ProviderID, p.ID)
		}
	}
	return Campaign{ClientID: clientID, ID: in.ID, Name: name, ProviderID: p.ID, Games: slices.Clone(in.Games),
		BetValue: bet, FreeBets: in.FreeBets, ValidFrom: from, ValidUntil: until}, nil
}

// target is the provider's promotion API; supported false when its
// protocol has none here.
func (s *Service) target(ctx context.Context, providerID string) (Target, bool, error) {
	p, err := s.catalog.Provider(ctx, providerID)
	if err != nil {
		return Target{}, false, fmt.Errorf("provider %s: %w", providerID, err)
	}
	if s.providers == nil || !s.providers.Supports(p.WalletProtocol) {
		return Target{}, false, nil
	}
	route, err := s.catalog.ProviderRoute(ctx, providerID)
	if err != nil {
		return Target{}, false, fmt.Errorf("provider %s route: %w", providerID, err)
	}
	// The route's listing carries no secret: the credentials the calls are
	// signed with come from the provider, as a launch's do.
	route.Secret, route.LaunchSecret = p.Secret, p.LaunchSecret
	return Target{Route: route, Protocol: p.WalletProtocol}, true, nil
}

func (s *Service) gameCode(ctx context.Context, id string) (string, error) {
	g, err := s.catalog.Game(ctx, id)
	if err != nil {
		return "", fmt.Errorf("game %s: %w", id, err)
	}
	if g.Code != "" {
		return g.Code, nil
	}
	return g.ID, nil
}

// Campaign is the client's campaign id.
func (s *Service) Campaign(ctx context.Context, clientID, id string) (Campaign, error) {
	if err := possibleID("campaign", id); err != nil {
		return Campaign{}, err
	}
	return s.store.Campaign(ctx, clientID, id)
}

// possibleID refuses, as not found, an id no campaign or reward can have
// (every one was checked with domain.ValidateID when it was made): a
// path's NUL byte or stray character never reaches the store.
func possibleID(what, id string) error {
	if domain.ValidateID(what, id) != nil {
		return fmt.Errorf("%s %q: %w", what, gateway.ClipValue(id), domain.ErrNotFound)
	}
	return nil
}

// Campaigns lists the client's campaigns.
func (s *Service) Campaigns(ctx context.Context, clientID string) ([]Campaign, error) {
	return s.store.Campaigns(ctx, clientID)
}

// Rewards lists a campaign's rewards with their use.
func (s *Service) Rewards(ctx context.Context, clientID, campaignID string) ([]Reward, error) {
	if _, err := s.Campaign(ctx, clientID, campaignID); err != nil {
		return nil, err
	}
	return s.store.Rewards(ctx, clientID, campaignID)
}
