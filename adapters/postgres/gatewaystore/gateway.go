// Package gatewaystore is the Postgres store of the gateway's model
// (package gateway): clients and their API keys, the catalog of providers
// and games with their routes and sealed secrets, game sessions, the
// signed launch's client settings, API usage, the shared rate-limit
// windows and the relay and projection lag. Each type implements gateway
// ports; the compiler checks which.
package gatewaystore

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/secretbox"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/wallet"
)

// Gateway stores clients, API keys, providers, games and game sessions.
type Gateway struct {
	pool *pgxpool.Pool
	box  *secretbox.Box   // seals provider secrets; nil: plain text (provider_secrets.go)
	now  func() time.Time // when API keys expire; nil: the database's now()
}

// NewGateway returns the gateway store.
func NewGateway(pool *pgxpool.Pool) *Gateway { return &Gateway{pool: pool} }

// WithKeyClock makes the gateway judge API keys' expiry (authentication,
// and the start of a rotation's grace period) at now instead of the
// database's clock, so a test can move time past an expiry. It returns g
// for chaining after NewGateway.
func (g *Gateway) WithKeyClock(now func() time.Time) *Gateway {
	g.now = now
	return g
}

// keyNow is the moment to judge keys' expiry at, as a query argument: the
// key clock's time, or NULL for the database's now() (the queries read it
// as COALESCE($n::timestamptz, now())).
func (g *Gateway) keyNow() *time.Time {
	if g.now == nil {
		return nil
	}
	t := g.now()
	return &t
}

var (
	_ gateway.Keys     = (*Gateway)(nil)
	_ wallet.Catalog   = (*Gateway)(nil)
	_ wallet.Sessions  = (*Gateway)(nil)
	_ gateway.Sessions = (*Gateway)(nil)
	_ gateway.Wallets  = (*Gateway)(nil)
)

// AuthenticateKey finds a live key by its hash.
func (g *Gateway) AuthenticateKey(ctx context.Context, keyHash []byte) (gateway.Principal, error) {
	var p gateway.Principal
	err := g.pool.QueryRow(ctx, `
		SELECT k.id, k.client_id, k.environment, k.scopes, c.plan FROM api_keys k JOIN clients c ON c.id = k.client_id
		WHERE k.key_hash = $1 AND k.revoked_at IS NULL
			AND (k.expires_at IS NULL OR k.expires_at > COALESCE($2::timestamptz, now()))`,
		keyHash, g.keyNow()).Scan(&p.KeyID, &p.ClientID, &p.Environment, &p.Scopes, &p.Plan)
	if errors.Is(err, pgx.ErrNoRows) {
		return gateway.Principal{}, domain.ErrNotFound
	}
	if err != nil {
		return gateway.Principal{}, fmt.Errorf("authenticate key: %w", err)
	}
	return p, nil
}

// Provider returns a provider by id.
func (g *Gateway) Provider(ctx context.Context, id string) (gateway.Provider, error) {
	if hasNUL(id) {
		return gateway.Provider{}, domain.ErrNotFound
	}
	var (
		p                    gateway.Provider
		sealed, launchSealed []byte
	)
	err := g.pool.QueryRow(ctx, `
		SELECT id, name, secret, secret_sealed, enabled, signature_scheme, wallet_protocol, wallet_public_key,
			launch_secret_sealed, launch_key_fingerprint
		FROM providers WHERE id = $1`, id).
		Scan(&p.ID, &p.Name, &p.Secret, &sealed, &p.Enabled, &p.SignatureScheme, &p.WalletProtocol, &p.WalletPublicKey,
			&launchSealed, &p.LaunchKeyFingerprint)
	if errors.Is(err, pgx.ErrNoRows) {
		return gateway.Provider{}, domain.ErrNotFound
	}
	if err != nil {
		return gateway.Provider{}, fmt.Errorf("provider %s: %w", id, err)
	}
	if p.Secret, err = g.openProviderSecret(id, p.Secret, sealed); err != nil {
		return gateway.Provider{}, err
	}
	if p.LaunchSecret, err = g.openLaunchSecret(id, launchSealed); err != nil {
		return gateway.Provider{}, err
	}
	return p, nil
}

// Game returns a game by id.
func (g *Gateway) Game(ctx context.Context, id string) (gateway.Game, error) {
	if hasNUL(id) {
		return gateway.Game{}, domain.ErrNotFound
	}
	rows, err := g.pool.Query(ctx, `SELECT `+gameCols+` FROM games WHERE id = $1`, id)
	if err != nil {
		return gateway.Game{}, fmt.Errorf("game %s: %w", id, err)
	}
	x, err := pgx.CollectExactlyOneRow(rows, scanGame)
	if errors.Is(err, pgx.ErrNoRows) {
		return gateway.Game{}, domain.ErrNotFound
	}
	if err != nil {
		return gateway.Game{}, fmt.Errorf("game %s: %w", id, err)
	}
	return x, nil
}

