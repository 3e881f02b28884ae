package providers

import (
	"context"
	"fmt"
	"net/http"

	"github.com/pitboss/pitboss/gateway"
)

// roundDetailer is an adapter whose provider has a round-detail call: it
// returns the address of the provider's own page of one round. A refusal
// by the provider is a *gateway.ProviderRejectedError, any other error is
// the endpoint's failure.
type roundDetailer interface {
	roundDetail(ctx context.Context, client *http.Client, endpoint string, route gateway.ProviderRoute,
		req gateway.RoundDetailRequest) (string, error)
}

var _ gateway.RoundDetails = (*Registry)(nil)

// RoundDetailURL asks the provider for the address of its page of a round,
// through the endpoints, timeouts and breakers its launches use. Only the
// caleta kind has such a call (POST /api/game/round); every other kind is
// gateway.ErrRoundDetailUnsupported, without a call.
func (r *Registry) RoundDetailURL(ctx context.Context, route gateway.ProviderRoute, req gateway.RoundDetailRequest) (string, error) {
	ad, ok := r.adapters[route.Kind].(roundDetailer)
	if !ok {
		return "", fmt.Errorf("provider %s of kind %q: %w", route.ProviderID, route.Kind, gateway.ErrRoundDetailUnsupported)
	}
	if err := r.usable(route); err != nil {
		return "", err
	}
	return r.failover(ctx, route, "round detail", func(ctx context.Context, endpoint string) (string, error) {
		return ad.roundDetail(ctx, r.cfg.HTTPClient, endpoint, route, req)
	})
}
