package lookupcache_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/lookupcache"
	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/internal/eventually"
)

// counting is the real Postgres gateway, counting the reads that reach it.
type counting struct {
	*gatewaystore.Gateway
	providerReads, sessionReads, gameReads atomic.Int64
	failProvider                           atomic.Bool
}

var errDown = errors.New("store down")

func (c *counting) Provider(ctx context.Context, id string) (gateway.Provider, error) {
	c.providerReads.Add(1)
	if c.failProvider.Load() {
		return gateway.Provider{}, errDown
	}
	return c.Gateway.Provider(ctx, id)
}

func (c *counting) Game(ctx context.Context, id string) (gateway.Game, error) {
	c.gameReads.Add(1)
	return c.Gateway.Game(ctx, id)
}

func (c *counting) Session(ctx context.Context, id string) (gateway.GameSession, error) {
	c.sessionReads.Add(1)
	return c.Gateway.Session(ctx, id)
}

func newStore(t *testing.T) *counting {
	t.Helper()
	pool, _ := pgtest.NewDatabase(t)
	gw := gatewaystore.NewGateway(pool)
	ctx := context.Background()
	if _, err := gw.CreateClient(ctx, "casino", "Casino", "sandbox"); err != nil {
		t.Fatal(err)
	}
	if err := gw.UpsertProvider(ctx, gateway.Provider{ID: "acme", Name: "Acme", Secret: "s1", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	return &counting{Gateway: gw}
}

func newCache(t *testing.T, store lookupcache.Store, cfg lookupcache.Config) *lookupcache.Cache {
	t.Helper()
	c, err := lookupcache.NewWithConfig(store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func session(id string) gateway.GameSession {
	return gateway.GameSession{ID: id, ClientID: "casino", PlayerID: "p1", ProviderID: "acme", GameID: "g1",
		Currency: "EUR", LaunchTxID: "tx-" + id, ExpiresAt: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func TestSessionsAreReadOnceAndMissesAreNotKept(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := newStore(t)
	c := newCache(t, store, lookupcache.Config{})

	// Not found is not kept: a session launched after a miss is found.
	if _, err := c.Session(ctx, "s1"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("unknown session: %v, want ErrNotFound", err)
	}
	if err := c.CreateSession(ctx, session("s1")); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		got, err := c.Session(ctx, "s1")
		if err != nil {
			t.Fatal(err)
		}
		if want := session("s1"); got.ID != want.ID || got.ClientID != want.ClientID || got.PlayerID != want.PlayerID ||
			got.ProviderID != want.ProviderID || got.Currency != want.Currency || !got.ExpiresAt.Equal(want.ExpiresAt) {
			t.Fatalf("session %+v, want %+v", got, want)
		}
	}
	if n := store.sessionReads.Load(); n != 2 {
		t.Fatalf("%d session reads reached the store, want 2 (the miss and the first hit)", n)
	}
}

func TestSessionsAreBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := newStore(t)
	c := newCache(t, store, lookupcache.Config{MaxSessions: 2})
	for _, id := range []string{"a", "b", "c"} {
		if err := c.CreateSession(ctx, session(id)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Session(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	// "a" was the least recently used of three in a cache of two.
	before := store.sessionReads.Load()
	if _, err := c.Session(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if n := store.sessionReads.Load() - before; n != 1 {
		t.Fatalf("evicted session: %d reads, want 1", n)
	}
}

func TestProviders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name string
		ttl  time.Duration
		// run changes the provider in some way and returns the secret the
		// next lookup must see and how many store reads it must make.
		run func(t *testing.T, store *counting, c *lookupcache.Cache) (secret string, reads int64)
	}{
		{name: "kept within the TTL, though another process changed it", ttl: time.Minute,
			run: func(t *testing.T, store *counting, _ *lookupcache.Cache) (string, int64) {
				upsert(t, store.Gateway, "s2")
				return "s1", 0
			}},
		{name: "read again after the TTL", ttl: 20 * time.Millisecond,
			run: func(t *testing.T, store *counting, _ *lookupcache.Cache) (string, int64) {
				upsert(t, store.Gateway, "s2")
				time.Sleep(100 * time.Millisecond)
				return "s2", 1
			}},
		{name: "this process's own change is seen at once", ttl: time.Minute,
			run: func(t *testing.T, _ *counting, c *lookupcache.Cache) (string, int64) {
				upsert(t, c, "s3")
				return "s3", 1
			}},
		{name: "off: every lookup reads", ttl: -1,
			run: func(t *testing.T, store *counting, _ *lookupcache.Cache) (string, int64) {
				upsert(t, store.Gateway, "s4")
				return "s4", 1
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store := newStore(t)
			c := newCache(t, store, lookupcache.Config{ProviderTTL: tt.ttl})
			if p, err := c.Provider(ctx, "acme"); err != nil || p.Secret != "s1" || !p.Enabled {
				t.Fatalf("first lookup: %+v, %v", p, err)
			}
			secret, reads := tt.run(t, store, c)
			before := store.providerReads.Load()
			p, err := c.Provider(ctx, "acme")
			if err != nil {
				t.Fatal(err)
			}
			if p.Secret != secret {
				t.Errorf("secret %q, want %q", p.Secret, secret)
			}
			if n := store.providerReads.Load() - before; n != reads {
				t.Errorf("%d store reads, want %d", n, reads)
			}
		})
	}
}

func TestProviderMissesAndErrorsAreNotKept(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := newStore(t)
	c := newCache(t, store, lookupcache.Config{ProviderTTL: time.Minute})

	if _, err := c.Provider(ctx, "later"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("unknown provider: %v, want ErrNotFound", err)
	}
	upsert(t, store.Gateway, "x", "later")
	if p, err := c.Provider(ctx, "later"); err != nil || p.Secret != "x" {
		t.Fatalf("provider added after a miss: %+v, %v", p, err)
	}

	store.failProvider.Store(true)
	if _, err := c.Provider(ctx, "acme"); !errors.Is(err, errDown) {
		t.Fatalf("store error: %v, want it passed on", err)
	}
	store.failProvider.Store(false)
	if p, err := c.Provider(ctx, "acme"); err != nil || p.Secret != "s1" {
		t.Fatalf("after the error: %+v, %v", p, err)
	}
}

// TestGames: a dialect names the game on every call, so a game read is
// kept for the TTL; a miss is not kept, and a change made by another
// process is seen once the TTL has passed (waited for, not slept on).
func TestGames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name  string
		ttl   time.Duration
		reads int64 // store reads of three lookups of one game
	}{
		{"kept within the TTL", time.Minute, 1},
		{"off: every lookup reads", -1, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store := newStore(t)
			game(t, store.Gateway, "g1", true)
			c := newCache(t, store, lookupcache.Config{ProviderTTL: tt.ttl})
			for range 3 {
				if g, err := c.Game(ctx, "g1"); err != nil || g.ProviderID != "acme" || !g.Enabled {
					t.Fatalf("lookup: %+v, %v", g, err)
				}
			}
			if n := store.gameReads.Load(); n != tt.reads {
				t.Errorf("%d store reads, want %d", n, tt.reads)
			}
		})
	}

	t.Run("misses are not kept; changes are seen after the TTL", func(t *testing.T) {
		t.Parallel()
		store := newStore(t)
		c := newCache(t, store, lookupcache.Config{ProviderTTL: 50 * time.Millisecond})
		if _, err := c.Game(ctx, "g2"); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("unknown game: %v, want ErrNotFound", err)
		}
		game(t, store.Gateway, "g2", true)
		if g, err := c.Game(ctx, "g2"); err != nil || !g.Enabled {
			t.Fatalf("game added after a miss: %+v, %v", g, err)
		}
		game(t, store.Gateway, "g2", false)
		eventually.True(t, 10*time.Second, "the disabled game read again once the TTL (50 ms) passed", func() bool {
			g, err := c.Game(ctx, "g2")
			if err != nil {
				t.Fatal(err)
			}
			return !g.Enabled
		})
	})
}

func game(t *testing.T, gw *gatewaystore.Gateway, id string, enabled bool) {
	t.Helper()
	if err := gw.UpsertGame(context.Background(), gateway.Game{ID: id, ProviderID: "acme", Name: id, Category: "slots", Enabled: enabled}); err != nil {
		t.Fatal(err)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	store := newStore(t)
	for _, cfg := range []lookupcache.Config{{SessionTTL: -time.Second}, {MaxSessions: -1}, {MaxProviders: -5}, {MaxGames: -1}} {
		if _, err := lookupcache.NewWithConfig(store, cfg); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
	if _, err := lookupcache.NewWithConfig(nil, lookupcache.Config{}); err == nil {
		t.Error("nil store: no error")
	}
}

// upsert sets acme's (or the named provider's) secret through w.
func upsert(t *testing.T, w interface {
	UpsertProvider(context.Context, gateway.Provider) error
}, secret string, id ...string) {
	t.Helper()
	pid := "acme"
	if len(id) > 0 {
		pid = id[0]
	}
	if err := w.UpsertProvider(context.Background(), gateway.Provider{ID: pid, Name: pid, Secret: secret, Enabled: true}); err != nil {
		t.Fatal(err)
	}
}
