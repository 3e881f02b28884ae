package main

import (
	"context"
	"log/slog"

	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/demogame"
	"github.com/pitboss/pitboss/gateway"
)

// Wiring of the built-in demo game (docs/providers-and-games.md): its own
// package, mounted on the API server's Echo instance. Neither package
// imports the other; the server is the game's Host, and the api stores
// are read through the game's own ports below.

var _ demogame.Host = (*api.Server)(nil)

// mountDemoGame adds /demo/... to srv; the game calls the provider wallet
// at walletURL.
func mountDemoGame(srv *api.Server, walletURL string, sessions gateway.Sessions, catalog gateway.Catalog, games gateway.GameCatalog,
	log *slog.Logger) error {
	g, err := demogame.New(demogame.Config{WalletURL: walletURL, Host: srv, Sessions: demoSessions{sessions},
		Catalog: demoCatalog{catalog}, Routes: demoRoutes{games}, Logger: log})
	if err != nil {
		return err
	}
	g.Register(srv.Echo())
	return nil
}

// demoSessions reads game sessions for the demo game.
type demoSessions struct{ s gateway.Sessions }

func (d demoSessions) Session(ctx context.Context, id string) (demogame.Session, error) {
	s, err := d.s.Session(ctx, id)
	if err != nil {
		return demogame.Session{}, err
	}
	return demogame.Session{ID: s.ID, ProviderID: s.ProviderID, GameID: s.GameID, Currency: s.Currency,
		ExpiresAt: s.ExpiresAt}, nil
}

// demoCatalog reads providers and games for the demo game.
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

// demoRoutes reads providers' route kinds for the demo game.
type demoRoutes struct{ g gateway.GameCatalog }

func (d demoRoutes) ProviderRoute(ctx context.Context, providerID string) (demogame.ProviderRoute, error) {
	r, err := d.g.ProviderRoute(ctx, providerID)
	if err != nil {
		return demogame.ProviderRoute{}, err
	}
	return demogame.ProviderRoute{Kind: r.Kind}, nil
}
