package providers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"reflect"
	"strings"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/promo"
)

// caletaFreebets is the Freebets API of the Caleta Gaming System API,
// Operator's Guide 1.5, at the provider's launch endpoints: POST
// {endpoint}/api/freebet/{prepaids/list, campaigns/list, campaigns/create,
// rewards/create, rewards/cancel}, JSON bodies signed as the Games API's
// /api/game/url is (X-Auth-Signature: base64 RSA-SHA256 with our launch
// private key), money as integers of 1/100000 of the currency's unit.
// Answers: 2xx with the document's object is success; a 4xx but 408/429
// ({"error": "..."}) is Caleta's refusal; anything else is the endpoint's
// failure. See docs/promotions.md#the-providers-promotion-apis.
type caletaFreebets struct {
	p *Promotions
	// prepaids is campaign → prepaid (provider id + "\n" + campaign_uuid):
	// rewards/create requires the campaign's prepaid_uuid, and a campaign's
	// prepaid never changes.
	prepaids refCache
}

// caletaUnitDigits is how many decimals Caleta's money_amount carries.
const caletaUnitDigits = 5

// caletaPrepaid is the document's Prepaid. A null bet_value or bet_count
// leaves it to the campaign or reward.
type caletaPrepaid struct {
	PrepaidUUID string `json:"prepaid_uuid"`
	GameID      *int64 `json:"game_id"`
	Currency    string `json:"currency"`
	BetValue    *int64 `json:"bet_value"`
	BetCount    *int64 `json:"bet_count"`
}

// caletaCampaign is the document's Campaign.
type caletaCampaign struct {
	CampaignUUID string `json:"campaign_uuid"`
	PrepaidUUID  string `json:"prepaid_uuid"`
	Name         string `json:"name"`
	Currency     string `json:"currency"`
	BetValue     *int64 `json:"bet_value"`
	BetCount     *int64 `json:"bet_count"`
}

func (c *caletaCampaign) complete() error {
	if c.CampaignUUID == "" {
		return errors.New("the campaign answered has no campaign_uuid")
	}
	return nil
}

// caletaReward is the document's Reward, as far as we read it.
type caletaReward struct {
	RewardUUID   string `json:"reward_uuid"`
	PrepaidUUID  string `json:"prepaid_uuid"`
	CampaignUUID string `json:"campaign_uuid"`
	User         string `json:"user"`
	BetValue     *int64 `json:"bet_value"`
	BetCount     *int64 `json:"bet_count"`
}

func (r *caletaReward) complete() error {
	if r.RewardUUID == "" {
		return errors.New("the reward answered has no reward_uuid")
	}
	return nil
}

// caletaPrepaidsListBody is the document's prepaids_list_body (the
// deprecated game_id is not sent).
type caletaPrepaidsListBody struct {
	OperatorID string `json:"operator_id"`
	GameCode   string `json:"game_code"`
	Currency   string `json:"currency"`
}

// caletaCampaignsListBody is the document's campaigns_list_body.
type caletaCampaignsListBody struct {
	OperatorID string `json:"operator_id"`
}

// caletaCampaignsCreateBody is the document's campaigns_create_body: it has
// no operator_id (the signature tells the operator).
type caletaCampaignsCreateBody struct {
	Name        string `json:"name"`
	PrepaidUUID string `json:"prepaid_uuid"`
	Currency    string `json:"currency"`
	BetValue    int64  `json:"bet_value"`
	BetCount    int    `json:"bet_count"`
	StartTime   string `json:"start_time,omitempty"`
	EndTime     string `json:"end_time,omitempty"`
}

// caletaRewardsCreateBody is the document's rewards_create_body. It has no
// game_code: the prepaid names the game.
type caletaRewardsCreateBody struct {
	User         string `json:"user"`
	SubPartnerID string `json:"sub_partner_id"`
	OperatorID   string `json:"operator_id"`
	PrepaidUUID  string `json:"prepaid_uuid"`
	CampaignUUID string `json:"campaign_uuid,omitempty"`
	RewardUUID   string `json:"reward_uuid"`
	StartTime    string `json:"start_time,omitempty"`
	EndTime      string `json:"end_time,omitempty"`
	BetValue     int64  `json:"bet_value"`
	BetCount     int    `json:"bet_count"`
}

