package providers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/promo"
)

// tbbFreeSpins is The Bet Brothers' supplier Free Spin API at the
// provider's launch endpoints: Pitboss stands where TBB's platform stands
// and calls the provider (the supplier). POST
// {endpoint}/supplier_api/freespin/create and /cancel, JSON bodies signed
// X-REQUEST-SIGN (lowercase hex HMAC-SHA256 of the raw body, keyed with
// the provider's secret, the password its Game Events are signed with).
// Answers: 2xx {"status": "success", ...} is success; a 4xx but 408/429
// is the supplier's refusal; anything else is the endpoint's failure. The
// API has no campaigns: each grant carries our campaign id as bonus_code.
// See docs/promotions.md#the-providers-promotion-apis.
type tbbFreeSpins struct{ p *Promotions }

// tbbFreeSpinProviderID is the provider_id we send: the document's integer
// id of the supplier on TBB's platform, which Pitboss does not hand out
// (our provider ids are text, sent as provider_name), as the simulator's
// Game Events send 1.
const tbbFreeSpinProviderID = 1

// tbbDefaultBrandID is the brand_id we send when the provider's launch
// operator id is not a positive integer.
const tbbDefaultBrandID = 1

// tbbFreeSpinCreateBody is the document's Add Free Spin body.
type tbbFreeSpinCreateBody struct {
	ProviderName string          `json:"provider_name"`
	ProviderID   int64           `json:"provider_id"`
	PlayerID     string          `json:"player_id"`
	GameSymbol   string          `json:"game_symbol"`
	Rounds       int             `json:"rounds"`
	Amount       json.RawMessage `json:"amount"` // decimal text of domain.Money: never a float
	CurrencyCode string          `json:"currency_code"`
	StartDate    string          `json:"start_date"`
	EndDate      string          `json:"end_date"`
	BonusCode    string          `json:"bonus_code"`
	BrandID      int64           `json:"brand_id"`
}

// tbbFreeSpinCancelBody is the document's Cancel Free Spin body.
type tbbFreeSpinCancelBody struct {
	ProviderName string `json:"provider_name"`
	ProviderID   int64  `json:"provider_id"`
	PlayerID     string `json:"player_id"`
	GameSymbol   string `json:"game_symbol"`
	BonusID      int64  `json:"bonus_id"`
	BrandID      int64  `json:"brand_id"`
}

// tbbFreeSpinAnswer is either answer: status, and create's bonus_id; a
// refusal's code and message (the addendum's shape), or an error text.
type tbbFreeSpinAnswer struct {
	Status  string          `json:"status"`
	BonusID json.Number     `json:"bonus_id"`
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
	Error   string          `json:"error"`
}

func (a *tbbFreeSpins) ready(route gateway.ProviderRoute) error {
	if route.Secret == "" {
		return errors.New("tbb's Free Spin API is signed with the provider's secret, and it has none")
	}
	return nil
}

// createCampaign makes no call: the Free Spin API has no campaigns.
func (a *tbbFreeSpins) createCampaign(context.Context, gateway.ProviderRoute, promo.ProviderCampaign) (string, error) {
	return "", nil
}

// grantReward adds the free spins and answers the supplier's bonus_id as
// decimal text.
func (a *tbbFreeSpins) grantReward(ctx context.Context, route gateway.ProviderRoute, g promo.ProviderGrant) (string, error) {
	body := tbbFreeSpinCreateBody{ProviderName: route.ProviderID, ProviderID: tbbFreeSpinProviderID, PlayerID: g.PlayerID,
		GameSymbol: g.GameCode, Rounds: g.FreeBets, Amount: json.RawMessage(g.BetValue.String()),
		CurrencyCode: g.Currency.Code(), StartDate: promoTimeText(g.ValidFrom), EndDate: promoTimeText(g.ValidUntil),
		BonusCode: g.CampaignID, BrandID: tbbBrandID(route)}
	ans, err := a.call(ctx, route, "create", body)
	if err != nil {
		return "", err
	}
	return ans.BonusID.String(), nil
}

