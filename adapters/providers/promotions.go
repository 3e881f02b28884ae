package providers

import (
	"bytes"
	"context"
	"crypto/rsa"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/promo"
)

// maxListBytes bounds what we read of a provider's list answer (Caleta's
// prepaids and campaigns), which grows with what the operator holds there.
const maxListBytes = 4 << 20

// promoTime is how the promotion APIs write a time: ISO 8601 without a
// zone (Caleta's datetime, YYYY-MM-DDThh:mm:ss; TBB's examples), in UTC.
const promoTime = "2006-01-02T15:04:05"

// Promotions is the providers' own promotion APIs (docs/promotions.md#the-providers-promotion-apis):
// Caleta's Freebets API and The Bet Brothers' Free Spin API. Every call
// goes through the registry's endpoints, timeouts and per-endpoint
// breakers, as a launch does (Registry.failover): an endpoint that fails
// launches is skipped for promotion calls too. It is safe for concurrent
// use.
type Promotions struct {
	reg    *Registry
	caleta caletaFreebets
	tbb    tbbFreeSpins
}

var _ promo.ProviderPromotions = (*Promotions)(nil)

// Promotions returns the promotion APIs over r's endpoints and breakers.
// Make it once when wiring: it keeps what it learnt of the providers'
// campaigns (Caleta's campaign → prepaid).
func (r *Registry) Promotions() *Promotions {
	p := &Promotions{reg: r}
	p.caleta = caletaFreebets{p: p}
	p.tbb = tbbFreeSpins{p: p}
	return p
}

// promotionAPI is one protocol's promotion API. Each method is given a
// route that is ready for it (ready returned nil).
type promotionAPI interface {
	// ready reports what the route still lacks for this API.
	ready(route gateway.ProviderRoute) error
	createCampaign(ctx context.Context, route gateway.ProviderRoute, c promo.ProviderCampaign) (string, error)
	grantReward(ctx context.Context, route gateway.ProviderRoute, g promo.ProviderGrant) (string, error)
	cancelReward(ctx context.Context, route gateway.ProviderRoute, c promo.ProviderCancel) error
}

func (p *Promotions) api(protocol string) promotionAPI {
	switch protocol {
	case promo.ProtocolCaleta:
		return &p.caleta
	case promo.ProtocolTBB:
		return &p.tbb
	}
	return nil
}

// Supports reports whether protocol has a promotion API here: caleta and
// tbb. Every other provider has its campaigns recorded on our side only.
func (p *Promotions) Supports(protocol string) bool { return p.api(protocol) != nil }

// CreateCampaign creates c at the provider of t and returns its id of the
// campaign ("" for TBB, whose Free Spin API has no campaigns).
func (p *Promotions) CreateCampaign(ctx context.Context, t promo.Target, c promo.ProviderCampaign) (string, error) {
	api, err := p.target(t)
	if err != nil {
		return "", err
	}
	ref, err := api.createCampaign(ctx, t.Route, c)
	if err != nil {
		return "", fmt.Errorf("create campaign %s at provider %s: %w", c.CampaignID, t.Route.ProviderID, err)
	}
	return ref, nil
}

// GrantReward grants g at the provider of t and returns its id of the
// reward (Caleta: our reward id, sent as reward_uuid; TBB: its bonus_id).
func (p *Promotions) GrantReward(ctx context.Context, t promo.Target, g promo.ProviderGrant) (string, error) {
	api, err := p.target(t)
	if err != nil {
		return "", err
	}
	ref, err := api.grantReward(ctx, t.Route, g)
	if err != nil {
		return "", fmt.Errorf("grant reward %s at provider %s: %w", g.RewardID, t.Route.ProviderID, err)
	}
	return ref, nil
}

// CancelReward cancels an unused reward at the provider of t.
func (p *Promotions) CancelReward(ctx context.Context, t promo.Target, c promo.ProviderCancel) error {
	api, err := p.target(t)
	if err != nil {
		return err
	}
	if err := api.cancelReward(ctx, t.Route, c); err != nil {
		return fmt.Errorf("cancel reward %s at provider %s: %w", c.RewardID, t.Route.ProviderID, err)
	}
	return nil
}

// target is t's promotion API once its route is usable for it. A route
// that is not is a 503 naming the reason, and an error in our log, as an
// unusable launch route is.
func (p *Promotions) target(t promo.Target) (promotionAPI, error) {
	api := p.api(t.Protocol)
	if api == nil {
		return nil, fmt.Errorf("provider %s: protocol %q has no promotion API here", t.Route.ProviderID, t.Protocol)
	}
	err := t.Route.Validate()
	if err == nil && !t.Route.Outbound() {
		err = fmt.Errorf("a %s provider has no endpoint to call", t.Route.Kind)
	}
	if err == nil {
		err = api.ready(t.Route)
	}
	if err != nil {
		p.reg.log.Error("provider is not configured for promotions", "provider", t.Route.ProviderID,
			"protocol", t.Protocol, "error", err)
		return nil, &gateway.ProviderUnavailableError{Provider: t.Route.ProviderID,
			RetryAfter: p.reg.cfg.NotConfiguredRetryAfter, Reason: "not_configured"}
	}
	return api, nil
}

// caletaKey is our launch private key from its PEM, parsed once (the
// caleta launch kind's cache: the same key signs both APIs).
func (p *Promotions) caletaKey(pemText string) (*rsa.PrivateKey, error) {
	if ad, ok := p.reg.adapters[gateway.ProviderKindCaleta].(*caletaAdapter); ok {
		return ad.key(pemText)
	}
	return gateway.ParseRSAPrivateKey(pemText)
}

// promoCall is one signed POST of a promotion API to one endpoint.
type promoCall struct {
	path   string
	body   []byte
	header http.Header
	limit  int64
}

// post sends c to endpoint and reads its answer. A transport failure is
// the endpoint's failure.
func (p *Promotions) post(ctx context.Context, endpoint string, c promoCall) (int, []byte, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(endpoint, "/")+c.path,
		bytes.NewReader(c.body))
	if err != nil {
		return 0, nil, &failure{reason: "connection", err: err}
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	for k, vs := range c.header {
		hr.Header[k] = vs
	}
	limit := c.limit
	if limit == 0 {
		limit = maxAnswerBytes
	}
	return doUpTo(p.reg.cfg.HTTPClient, hr, limit)
}

// promoTimeText is t as the promotion APIs write it; "" for the zero time.
func promoTimeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(promoTime)
}

// refCache is a small concurrent map of what a provider answered once and
// never changes (a campaign's prepaid).
type refCache struct{ m sync.Map }

func (c *refCache) get(k string) (string, bool) {
	v, ok := c.m.Load(k)
	if !ok {
		return "", false
	}
	return v.(string), true
}

func (c *refCache) put(k, v string) { c.m.Store(k, v) }