// ProviderGame is provider's game whose provider code is code: a game
// without a code of its own is known by its id (Game's Code). Two games
// of one provider under one code is gateway.ErrAmbiguousGameCode.
func (g *Gateway) ProviderGame(ctx context.Context, provider, code string) (gateway.Game, error) {
	if hasNUL(provider) || hasNUL(code) {
		return gateway.Game{}, domain.ErrNotFound
	}
	rows, err := g.pool.Query(ctx, `
		SELECT `+gameCols+`
		FROM games
		WHERE provider_id = $1 AND (provider_game_code = $2 OR (provider_game_code = '' AND id = $2))
		ORDER BY id LIMIT 2`, provider, code)
	if err != nil {
		return gateway.Game{}, fmt.Errorf("game %s of provider %s: %w", code, provider, err)
	}
	games, err := pgx.CollectRows(rows, scanGame)
	switch {
	case err != nil:
		return gateway.Game{}, fmt.Errorf("game %s of provider %s: %w", code, provider, err)
	case len(games) == 0:
		return gateway.Game{}, domain.ErrNotFound
	case len(games) > 1:
		return gateway.Game{}, fmt.Errorf("game code %s of provider %s: %w", code, provider, gateway.ErrAmbiguousGameCode)
	}
	return games[0], nil
}

// Superseded reports whether a session of s's client, player, provider and
// currency was created after s (wallet.Core.Bet: a superseded session
// takes no new bet).
func (g *Gateway) Superseded(ctx context.Context, s gateway.GameSession) (bool, error) {
	var newer bool
	err := g.pool.QueryRow(ctx, `
		SELECT EXISTS (
			SELECT 1 FROM game_sessions n, game_sessions o
			WHERE o.id = $1 AND n.client_id = $2 AND n.player_id = $3 AND n.provider_id = $4 AND n.currency = $5
			  AND n.created_at > o.created_at)`, s.ID, s.ClientID, s.PlayerID, s.ProviderID, s.Currency).Scan(&newer)
	if err != nil {
		return false, fmt.Errorf("is session %s superseded: %w", s.ID, err)
	}
	return newer, nil
}

