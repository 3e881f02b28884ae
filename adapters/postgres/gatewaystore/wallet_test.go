package gatewaystore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/lookupcache"
	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/wallet"
)

// The wallet core's two lookups (wallet.Catalog.ProviderGame,
// wallet.Sessions.Superseded), on the store and on the cache in front of
// it: the same answers.
func TestWalletLookups(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDatabase(t)
	gw := gatewaystore.NewGateway(pool)
	cache, err := lookupcache.NewWithConfig(gw, lookupcache.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"acme", "rival"} {
		if err := gw.UpsertProvider(ctx, gateway.Provider{ID: p, Name: p, Secret: "s", Enabled: true}); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range []struct{ id, provider, code string }{
		{"slot", "acme", "acme_slot"}, {"plain", "acme", ""}, {"twin1", "acme", "twin"}, {"twin2", "acme", "twin"},
		{"other", "rival", "acme_slot_too"},
	} {
		if err := gw.UpsertGame(ctx, gateway.Game{ID: g.id, ProviderID: g.provider, Name: g.id, Category: "slots", Enabled: true}); err != nil {
			t.Fatal(err)
		}
		if err := gw.SetProviderGameCode(ctx, g.id, g.code); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := gw.CreateClient(ctx, "c1", "Client", "sandbox"); err != nil {
		t.Fatal(err)
	}

	for name, store := range map[string]interface {
		wallet.Catalog
		wallet.Sessions
	}{"store": gw, "cache": cache} {
		t.Run(name+": ProviderGame", func(t *testing.T) {
			for _, tc := range []struct {
				provider, code, want string
				err                  error
			}{
				{"acme", "acme_slot", "slot", nil},
				{"acme", "plain", "plain", nil}, // no code of its own: known by our id
				{"acme", "twin", "", gateway.ErrAmbiguousGameCode},
				{"acme", "acme_slot_too", "", domain.ErrNotFound}, // rival's
				{"acme", "slot", "", domain.ErrNotFound},          // our id of a game with a code is Game's
				{"acme", "a\x00b", "", domain.ErrNotFound},
			} {
				g, err := store.ProviderGame(ctx, tc.provider, tc.code)
				if g.ID != tc.want || !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
					t.Errorf("ProviderGame(%s, %q) = %q, %v; want %q, %v", tc.provider, tc.code, g.ID, err, tc.want, tc.err)
				}
			}
		})
	}

	session := func(id, player, provider, currency string) gateway.GameSession {
		t.Helper()
		s := gateway.GameSession{ID: id, ClientID: "c1", PlayerID: player, ProviderID: provider, GameID: "slot",
			Currency: currency, LaunchTxID: "l-" + id, ExpiresAt: time.Now().Add(time.Hour)}
		if err := gw.CreateSession(ctx, s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	first := session("s1", "p1", "acme", "EUR")
	otherCurrency := session("s2", "p1", "acme", "BTC")
	otherProvider := session("s3", "p1", "rival", "EUR")
	otherPlayer := session("s4", "p2", "acme", "EUR")
	superseded := func(s gateway.GameSession) bool {
		t.Helper()
		a, err := gw.Superseded(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		b, err := cache.Superseded(ctx, s)
		if err != nil || a != b {
			t.Fatalf("cache %v, %v; store %v", b, err, a)
		}
		return a
	}
	for _, s := range []gateway.GameSession{first, otherCurrency, otherProvider, otherPlayer} {
		if superseded(s) {
			t.Fatalf("session %s superseded by a session of another player, provider or currency", s.ID)
		}
	}
	// A launch through this process's cache supersedes at once (created_at
	// is the inserting transaction's start on the database's clock: a
	// later round trip, a later microsecond).
	second := gateway.GameSession{ID: "s5", ClientID: "c1", PlayerID: "p1", ProviderID: "acme", GameID: "slot",
		Currency: "EUR", LaunchTxID: "l-s5", ExpiresAt: time.Now().Add(time.Hour)}
	if err := cache.CreateSession(ctx, second); err != nil {
		t.Fatal(err)
	}
	if !superseded(first) || superseded(second) || superseded(otherCurrency) || superseded(otherProvider) {
		t.Fatal("a second launch of p1 on acme in EUR supersedes s1 alone")
	}

	// A launch by another process (the store written directly) is seen
	// once the cache's TTL has passed; with the cache off, at once.
	exact, err := lookupcache.NewWithConfig(gw, lookupcache.Config{ProviderTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	if newer, err := exact.Superseded(ctx, otherPlayer); err != nil || newer {
		t.Fatalf("p2's only session: superseded %v, %v", newer, err)
	}
	session("s6", "p2", "acme", "EUR")
	if newer, err := exact.Superseded(ctx, otherPlayer); err != nil || !newer {
		t.Fatalf("p2's first session after another process launched p2 again: superseded %v, %v", newer, err)
	}
}
