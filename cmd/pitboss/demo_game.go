package main

import (
	"log/slog"

	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/demogame"
	"github.com/pitboss/pitboss/gateway"
)

// Wiring of the built-in demo game (docs/providers-and-games.md): its own
// package, mounted on the API server's Echo instance. Neither package
// imports the other; the server is the game's Host, and the game reads the
// server's own gateway stores.

var _ demogame.Host = (*api.Server)(nil)

// mountDemoGame adds /demo/... to srv; the game calls the provider wallet
// at walletURL.
func mountDemoGame(srv *api.Server, walletURL string, sessions gateway.Sessions, catalog gateway.Catalog,
	games gateway.GameCatalog, log *slog.Logger) error {
	g, err := demogame.New(demogame.Config{WalletURL: walletURL, Host: srv, Sessions: sessions, Catalog: catalog,
		Routes: games, Logger: log})
	if err != nil {
		return err
	}
	g.Register(srv.Echo())
	return nil
}