// caletaRewardsCancelBody is the document's rewards_cancel_body.
type caletaRewardsCancelBody struct {
	OperatorID string `json:"operator_id"`
	RewardUUID string `json:"reward_uuid"`
}

func (a *caletaFreebets) ready(route gateway.ProviderRoute) error {
	var errs []error
	if route.LaunchOperatorID == "" {
		errs = append(errs, errors.New("caleta's Freebets API needs its launch operator id (operator_id)"))
	}
	if _, err := a.p.caletaKey(route.LaunchSecret); err != nil {
		errs = append(errs, fmt.Errorf("caleta's Freebets API needs our RSA launch private key: %w", err))
	}
	return errors.Join(errs...)
}

// createCampaign picks a prepaid of the game and currency that allows our
// bet value and count (equal, or null), then creates the campaign on it.
func (a *caletaFreebets) createCampaign(ctx context.Context, route gateway.ProviderRoute, c promo.ProviderCampaign) (string, error) {
	units, err := caletaUnits(c.BetValue)
	if err != nil {
		return "", err
	}
	prepaid, err := a.pickPrepaid(ctx, route, c.GameCode, c.Currency, units, c.FreeBets)
	if err != nil {
		return "", err
	}
	name := c.Name
	if name == "" {
		name = c.CampaignID
	}
	var camp caletaCampaign
	err = a.call(ctx, route, "campaigns/create", caletaCampaignsCreateBody{Name: name, PrepaidUUID: prepaid,
		Currency: c.Currency.Code(), BetValue: units, BetCount: c.FreeBets, StartTime: promoTimeText(c.ValidFrom),
		EndTime: promoTimeText(c.ValidUntil)}, &camp, maxAnswerBytes)
	if err != nil {
		return "", err
	}
	// A campaign of other free bets than ours would let the player bet what
	// the ledger does not expect.
	if msg := caletaSameBets(camp.BetValue, camp.BetCount, units, c.FreeBets); msg != "" {
		return "", &gateway.ProviderRejectedError{Provider: route.ProviderID, Status: http.StatusOK,
			Message: "campaign " + clip(camp.CampaignUUID) + ": " + msg}
	}
	if camp.PrepaidUUID == "" {
		camp.PrepaidUUID = prepaid
	}
	a.prepaids.put(route.ProviderID+"\n"+camp.CampaignUUID, camp.PrepaidUUID)
	return camp.CampaignUUID, nil
}

// grantReward creates the reward under our reward id (reward_uuid), so the
// wallet calls of its free bets name our id. A reward of a campaign
// carries the campaign's prepaid; one without a campaign (CampaignRef "")
// is the document's single-use reward, on a prepaid picked as a campaign's
// is.
func (a *caletaFreebets) grantReward(ctx context.Context, route gateway.ProviderRoute, g promo.ProviderGrant) (string, error) {
	units, err := caletaUnits(g.BetValue)
	if err != nil {
		return "", err
	}
	var prepaid string
	if g.CampaignRef != "" {
		prepaid, err = a.campaignPrepaid(ctx, route, g.CampaignRef)
	} else {
		prepaid, err = a.pickPrepaid(ctx, route, g.GameCode, g.Currency, units, g.FreeBets)
	}
	if err != nil {
		return "", err
	}
	var rw caletaReward
	err = a.call(ctx, route, "rewards/create", caletaRewardsCreateBody{User: g.PlayerID, SubPartnerID: g.SubPartnerID,
		OperatorID: route.LaunchOperatorID, PrepaidUUID: prepaid, CampaignUUID: g.CampaignRef, RewardUUID: g.RewardID,
		StartTime: promoTimeText(g.ValidFrom), EndTime: promoTimeText(g.ValidUntil), BetValue: units,
		BetCount: g.FreeBets}, &rw, maxAnswerBytes)
	if err != nil {
		return "", err
	}
	reject := func(msg string) error {
		return &gateway.ProviderRejectedError{Provider: route.ProviderID, Status: http.StatusOK, Message: msg}
	}
	if rw.RewardUUID != g.RewardID {
		return "", reject(fmt.Sprintf("the reward was answered as reward_uuid %q, not ours", clip(rw.RewardUUID)))
	}
	if msg := caletaSameBets(rw.BetValue, rw.BetCount, units, g.FreeBets); msg != "" {
		return "", reject("reward: " + msg)
	}
	return rw.RewardUUID, nil
}

