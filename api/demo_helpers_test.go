package api_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/demogame"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// The built-in demo game is its own package, mounted on the server by
// cmd/pitboss; the tests that route to it mount it the same way.

var _ demogame.Host = (*api.Server)(nil)

// mountDemo mounts the demo game on srv, reading sessions, providers and
// routes from the server's own stores and calling the wallet at walletURL.
// A nil routes is a server without a game catalog: every provider is the
// demo kind.
func mountDemo(t testing.TB, srv *api.Server, walletURL string, sessions demogame.Sessions, catalog gateway.Catalog,
	routes demogame.Routes, logger *slog.Logger) {
	t.Helper()
	g, err := demogame.New(demogame.Config{WalletURL: walletURL, Host: srv, Sessions: sessions, Catalog: catalog,
		Routes: routes, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	g.Register(srv.Echo())
}

// noDemoStores know no session, provider or game: enough to mount the
// game where only its routes are read.
type noDemoStores struct{}

func (noDemoStores) Session(context.Context, string) (gateway.GameSession, error) {
	return gateway.GameSession{}, domain.ErrNotFound
}

func (noDemoStores) Provider(context.Context, string) (gateway.Provider, error) {
	return gateway.Provider{}, domain.ErrNotFound
}

func (noDemoStores) Game(context.Context, string) (gateway.Game, error) {
	return gateway.Game{}, domain.ErrNotFound
}
