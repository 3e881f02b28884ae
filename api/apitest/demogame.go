package apitest

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"

	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/demogame"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// The server is the demo game's host, as cmd/pitboss mounts it.
var _ demogame.Host = (*api.Server)(nil)

// WalletCall is one call the demo game made to the provider wallet, as the
// recording proxy between them saw it.
type WalletCall struct {
	Path, ProviderID, Signature string
	Body                        []byte
}

// mountDemoGame mounts the demo game on h's server. It reaches the wallet
// through a proxy that records each call into h.WalletCalls (buffered; a
// call that does not fit is not recorded) before forwarding it to the
// loopback listener. Without a catalog the game knows no provider routes:
// every provider is the demo kind.
func (h *Harness) mountDemoGame(catalog bool) {
	h.t.Helper()
	target, err := url.Parse(h.URL)
	if err != nil {
		h.t.Fatal(err)
	}
	h.WalletCalls = make(chan WalletCall, 1024)
	fwd := httputil.NewSingleHostReverseProxy(target)
	h.WalletProxy = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		select {
		case h.WalletCalls <- WalletCall{Path: r.URL.Path, ProviderID: r.Header.Get("X-Provider-Id"),
			Signature: r.Header.Get("X-Signature"), Body: b}:
		default:
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		fwd.ServeHTTP(w, r)
	}))
	var routes demogame.Routes
	if catalog {
		routes = h.Gateway
	}
	mountDemoGame(h.t, h.Server, h.WalletProxy.URL, h.Gateway, h.Gateway, routes, h.log, h.Clock.Now)
}

// mountDemoGame mounts the game, signing its wallet calls at now.
func mountDemoGame(t testing.TB, srv *api.Server, walletURL string, sessions demogame.Sessions, catalog gateway.Catalog,
	routes demogame.Routes, logger *slog.Logger, now func() time.Time) {
	t.Helper()
	g, err := demogame.New(demogame.Config{WalletURL: walletURL, Host: srv, Sessions: sessions, Catalog: catalog,
		Routes: routes, Logger: logger, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	g.Register(srv.Echo())
}

// noStores know no session, provider or game: enough to mount the game
// where only its routes are read.
type noStores struct{}

func (noStores) Session(context.Context, string) (gateway.GameSession, error) {
	return gateway.GameSession{}, domain.ErrNotFound
}

func (noStores) Provider(context.Context, string) (gateway.Provider, error) {
	return gateway.Provider{}, domain.ErrNotFound
}

func (noStores) Game(context.Context, string) (gateway.Game, error) {
	return gateway.Game{}, domain.ErrNotFound
}
