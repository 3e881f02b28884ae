// Package lookupcache keeps the provider wallet's per-call lookups in
// memory: the provider (its secret and whether it is enabled), the game
// session, and the games a dialect's call names. Every wallet call needs both before it reaches the ledger, and
// `make bench` showed them as two Postgres round trips per call — 16 % of
// the service's CPU and two statements per call on the database, outside
// the group commit.
//
// The two are cached differently because they change differently:
//
//   - A game session is written once, at launch, and never updated or
//     deleted (migrations/00002_gateway.sql; only CreateSession writes the
//     table). A session that was found is therefore cached as it is, with
//     no staleness possible; the bound on entries and the idle expiry only
//     limit memory. A session that was not found is not cached, so one
//     launched a moment later is found on its first call.
//   - A provider can be changed by UpsertProvider (its secret, or disabled)
//     from another process, so it is kept for a short TTL only: a change
//     reaches every API process within that TTL. A change made through this
//     cache (UpsertProvider on it) is seen at once by this process. Unknown
//     providers and errors are not cached.
//   - A game (its provider, its provider's code, whether it is enabled) is
//     changed by the catalog's admin calls, like a provider, and is kept for
//     the same TTL. The provider dialects (Caleta's game_code, Evolution's
//     table, Red Tiger's game key) name the game on every call, usually by
//     the provider's own code rather than our id, so without the cache each
//     call read one or two games before it reached the ledger. A launch
//     checks that its game is enabled through the same cache: a game
//     disabled by another process stops launching within the TTL.
//   - Whether a session is superseded (a newer launch of its player on its
//     provider in its currency: wallet.Core.Bet) is asked on every bet. A
//     superseded session stays superseded, so that answer is kept; that a
//     session is the newest of its player is kept for the provider TTL,
//     per player, provider and currency, and forgotten at once when this
//     process launches a session of theirs (CreateSession on the cache). A
//     launch on another process supersedes within the TTL, as a provider
//     change reaches it. Without it every bet cost a database round trip:
//     +19 % of the service's CPU per bet (docs/benchmarks.md).
package lookupcache

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/wallet"
)

// Defaults of Config.
const (
	DefaultProviderTTL = time.Second
	DefaultSessionTTL  = 30 * time.Minute
	DefaultMaxSessions = 50_000
	DefaultMaxProvider = 1_024
	DefaultMaxGames    = 20_000
)

// Config sets the cache's bounds.
type Config struct {
	// ProviderTTL is how long a provider or a game read from the store is
	// used before it is read again: the longest a change made by another
	// process (a rotated secret, a disabled provider or game) goes unseen
	// here, and how long a session is taken for its player's newest (a
	// launch by another process supersedes it within that time). Negative
	// turns these caches off. Default DefaultProviderTTL.
	ProviderTTL time.Duration
	// SessionTTL is how long a session nobody asked for stays in memory.
	// Sessions never change, so this bounds memory, not staleness.
	// Default DefaultSessionTTL.
	SessionTTL time.Duration
	// MaxSessions bounds the sessions kept (least recently used go first).
	// At about 300 bytes a session the default holds about 15 MB.
	MaxSessions int
	// MaxProviders bounds the providers kept. Default DefaultMaxProvider.
	MaxProviders int
	// MaxGames bounds the games kept (least recently used go first).
	// Default DefaultMaxGames.
	MaxGames int
}

func (c *Config) setDefaults() {
	if c.ProviderTTL == 0 {
		c.ProviderTTL = DefaultProviderTTL
	}
	if c.SessionTTL == 0 {
		c.SessionTTL = DefaultSessionTTL
	}
	if c.MaxSessions == 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	if c.MaxProviders == 0 {
		c.MaxProviders = DefaultMaxProvider
	}
	if c.MaxGames == 0 {
		c.MaxGames = DefaultMaxGames
	}
}

// Validate reports every invalid field.
func (c Config) Validate() error {
	var errs []error
	if c.SessionTTL < 0 {
		errs = append(errs, fmt.Errorf("lookupcache SessionTTL %s is negative", c.SessionTTL))
	}
	if c.MaxSessions < 1 {
		errs = append(errs, fmt.Errorf("lookupcache MaxSessions %d must be positive", c.MaxSessions))
	}
	if c.MaxProviders < 1 {
		errs = append(errs, fmt.Errorf("lookupcache MaxProviders %d must be positive", c.MaxProviders))
	}
	if c.MaxGames < 1 {
		errs = append(errs, fmt.Errorf("lookupcache MaxGames %d must be positive", c.MaxGames))
	}
	return errors.Join(errs...)
}

// Store is what the cache reads through to: the gateway's providers, games
// and sessions, and the provider upsert this process makes.
type Store interface {
	wallet.Catalog
	wallet.Sessions
	UpsertProvider(ctx context.Context, p gateway.Provider) error
}