// cancelReward cancels the free spins of the bonus_id the grant answered.
func (a *tbbFreeSpins) cancelReward(ctx context.Context, route gateway.ProviderRoute, c promo.ProviderCancel) error {
	bonus, err := strconv.ParseInt(c.RewardRef, 10, 64)
	if err != nil {
		return fmt.Errorf("tbb reward ref %q is not the bonus_id the grant answered", clip(c.RewardRef))
	}
	_, err = a.call(ctx, route, "cancel", tbbFreeSpinCancelBody{ProviderName: route.ProviderID,
		ProviderID: tbbFreeSpinProviderID, PlayerID: c.PlayerID, GameSymbol: c.GameCode, BonusID: bonus,
		BrandID: tbbBrandID(route)})
	return err
}

// call makes one Free Spin call (create or cancel) through the registry's
// failover.
func (a *tbbFreeSpins) call(ctx context.Context, route gateway.ProviderRoute, op string, body any) (tbbFreeSpinAnswer, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return tbbFreeSpinAnswer{}, fmt.Errorf("encode freespin %s request: %w", op, err)
	}
	c := promoCall{path: "/supplier_api/freespin/" + op, body: raw,
		header: http.Header{"X-Request-Sign": {gateway.Signature(route.Secret, raw)}}}
	var out tbbFreeSpinAnswer
	_, err = a.p.reg.failover(ctx, route, "freespin "+op, func(ctx context.Context, endpoint string) (string, error) {
		status, ans, err := a.p.post(ctx, endpoint, c)
		if err != nil {
			return "", err
		}
		out, err = tbbFreeSpinRead(route, op, status, ans)
		return "", err
	})
	return out, err
}

// tbbFreeSpinRead judges an answer. A 2xx whose status is not "success"
// is a refusal too (the supplier answered, and not yes).
func tbbFreeSpinRead(route gateway.ProviderRoute, op string, status int, raw []byte) (tbbFreeSpinAnswer, error) {
	var a tbbFreeSpinAnswer
	decodeErr := json.Unmarshal(raw, &a)
	switch {
	case status >= 200 && status < 300:
		if decodeErr != nil {
			return a, &failure{reason: "bad_response", err: fmt.Errorf("answer is not JSON: %w", decodeErr)}
		}
		if a.Status != "success" {
			return a, &gateway.ProviderRejectedError{Provider: route.ProviderID, Status: status,
				Code: clip(string(a.Code)), Message: clip(firstOf(a.Message, a.Error, "status "+strconv.Quote(a.Status)))}
		}
		if op == "create" {
			if id, err := a.BonusID.Int64(); err != nil || id <= 0 {
				return a, &failure{reason: "bad_response", err: fmt.Errorf("bonus_id %q is not a positive integer", clip(a.BonusID.String()))}
			}
		}
		return a, nil
	case refusalStatus(status):
		msg := firstOf(a.Message, a.Error)
		if decodeErr != nil {
			msg = string(raw)
		}
		return a, &gateway.ProviderRejectedError{Provider: route.ProviderID, Status: status, Code: clip(string(a.Code)),
			Message: clip(msg)}
	}
	return a, &failure{reason: fmt.Sprintf("status_%d", status)}
}

// tbbBrandID is the brand_id we send: the provider's launch operator id
// (who we are at the provider) when it is a positive integer, else 1.
func tbbBrandID(route gateway.ProviderRoute) int64 {
	if id, err := strconv.ParseInt(route.LaunchOperatorID, 10, 64); err == nil && id > 0 {
		return id
	}
	return tbbDefaultBrandID
}

// firstOf is the first of texts that is not empty.
func firstOf(texts ...string) string {
	for _, t := range texts {
		if t != "" {
			return t
		}
	}
	return ""
}
