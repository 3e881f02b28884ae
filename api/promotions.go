package api

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
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
	v1.GET("/reports/campaigns", s.campaignReport, requireScope(gateway.ScopeReportsRead), s.requirePromotions)
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
	Error    *grantError `json:"error,omitempty"`
}

// grantError is why a reward was refused, as an error body's error says it.
type grantError struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Status  int            `json:"status"`
	Details map[string]any `json:"details,omitempty"`
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
			it.Status, it.Error = "refused", &grantError{Code: e.Code, Message: e.Message, Status: e.Status, Details: e.Details}
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

// campaignReportLine is one campaign of GET /api/v1/reports/campaigns.
type campaignReportLine struct {
	CampaignID        string         `json:"campaign_id"`
	Name              string         `json:"name"`
	Provider          string         `json:"provider"`
	Currency          string         `json:"currency"`
	BetValue          wire.Number    `json:"bet_value"`
	ValidFrom         string         `json:"valid_from"`
	ValidUntil        string         `json:"valid_until"`
	Rewards           int64          `json:"rewards"`
	FreeBetsGranted   int64          `json:"free_bets_granted"`
	FreeBetsUsed      int64          `json:"free_bets_used"`
	FreeBetsCancelled int64          `json:"free_bets_cancelled"`
	FreeBetsExpired   int64          `json:"free_bets_expired"`
	FreeBetsLeft      int64          `json:"free_bets_left"`
	PromoBets         wire.Number    `json:"promo_bets"`
	PromoBetRefunds   wire.Number    `json:"promo_bet_refunds"`
	PromoWins         wire.Number    `json:"promo_wins"`
	PromoWinReversals wire.Number    `json:"promo_win_reversals"`
	Cost              wire.Number    `json:"cost"`
	Reporting         *reportingCost `json:"reporting,omitempty"`
}

// reportingCost is a cost in the reporting currency.
type reportingCost struct {
	Currency        string      `json:"currency"`
	Cost            wire.Number `json:"cost"`
	Complete        bool        `json:"complete"`
	MissingRateDays []string    `json:"missing_rate_days"`
}

func viewOfReportingCost(r *promo.ReportingCost) *reportingCost {
	if r == nil {
		return nil
	}
	v := &reportingCost{Currency: r.Currency.Code(), Complete: r.Complete, MissingRateDays: []string{},
		Cost: wire.Number(domain.FormatMinor(r.Cost, r.Currency.Exponent()))}
	if !r.Complete {
		v.Cost = ""
	}
	for _, d := range r.MissingDays {
		v.MissingRateDays = append(v.MissingRateDays, d.Format(time.DateOnly))
	}
	return v
}

// campaignReport answers GET /api/v1/reports/campaigns: per campaign, its
// rewards and free bets as the ledger holds them now, and its promo money
// over the days from..to (both optional, UTC days), as JSON or, with
// Accept: text/csv, CSV; ?reporting_currency= adds each cost converted day
// by day (docs/promotions.md#the-campaign-report).
func (s *Server) campaignReport(c echo.Context) error {
	q := promo.ReportQuery{ClientID: wire.Principal(c).ClientID}
	var err error
	for _, p := range []struct {
		name string
		dst  *time.Time
	}{{"from", &q.From}, {"to", &q.To}} {
		t, ok, err := wire.QueryDay(c, p.name)
		if err != nil {
			return err
		}
		if ok {
			*p.dst = t
		}
	}
	if !q.From.IsZero() && !q.To.IsZero() && q.From.After(q.To) {
		return queryParamError("from", "from must not be after to")
	}
	if v, ok := wire.QueryValue(c, "campaign_id"); ok {
		if err := domain.ValidateID("campaign_id", v); err != nil {
			return queryParamError("campaign_id", "%v", err)
		}
		q.CampaignID = v
	}
	to, converted, err := s.reportingCurrency(c)
	if err != nil {
		return err
	}
	if converted {
		if s.deps.FXRates == nil {
			return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "exchange rates are not configured on this server")
		}
		q.Reporting = to
	}
	rep, err := s.deps.Promotions.Report(c.Request().Context(), q, s.deps.FXRates)
	if err != nil {
		return err
	}
	lines := make([]campaignReportLine, len(rep.Lines))
	for i, l := range rep.Lines {
		exp := l.Campaign.BetValue.Currency().Exponent()
		m := func(v int64) wire.Number { return wire.Number(domain.FormatMinor(v, exp)) }
		lines[i] = campaignReportLine{CampaignID: l.Campaign.ID, Name: l.Campaign.Name, Provider: l.Campaign.ProviderID,
			Currency: l.Campaign.BetValue.Currency().Code(), BetValue: wire.Number(l.Campaign.BetValue.String()),
			ValidFrom: l.Campaign.ValidFrom.Format(time.RFC3339), ValidUntil: l.Campaign.ValidUntil.Format(time.RFC3339),
			Rewards: l.Counts.Rewards, FreeBetsGranted: l.Counts.Granted, FreeBetsUsed: l.Counts.Used,
			FreeBetsCancelled: l.Counts.Cancelled, FreeBetsExpired: l.Counts.Expired, FreeBetsLeft: l.Counts.Left,
			PromoBets: m(l.PromoBets), PromoBetRefunds: m(l.PromoBetRefunds), PromoWins: m(l.PromoWins),
			PromoWinReversals: m(l.PromoWinReversals), Cost: m(l.Cost), Reporting: viewOfReportingCost(l.Reporting)}
	}
	if wantsCSV(c) {
		header := []string{"campaign_id", "name", "provider", "currency", "bet_value", "valid_from", "valid_until", "rewards",
			"free_bets_granted", "free_bets_used", "free_bets_cancelled", "free_bets_expired", "free_bets_left",
			"promo_bets", "promo_bet_refunds", "promo_wins", "promo_win_reversals", "cost"}
		if converted {
			header = append(header, "reporting_currency", "reporting_cost", "missing_rate_days")
		}
		rows := make([][]string, len(lines))
		for i, l := range lines {
			n := func(v int64) string { return fmt.Sprint(v) }
			rows[i] = []string{l.CampaignID, l.Name, l.Provider, l.Currency, string(l.BetValue), l.ValidFrom, l.ValidUntil,
				n(l.Rewards), n(l.FreeBetsGranted), n(l.FreeBetsUsed), n(l.FreeBetsCancelled), n(l.FreeBetsExpired),
				n(l.FreeBetsLeft), string(l.PromoBets), string(l.PromoBetRefunds), string(l.PromoWins),
				string(l.PromoWinReversals), string(l.Cost)}
			if l.Reporting != nil {
				rows[i] = append(rows[i], l.Reporting.Currency, string(l.Reporting.Cost), strings.Join(l.Reporting.MissingRateDays, " "))
			}
		}
		return writeCSV(c, "campaigns.csv", header, rows)
	}
	return wire.OK(c, struct {
		Campaigns []campaignReportLine `json:"campaigns"`
		Total     *reportingCost       `json:"reporting_total,omitempty"`
	}{lines, viewOfReportingCost(rep.Total)})
}