// cancelReward cancels the reward by its reward_uuid (our id).
func (a *caletaFreebets) cancelReward(ctx context.Context, route gateway.ProviderRoute, c promo.ProviderCancel) error {
	id := c.RewardRef
	if id == "" {
		id = c.RewardID
	}
	// The answer is the document's Reward; any JSON object is taken for
	// the cancellation done.
	var ans map[string]json.RawMessage
	return a.call(ctx, route, "rewards/cancel", caletaRewardsCancelBody{OperatorID: route.LaunchOperatorID,
		RewardUUID: id}, &ans, maxAnswerBytes)
}

// pickPrepaid lists the prepaids of the game in the currency and picks the
// first that fixes both our bet value and count, else the first that fixes
// one and leaves the other null, else the first open one. None: Caleta's
// refusal, said as such.
func (a *caletaFreebets) pickPrepaid(ctx context.Context, route gateway.ProviderRoute, game string, cur domain.Currency,
	units int64, count int) (string, error) {
	var list []caletaPrepaid
	err := a.call(ctx, route, "prepaids/list", caletaPrepaidsListBody{OperatorID: route.LaunchOperatorID, GameCode: game,
		Currency: cur.Code()}, &list, maxListBytes)
	if err != nil {
		return "", err
	}
	best, bestScore := "", -1
	for _, pp := range list {
		if pp.PrepaidUUID == "" || (pp.Currency != "" && !strings.EqualFold(pp.Currency, cur.Code())) {
			continue
		}
		score := 0
		switch {
		case pp.BetValue == nil:
		case *pp.BetValue == units:
			score++
		default:
			continue
		}
		switch {
		case pp.BetCount == nil:
		case *pp.BetCount == int64(count):
			score++
		default:
			continue
		}
		if score > bestScore {
			best, bestScore = pp.PrepaidUUID, score
		}
	}
	if best == "" {
		return "", &gateway.ProviderRejectedError{Provider: route.ProviderID, Status: http.StatusOK,
			Message: fmt.Sprintf("no prepaid of game %s in %s fits %d free bets of %d (1/100000 %s): %d listed",
				clip(game), cur.Code(), count, units, cur.Code(), len(list))}
	}
	return best, nil
}

// campaignPrepaid is the prepaid of a campaign we created: remembered from
// its creation, else looked up in the operator's campaigns (after a
// restart, or on another process).
func (a *caletaFreebets) campaignPrepaid(ctx context.Context, route gateway.ProviderRoute, campaign string) (string, error) {
	key := route.ProviderID + "\n" + campaign
	if prepaid, ok := a.prepaids.get(key); ok {
		return prepaid, nil
	}
	var list []caletaCampaign
	err := a.call(ctx, route, "campaigns/list", caletaCampaignsListBody{OperatorID: route.LaunchOperatorID}, &list,
		maxListBytes)
	if err != nil {
		return "", err
	}
	for _, c := range list {
		if c.CampaignUUID == campaign && c.PrepaidUUID != "" {
			a.prepaids.put(key, c.PrepaidUUID)
			return c.PrepaidUUID, nil
		}
	}
	return "", &gateway.ProviderRejectedError{Provider: route.ProviderID, Status: http.StatusOK,
		Message: fmt.Sprintf("campaign %s is not among the operator's %d campaigns", clip(campaign), len(list))}
}

