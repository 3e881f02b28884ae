package api_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/demogame"
	"github.com/pitboss/pitboss/gateway"
)

// The built-in demo game is its own package, mounted on the server by
// cmd/pitboss; the tests that route to it mount it the same way.

var _ demogame.Host = (*api.Server)(nil)

// mountDemo mounts the demo game on srv, reading sessions, providers and
// routes from the server's own stores and calling the wallet at walletURL.
// A nil games is a server without a game catalog: every provider is the
// demo kind.
func mountDemo(t testing.TB, srv *api.Server, walletURL string, sessions gateway.Sessions, catalog gateway.Catalog,
	games gateway.GameCatalog, logger *slog.Logger) {
	t.Helper()
	cfg := demogame.Config{WalletURL: walletURL, Host: srv, Sessions: demoSessions{sessions},
		Catalog: demoCatalog{catalog}, Logger: logger}
	if games != nil {
		cfg.Routes = demoRoutes{games}
	}
	g, err := demogame.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	g.Register(srv.Echo())
}

// demoSessions, demoCatalog and demoRoutes read the api stores for the
// demo game, as cmd/pitboss's demo wiring does.
type demoSessions struct{ s gateway.Sessions }

func (d demoSessions) Session(ctx context.Context, id string) (demogame.Session, error) {
	s, err := d.s.Session(ctx, id)
	if err != nil {
		return demogame.Session{}, err
	}
	return demogame.Session{ID: s.ID, ProviderID: s.ProviderID, GameID: s.GameID, Currency: s.Currency,
		ExpiresAt: s.ExpiresAt}, nil
}

type demoCatalog struct{ c gateway.Catalog }

func (d demoCatalog) Provider(ctx context.Context, id string) (demogame.Provider, error) {
	p, err := d.c.Provider(ctx, id)
	if err != nil {
		return demogame.Provider{}, err
	}
	return demogame.Provider{ID: p.ID, Secret: p.Secret, Enabled: p.Enabled}, nil
}

func (d demoCatalog) Game(ctx context.Context, id string) (demogame.GameInfo, error) {
	g, err := d.c.Game(ctx, id)
	if err != nil {
		return demogame.GameInfo{}, err
	}
	return demogame.GameInfo{Name: g.Name}, nil
}

type demoRoutes struct{ g gateway.GameCatalog }

func (d demoRoutes) ProviderRoute(ctx context.Context, providerID string) (demogame.ProviderRoute, error) {
	r, err := d.g.ProviderRoute(ctx, providerID)
	if err != nil {
		return demogame.ProviderRoute{}, err
	}
	return demogame.ProviderRoute{Kind: r.Kind}, nil
}