// Cache is an gateway.Catalog and gateway.Sessions that reads through to a Store.
type Cache struct {
	Store
	providers *expirable.LRU[string, gateway.Provider] // nil: off
	games     *expirable.LRU[string, gateway.Game]     // nil: off
	sessions  *expirable.LRU[string, gateway.GameSession]
	// superseded holds the sessions known to be superseded; newest, by
	// client, player, provider and currency, the session known to be the
	// newest of theirs (nil: off, with the provider cache).
	superseded *expirable.LRU[string, struct{}]
	newest     *expirable.LRU[string, string]
}

var (
	_ wallet.Catalog  = (*Cache)(nil)
	_ wallet.Sessions = (*Cache)(nil)
)

// NewWithConfig returns a cache in front of store.
func NewWithConfig(store Store, cfg Config) (*Cache, error) {
	if store == nil {
		return nil, errors.New("lookupcache: nil store")
	}
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Cache{Store: store, sessions: expirable.NewLRU[string, gateway.GameSession](cfg.MaxSessions, nil, cfg.SessionTTL),
		superseded: expirable.NewLRU[string, struct{}](cfg.MaxSessions, nil, cfg.SessionTTL)}
	if cfg.ProviderTTL > 0 {
		c.providers = expirable.NewLRU[string, gateway.Provider](cfg.MaxProviders, nil, cfg.ProviderTTL)
		c.games = expirable.NewLRU[string, gateway.Game](cfg.MaxGames, nil, cfg.ProviderTTL)
		c.newest = expirable.NewLRU[string, string](cfg.MaxSessions, nil, cfg.ProviderTTL)
	}
	return c, nil
}

// Provider returns the provider, from memory when it was read within the
// TTL.
func (c *Cache) Provider(ctx context.Context, id string) (gateway.Provider, error) {
	if c.providers == nil {
		return c.Store.Provider(ctx, id)
	}
	if p, ok := c.providers.Get(id); ok {
		return p, nil
	}
	p, err := c.Store.Provider(ctx, id)
	if err != nil {
		return gateway.Provider{}, err
	}
	c.providers.Add(id, p)
	return p, nil
}

// Game returns the game, from memory when it was read within the TTL
// (Config.ProviderTTL). Unknown games and errors are not kept.
func (c *Cache) Game(ctx context.Context, id string) (gateway.Game, error) {
	if c.games == nil {
		return c.Store.Game(ctx, id)
	}
	if g, ok := c.games.Get(id); ok {
		return g, nil
	}
	g, err := c.Store.Game(ctx, id)
	if err != nil {
		return gateway.Game{}, err
	}
	c.games.Add(id, g)
	return g, nil
}

// ProviderGame returns provider's game of that provider code, from memory
// when it was read within the TTL, as Game.
func (c *Cache) ProviderGame(ctx context.Context, provider, code string) (gateway.Game, error) {
	if c.games == nil {
		return c.Store.ProviderGame(ctx, provider, code)
	}
	key := "code\x00" + provider + "\x00" + code
	if g, ok := c.games.Get(key); ok {
		return g, nil
	}
	g, err := c.Store.ProviderGame(ctx, provider, code)
	if err != nil {
		return gateway.Game{}, err
	}
	c.games.Add(key, g)
	return g, nil
}

// Superseded answers from memory that a session is superseded (it never
// stops being), or that it is its player's newest when the store said so
// within the provider TTL and this process launched no session of theirs
// since; else it asks the store.
func (c *Cache) Superseded(ctx context.Context, s gateway.GameSession) (bool, error) {
	if _, ok := c.superseded.Get(s.ID); ok {
		return true, nil
	}
	key := sessionKey(s)
	if c.newest != nil {
		if id, ok := c.newest.Get(key); ok && id == s.ID {
			return false, nil
		}
	}
	newer, err := c.Store.Superseded(ctx, s)
	switch {
	case err != nil:
	case newer:
		c.superseded.Add(s.ID, struct{}{})
	case c.newest != nil:
		c.newest.Add(key, s.ID)
	}
	return newer, err
}

// CreateSession writes through and forgets which session was its
// player's newest, so this process sees the new one supersede at once.
func (c *Cache) CreateSession(ctx context.Context, s gateway.GameSession) error {
	err := c.Store.CreateSession(ctx, s)
	if c.newest != nil {
		c.newest.Remove(sessionKey(s)) // also after an error: the write may have landed
	}
	return err
}

// sessionKey is what a newer session supersedes by: client, player,
// provider and currency.
func sessionKey(s gateway.GameSession) string {
	return s.ClientID + "\x00" + s.PlayerID + "\x00" + s.ProviderID + "\x00" + s.Currency
}

// UpsertProvider writes through and forgets the cached copy, so this
// process sees its own change at once.
func (c *Cache) UpsertProvider(ctx context.Context, p gateway.Provider) error {
	err := c.Store.UpsertProvider(ctx, p)
	if c.providers != nil {
		c.providers.Remove(p.ID) // also after an error: the write may have landed
	}
	return err
}

// Session returns the game session, from memory once it has been found.
func (c *Cache) Session(ctx context.Context, id string) (gateway.GameSession, error) {
	if s, ok := c.sessions.Get(id); ok {
		return s, nil
	}
	s, err := c.Store.Session(ctx, id)
	if err != nil {
		return gateway.GameSession{}, err
	}
	c.sessions.Add(id, s)
	return s, nil
}