// CreateSession stores a launched game session.
func (g *Gateway) CreateSession(ctx context.Context, s gateway.GameSession) error {
	_, err := g.pool.Exec(ctx, `
		INSERT INTO game_sessions (id, client_id, player_id, provider_id, game_id, currency, transaction_id, return_url,
			expires_at, operator_token)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		s.ID, s.ClientID, s.PlayerID, s.ProviderID, s.GameID, s.Currency, s.LaunchTxID, s.ReturnURL, s.ExpiresAt,
		s.OperatorToken)
	if err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	return nil
}

// Session returns a session by id.
func (g *Gateway) Session(ctx context.Context, id string) (gateway.GameSession, error) {
	var s gateway.GameSession
	err := g.pool.QueryRow(ctx, `
		SELECT id, client_id, player_id, provider_id, game_id, currency, transaction_id, return_url, expires_at,
			operator_token
		FROM game_sessions WHERE id = $1`, id).
		Scan(&s.ID, &s.ClientID, &s.PlayerID, &s.ProviderID, &s.GameID, &s.Currency, &s.LaunchTxID, &s.ReturnURL, &s.ExpiresAt,
			&s.OperatorToken)
	if errors.Is(err, pgx.ErrNoRows) {
		return gateway.GameSession{}, domain.ErrNotFound
	}
	if err != nil {
		return gateway.GameSession{}, fmt.Errorf("session: %w", err)
	}
	return s, nil
}

// WalletBalances lists the committed balances of the client's wallets, or
// of one player's, per currency.
func (g *Gateway) WalletBalances(ctx context.Context, clientID, playerID string) ([]gateway.AccountBalance, error) {
	prefix := "client:" + clientID + ":"
	if playerID != "" {
		prefix = "player:" + clientID + ":" + playerID + ":"
	}
	rows, err := g.pool.Query(ctx, `
		SELECT currency, balance, last_position FROM accounts
		WHERE owner = $1 ORDER BY currency`, prefix)
	if err != nil {
		return nil, fmt.Errorf("wallet balances: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (gateway.AccountBalance, error) {
		var b gateway.AccountBalance
		err := r.Scan(&b.Currency, &b.Minor, &b.LastPosition)
		return b, err
	})
}

// CreateClient adds a client. It is idempotent: an existing id is kept.
func (g *Gateway) CreateClient(ctx context.Context, id, name, environment string) (created bool, err error) {
	tag, err := g.pool.Exec(ctx, `INSERT INTO clients (id, name, environment) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING`,
		id, name, environment)
	if err != nil {
		return false, fmt.Errorf("create client %s: %w", id, err)
	}
	return tag.RowsAffected() == 1, nil
}

// IssueKey creates a new API key for a client and returns it. The key is
// shown once: only its hash is stored.
func (g *Gateway) IssueKey(ctx context.Context, clientID string, scopes []string, expiresAt *time.Time) (key, keyID string, err error) {
	var env string
	if err := g.pool.QueryRow(ctx, `SELECT environment FROM clients WHERE id = $1`, clientID).Scan(&env); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return "", "", fmt.Errorf("client %s: %w", clientID, domain.ErrNotFound)
		}
		return "", "", fmt.Errorf("client %s: %w", clientID, err)
	}
	idb := make([]byte, 6)
	sec := make([]byte, 24)
	_, _ = rand.Read(idb)
	_, _ = rand.Read(sec)
	keyID = hex.EncodeToString(idb)
	tag := "live"
	if env == "sandbox" {
		tag = "test"
	}
	key = "pb_" + tag + "_" + keyID + "_" + strings.TrimRight(base64.RawURLEncoding.EncodeToString(sec), "=")
	_, err = g.pool.Exec(ctx, `INSERT INTO api_keys (id, client_id, key_hash, environment, scopes, expires_at) VALUES ($1,$2,$3,$4,$5,$6)`,
		keyID, clientID, gateway.HashKey(key), env, scopes, expiresAt)
	if err != nil {
		return "", "", fmt.Errorf("issue key: %w", err)
	}
	return key, keyID, nil
}

// UpsertProvider creates or updates a provider. An empty SignatureScheme
// creates it on gateway.DefaultSignatureScheme and leaves an existing
// provider on the scheme it has (migration 00012 put every provider of
// before on v1), so rewriting a provider's name or secret never moves it.
// WalletProtocol and WalletPublicKey (migration 00016) are alike: empty
// creates a pitboss provider without a key and keeps an existing
// provider's; a caleta provider needs a key (gateway.CheckWalletCredentials).
func (g *Gateway) UpsertProvider(ctx context.Context, p gateway.Provider) error {
	if p.SignatureScheme != "" {
		if err := gateway.CheckSignatureScheme("signature_scheme", p.SignatureScheme); err != nil {
			return fmt.Errorf("upsert provider %s: %w: %w", p.ID, err, domain.ErrInvalidArgument)
		}
	}
	if p.WalletProtocol != "" {
		if err := gateway.CheckWalletProtocol("wallet_protocol", p.WalletProtocol); err != nil {
			return fmt.Errorf("upsert provider %s: %w: %w", p.ID, err, domain.ErrInvalidArgument)
		}
	}
	if p.WalletPublicKey != "" || p.WalletProtocol != "" {
		if err := gateway.CheckWalletCredentials("wallet_public_key", p.WalletProtocol, p.WalletPublicKey); err != nil {
			return fmt.Errorf("upsert provider %s: %w: %w", p.ID, err, domain.ErrInvalidArgument)
		}
	}
	plain, sealed := g.sealProviderSecret(p.ID, p.Secret)
	_, err := g.pool.Exec(ctx, `
		INSERT INTO providers (id, name, secret, secret_sealed, enabled, signature_scheme, wallet_protocol, wallet_public_key)
		VALUES ($1, $2, $3, $4, $5, COALESCE(NULLIF($6, ''), $7), COALESCE(NULLIF($8, ''), $9), $10)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, secret = excluded.secret,
			secret_sealed = excluded.secret_sealed, enabled = excluded.enabled,
			signature_scheme = COALESCE(NULLIF($6, ''), providers.signature_scheme),
			wallet_protocol = COALESCE(NULLIF($8, ''), providers.wallet_protocol),
			wallet_public_key = COALESCE(NULLIF($10, ''), providers.wallet_public_key)`,
		p.ID, p.Name, plain, sealed, p.Enabled, p.SignatureScheme, gateway.DefaultSignatureScheme,
		p.WalletProtocol, gateway.DefaultWalletProtocol, p.WalletPublicKey)
	if err != nil {
		return fmt.Errorf("upsert provider %s: %w", p.ID, err)
	}
	return nil
}

// UpsertGame creates or updates a game. An operator's write decides its
// enabled flag from then on: a later catalog sync enables again only a
// game a sync disabled (migration 00032), so sync_disabled is cleared.
// Its blocked countries are the catalog sync's and are left alone.
func (g *Gateway) UpsertGame(ctx context.Context, x gateway.Game) error {
	_, err := g.pool.Exec(ctx, `
		INSERT INTO games (id, provider_id, name, category, enabled) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (id) DO UPDATE SET provider_id = excluded.provider_id, name = excluded.name,
			category = excluded.category, enabled = excluded.enabled, sync_disabled = false`,
		x.ID, x.ProviderID, x.Name, x.Category, x.Enabled)
	if err != nil {
		return fmt.Errorf("upsert game %s: %w", x.ID, err)
	}
	return nil
}

// hasNUL reports a NUL byte in a key a caller looks up. PostgreSQL refuses
// NUL in text (an error, which callers answered as a 500), and no stored id
// holds one: such a key names nothing. The provider protocols' paths name
// their provider (/provider/redtiger/{provider}/...), and reach Provider
// before any other check.
func hasNUL(s string) bool { return strings.IndexByte(s, 0) >= 0 }
