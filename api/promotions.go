package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/promo"
)

// registerPromotionRoutes adds free-bet campaigns (docs/promotions.md) to
// the authenticated /api/v1 group.
func (s *Server) registerPromotionRoutes(v1 *echo.Group) {
	read := []echo.MiddlewareFunc{requireScope(gateway.ScopePromotionsRead), s.requirePromotions}
	write := []echo.MiddlewareFunc{requireScope(gateway.ScopePromotionsWrite), s.requirePromotions}
	v1.POST("/campaigns", s.createCampaign, write...)
	v1.GET("/campaigns", s.listCampaigns, read...)
	v1.GET("/campaigns/:id", s.getCampaign, read...)
	v1.POST("/campaigns/:id/rewards", s.grantRewards, write...)
	v1.GET("/campaigns/:id/rewards", s.listRewards, read...)
	v1.POST("/campaigns/:id/rewards/:reward_id/cancel", s.cancelReward, write...)
}

// requirePromotions answers 503 when the server was built without them.
func (s *Server) requirePromotions(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.deps.Promotions == nil {
			return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "promotions are not configured on this server")
		}
		return next(c)
	}
}

// campaignBody is POST /api/v1/campaigns.
type campaignBody struct {
	CampaignID string            `json:"campaign_id"`
	Name       string            `json:"name"`
	Provider   string            `json:"provider"`
	Games      []string          `json:"games"`
	Currency   string            `json:"currency"`
	BetValue   domain.AmountText `json:"bet_value"`
	FreeBets   int64             `json:"free_bets"`
	ValidFrom  *time.Time        `json:"valid_from"`
	ValidUntil *time.Time        `json:"valid_until"`
}

// campaignView is a campaign as the API shows it.
type campaignView struct {
	CampaignID string            `json:"campaign_id"`
	Name       string            `json:"name"`
	Provider   string            `json:"provider"`
	Games      []string          `json:"games"`
	Currency   string            `json:"currency"`
	BetValue   wire.Number       `json:"bet_value"`
	FreeBets   int64             `json:"free_bets"`
	ValidFrom  string            `json:"valid_from"`
	ValidUntil string            `json:"valid_until"`
	AtProvider bool              `json:"at_provider"`
	Refs       map[string]string `json:"provider_refs"`
	CreatedAt  string            `json:"created_at"`
	Created    *bool             `json:"created,omitempty"`
}

func viewOfCampaign(c promo.Campaign) campaignView {
	refs := c.ProviderRefs
	if refs == nil {
		refs = map[string]string{}
	}
	return campaignView{CampaignID: c.ID, Name: c.Name, Provider: c.ProviderID, Games: c.Games,
		Currency: c.BetValue.Currency().Code(), BetValue: wire.Number(c.BetValue.String()), FreeBets: c.FreeBets,
		ValidFrom: c.ValidFrom.UTC().Format(time.RFC3339), ValidUntil: c.ValidUntil.UTC().Format(time.RFC3339),
		AtProvider: !c.Recorded, Refs: refs, CreatedAt: c.CreatedAt.UTC().Format(wire.TimeLayout)}
}

func (s *Server) createCampaign(c echo.Context) error {
	var b campaignBody
	if err := wire.BindJSON(c, &b); err != nil {
		return err
	}
	in := promo.CampaignInput{ID: b.CampaignID, Name: b.Name, ProviderID: b.Provider, Games: b.Games,
		Currency: b.Currency, BetValue: string(b.BetValue), FreeBets: b.FreeBets}
	if b.ValidFrom != nil {
		in.ValidFrom = *b.ValidFrom
	}
	if b.ValidUntil != nil {
		in.ValidUntil = *b.ValidUntil
	}
	camp, created, err := s.deps.Promotions.CreateCampaign(c.Request().Context(), wire.Principal(c).ClientID, in)
	if err != nil {
		return err
	}
	v := viewOfCampaign(camp)
	v.Created = &created
	return wire.OK(c, v)
}

func (s *Server) listCampaigns(c echo.Context) error {
	list, err := s.deps.Promotions.Campaigns(c.Request().Context(), wire.Principal(c).ClientID)
	if err != nil {
		return err
	}
	out := make([]campaignView, len(list))
	for i, camp := range list {
		out[i] = viewOfCampaign(camp)
	}
	return wire.OK(c, out)
}

func (s *Server) getCampaign(c echo.Context) error {
	camp, err := s.deps.Promotions.Campaign(c.Request().Context(), wire.Principal(c).ClientID, c.Param("id"))
	if err != nil {
		return err
	}
	return wire.OK(c, viewOfCampaign(camp))
}

