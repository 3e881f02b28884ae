package providers

import (
	"context"
	"net/http"

	"github.com/pitboss/pitboss/gateway"
)

// gameLister is an adapter whose provider has a game list (caleta): what
// the catalog sync reads (gateway.CatalogSyncer). A refusal by the
// provider is a *gateway.ProviderRejectedError, any other error is the
// endpoint's failure.
type gameLister interface {
	listGames(ctx context.Context, client *http.Client, endpoint string, route gateway.ProviderRoute) ([]gateway.ProviderGame, error)
}

var _ gateway.GameLister = (*Registry)(nil)

// ProviderGames reads the provider's game list through the endpoints,
// breakers and round robin its launches use (an endpoint that fails
// launches is skipped here too, and the other way round). A catalog is
// far larger than a launch's answer and no player waits on it, so the
// call gets the longest timeout a provider may have
// (gateway.MaxProviderTimeout) whatever the provider's own. A kind without
// a list is a *gateway.NoGameListError, without a call.
func (r *Registry) ProviderGames(ctx context.Context, route gateway.ProviderRoute) ([]gateway.ProviderGame, error) {
	ad, ok := r.adapters[route.Kind].(gameLister)
	if !ok {
		return nil, &gateway.NoGameListError{Provider: route.ProviderID, Kind: route.Kind}
	}
	if err := r.usable(route); err != nil {
		return nil, err
	}
	slow := route
	slow.Timeout = gateway.MaxProviderTimeout
	var games []gateway.ProviderGame
	_, err := r.failover(ctx, slow, "game list", func(ctx context.Context, endpoint string) (string, error) {
		list, err := ad.listGames(ctx, r.cfg.HTTPClient, endpoint, route)
		if err == nil {
			games = list
		}
		return "", err
	})
	if err != nil {
		return nil, err
	}
	return games, nil
}