// call makes one Freebets call (path under /api/freebet/) through the
// registry's failover and decodes a successful answer into out.
func (a *caletaFreebets) call(ctx context.Context, route gateway.ProviderRoute, path string, body, out any, limit int64) error {
	key, err := a.p.caletaKey(route.LaunchSecret)
	if err != nil { // ready refused this before; kept for safety
		return fmt.Errorf("caleta launch key of provider %s: %w", route.ProviderID, err)
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encode %s request: %w", path, err)
	}
	sig, err := CaletaSignature(key, raw)
	if err != nil {
		return err
	}
	c := promoCall{path: "/api/freebet/" + path, body: raw, header: http.Header{"X-Auth-Signature": {sig}}, limit: limit}
	var answer []byte
	_, err = a.p.reg.failover(ctx, route, "freebets "+path, func(ctx context.Context, endpoint string) (string, error) {
		status, ans, err := a.p.post(ctx, endpoint, c)
		if err != nil {
			return "", err
		}
		if err := caletaAnswer(route, status, ans, out); err != nil {
			return "", err
		}
		answer = ans
		return "", nil
	})
	if err != nil {
		return err
	}
	return json.Unmarshal(answer, out) // the answer caletaAnswer took
}

// caletaAnswer judges a Freebets answer: a 2xx that decodes into a fresh
// value of out's type (complete, where the type says what that is) is
// success; a refusal status is Caleta's refusal with its error text;
// anything else is the endpoint's failure. out itself is not touched.
func caletaAnswer(route gateway.ProviderRoute, status int, raw []byte, out any) error {
	switch {
	case status >= 200 && status < 300:
		fresh := reflect.New(reflect.TypeOf(out).Elem()).Interface()
		if err := json.Unmarshal(raw, fresh); err != nil {
			return &failure{reason: "bad_response", err: fmt.Errorf("answer is not the document's JSON: %w", err)}
		}
		if c, ok := fresh.(interface{ complete() error }); ok {
			if err := c.complete(); err != nil {
				return &failure{reason: "bad_response", err: err}
			}
		}
		return nil
	case refusalStatus(status):
		var e struct {
			Error string `json:"error"`
		}
		msg := string(raw)
		if json.Unmarshal(raw, &e) == nil && e.Error != "" {
			msg = e.Error
		}
		return &gateway.ProviderRejectedError{Provider: route.ProviderID, Status: status, Message: clip(msg)}
	}
	return &failure{reason: fmt.Sprintf("status_%d", status)}
}

// caletaUnits is m in Caleta's money_amount: an integer of 1/100000 of the
// currency's unit (3.56 EUR = 356000). A currency with more decimals than
// that cannot be said exactly, and is refused before any call.
func caletaUnits(m domain.Money) (int64, error) {
	exp := m.Currency().Exponent()
	if exp > caletaUnitDigits {
		return 0, &gateway.FieldError{Field: "currency", Message: fmt.Sprintf(
			"%s has %d decimals; Caleta's amounts carry at most %d", m.Currency().Code(), exp, caletaUnitDigits)}
	}
	step := int64(1)
	for range caletaUnitDigits - exp {
		step *= 10
	}
	if m.Minor() > math.MaxInt64/step || m.Minor() < 0 {
		return 0, &gateway.FieldError{Field: "bet_value", Message: fmt.Sprintf(
			"bet value %s %s is beyond what Caleta's amounts can say", m, m.Currency().Code())}
	}
	return m.Minor() * step, nil
}

// caletaSameBets says how an answered bet value and count differ from
// ours; "" when they do not (a null is not a difference).
func caletaSameBets(value, count *int64, units int64, bets int) string {
	var diffs []string
	if value != nil && *value != units {
		diffs = append(diffs, fmt.Sprintf("bet_value %d, ours %d", *value, units))
	}
	if count != nil && *count != int64(bets) {
		diffs = append(diffs, fmt.Sprintf("bet_count %d, ours %d", *count, bets))
	}
	return strings.Join(diffs, "; ")
}