// rewardView is a reward with its use.
type rewardView struct {
	RewardID    string      `json:"reward_id"`
	CampaignID  string      `json:"campaign_id"`
	PlayerID    string      `json:"player_id"`
	Provider    string      `json:"provider"`
	GameID      string      `json:"game_id"`
	Currency    string      `json:"currency"`
	BetValue    wire.Number `json:"bet_value"`
	FreeBets    int64       `json:"free_bets"`
	Used        int64       `json:"used"`
	Left        int64       `json:"left"`
	State       string      `json:"state"`
	ValidUntil  string      `json:"valid_until"`
	ProviderRef string      `json:"provider_ref"`
	GrantedAt   string      `json:"granted_at"`
	Position    int64       `json:"position"`
}

func viewOfReward(r promo.Reward) rewardView {
	return rewardView{RewardID: r.ID, CampaignID: r.CampaignID, PlayerID: r.PlayerID, Provider: r.ProviderID,
		GameID: r.GameID, Currency: r.BetValue.Currency().Code(), BetValue: wire.Number(r.BetValue.String()),
		FreeBets: r.FreeBets, Used: r.Used, Left: r.Left(), State: r.State,
		ValidUntil: r.ValidUntil.UTC().Format(time.RFC3339), ProviderRef: r.ProviderRef,
		GrantedAt: r.GrantedAt.UTC().Format(wire.TimeLayout), Position: r.Position}
}

// grantBody is POST /api/v1/campaigns/{id}/rewards.
type grantBody struct {
	Rewards []struct {
		RewardID string `json:"reward_id"`
		PlayerID string `json:"player_id"`
		GameID   string `json:"game_id"`
	} `json:"rewards"`
}

// grantItem is one reward's outcome: the reward, or the error that
// refused it (nothing booked).
type grantItem struct {
	RewardID string      `json:"reward_id"`
	Status   string      `json:"status"` // granted, replayed, refused
	Reward   *rewardView `json:"reward,omitempty"`
	Error    *wire.Error `json:"error,omitempty"`
}

func (s *Server) grantRewards(c echo.Context) error {
	var b grantBody
	if err := wire.BindJSON(c, &b); err != nil {
		return err
	}
	in := make([]promo.GrantInput, len(b.Rewards))
	for i, r := range b.Rewards {
		in[i] = promo.GrantInput{RewardID: r.RewardID, PlayerID: r.PlayerID, GameID: r.GameID}
	}
	results, err := s.deps.Promotions.Grant(c.Request().Context(), wire.Principal(c).ClientID, c.Param("id"), in)
	if err != nil {
		return err
	}
	out := struct {
		Granted  int         `json:"granted"`
		Replayed int         `json:"replayed"`
		Refused  int         `json:"refused"`
		Rewards  []grantItem `json:"rewards"`
	}{Rewards: make([]grantItem, len(results))}
	for i, r := range results {
		it := grantItem{RewardID: r.RewardID}
		switch {
		case r.Err != nil:
			e, known := wire.Classify(r.Err)
			if !known {
				s.log.ErrorContext(c.Request().Context(), "grant reward", "reward", r.RewardID, "error", r.Err)
			}
			it.Status, it.Error = "refused", e
			out.Refused++
		case r.Created:
			v := viewOfReward(r.Reward)
			it.Status, it.Reward = "granted", &v
			out.Granted++
		default:
			v := viewOfReward(r.Reward)
			it.Status, it.Reward = "replayed", &v
			out.Replayed++
		}
		out.Rewards[i] = it
	}
	return wire.OK(c, out)
}

func (s *Server) listRewards(c echo.Context) error {
	list, err := s.deps.Promotions.Rewards(c.Request().Context(), wire.Principal(c).ClientID, c.Param("id"))
	if err != nil {
		return err
	}
	out := make([]rewardView, len(list))
	for i, r := range list {
		out[i] = viewOfReward(r)
	}
	return wire.OK(c, out)
}

// cancelBody is POST /api/v1/campaigns/{id}/rewards/{reward_id}/cancel.
type cancelBody struct {
	Reason string `json:"reason"`
}

func (s *Server) cancelReward(c echo.Context) error {
	var b cancelBody
	if c.Request().ContentLength != 0 {
		if err := wire.BindJSON(c, &b); err != nil {
			return err
		}
	}
	r, err := s.deps.Promotions.Cancel(c.Request().Context(), wire.Principal(c).ClientID, c.Param("id"),
		c.Param("reward_id"), b.Reason)
	if err != nil {
		if errors.Is(err, domain.ErrNotFound) {
			return wire.NewError(http.StatusNotFound, wire.CodeNotFound, "no such reward in this campaign")
		}
		return err
	}
	return wire.OK(c, viewOfReward(r))
}
