package gatewaystore

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// The admin side of the gateway store: clients and the life cycle of their
// API keys (migration 00004). See docs/keys-and-admin.md.

var _ gateway.AdminClients = (*Gateway)(nil)

// newAPIKey makes a key for environment: "pb_test_" (sandbox) or "pb_live_",
// 12 hex digits of id, "_", and 192 random bits in base64url. The part
// before the secret is the key's prefix, safe to show and log.
func newAPIKey(environment string) (key, id, prefix string) {
	idb := make([]byte, 6)
	sec := make([]byte, 24)
	_, _ = rand.Read(idb)
	_, _ = rand.Read(sec)
	id = hex.EncodeToString(idb)
	prefix = keyPrefix(environment, id)
	return prefix + "_" + base64.RawURLEncoding.EncodeToString(sec), id, prefix
}

func keyPrefix(environment, id string) string {
	if environment == gateway.EnvironmentSandbox {
		return "pb_test_" + id
	}
	return "pb_live_" + id
}

const clientColumns = `id, name, environment, plan, created_at`

func scanClient(r pgx.CollectableRow) (gateway.Client, error) {
	var c gateway.Client
	err := r.Scan(&c.ID, &c.Name, &c.Environment, &c.Plan, &c.CreatedAt)
	return c, err
}

// AddClient creates a client; the same id with the same settings returns
// the existing one (created false), with other settings a
// *gateway.ClientExistsError naming the first that differs.
func (g *Gateway) AddClient(ctx context.Context, c gateway.Client) (gateway.Client, bool, error) {
	rows, _ := g.pool.Query(ctx, `
		INSERT INTO clients (id, name, environment, plan) VALUES ($1, $2, $3, $4)
		ON CONFLICT (id) DO NOTHING RETURNING `+clientColumns, c.ID, c.Name, c.Environment, c.Plan)
	out, err := pgx.CollectExactlyOneRow(rows, scanClient)
	if err == nil {
		return out, true, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return gateway.Client{}, false, fmt.Errorf("create client %s: %w", c.ID, err)
	}
	existing, err := g.GetClient(ctx, c.ID)
	if err != nil {
		return gateway.Client{}, false, err
	}
	for _, f := range []struct{ name, have, want string }{
		{"environment", existing.Environment, c.Environment},
		{"name", existing.Name, c.Name},
		{"plan", existing.Plan, c.Plan},
	} {
		if f.have != f.want {
			return gateway.Client{}, false, &gateway.ClientExistsError{ID: c.ID, Field: f.name, Existing: f.have, Given: f.want}
		}
	}
	return existing, false, nil
}

// ListClients returns one page of clients ordered by id, and the total.
func (g *Gateway) ListClients(ctx context.Context, page, perPage int) ([]gateway.Client, int64, error) {
	var total int64
	if err := g.pool.QueryRow(ctx, `SELECT count(*) FROM clients`).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count clients: %w", err)
	}
	rows, _ := g.pool.Query(ctx, `SELECT `+clientColumns+` FROM clients ORDER BY id LIMIT $1 OFFSET $2`,
		perPage, int64(page-1)*int64(perPage))
	list, err := pgx.CollectRows(rows, scanClient)
	if err != nil {
		return nil, 0, fmt.Errorf("list clients: %w", err)
	}
	return list, total, nil
}

// GetClient returns a client by id.
func (g *Gateway) GetClient(ctx context.Context, id string) (gateway.Client, error) {
	rows, _ := g.pool.Query(ctx, `SELECT `+clientColumns+` FROM clients WHERE id = $1`, id)
	c, err := pgx.CollectExactlyOneRow(rows, scanClient)
	if errors.Is(err, pgx.ErrNoRows) {
		return gateway.Client{}, fmt.Errorf("client %s: %w", id, domain.ErrNotFound)
	}
	if err != nil {
		return gateway.Client{}, fmt.Errorf("client %s: %w", id, err)
	}
	return c, nil
}

// UpdateClient changes a client's name and plan.
func (g *Gateway) UpdateClient(ctx context.Context, id string, ch gateway.ClientChange) (gateway.Client, error) {
	rows, _ := g.pool.Query(ctx, `
		UPDATE clients SET name = COALESCE($2, name), plan = COALESCE($3, plan) WHERE id = $1
		RETURNING `+clientColumns, id, ch.Name, ch.Plan)
	c, err := pgx.CollectExactlyOneRow(rows, scanClient)
	if errors.Is(err, pgx.ErrNoRows) {
		return gateway.Client{}, fmt.Errorf("client %s: %w", id, domain.ErrNotFound)
	}
	if err != nil {
		return gateway.Client{}, fmt.Errorf("update client %s: %w", id, err)
	}
	return c, nil
}

const keyColumns = `id, client_id, environment, label, scopes, created_at, expires_at, revoked_at, last_used_at,
	COALESCE(replaced_by, '')`

func scanKey(r pgx.CollectableRow) (gateway.APIKey, error) {
	var k gateway.APIKey
	err := r.Scan(&k.ID, &k.ClientID, &k.Environment, &k.Label, &k.Scopes, &k.CreatedAt, &k.ExpiresAt, &k.RevokedAt,
		&k.LastUsedAt, &k.ReplacedBy)
	k.Prefix = keyPrefix(k.Environment, k.ID)
	return k, err
}

// querier is what a pool and a transaction have in common.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// insertKey stores a new key of the client, in its environment.
func insertKey(ctx context.Context, q querier, spec gateway.KeySpec, rotatedFrom string) (gateway.IssuedKey, error) {
	var env string
	if err := q.QueryRow(ctx, `SELECT environment FROM clients WHERE id = $1`, spec.ClientID).Scan(&env); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return gateway.IssuedKey{}, fmt.Errorf("client %s: %w", spec.ClientID, domain.ErrNotFound)
		}
		return gateway.IssuedKey{}, fmt.Errorf("client %s: %w", spec.ClientID, err)
	}
	key, id, _ := newAPIKey(env)
	rows, _ := q.Query(ctx, `
		INSERT INTO api_keys (id, client_id, key_hash, environment, scopes, expires_at, label)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING `+keyColumns,
		id, spec.ClientID, gateway.HashKey(key), env, spec.Scopes, spec.ExpiresAt, spec.Label)
	k, err := pgx.CollectExactlyOneRow(rows, scanKey)
	if err != nil {
		if rotatedFrom != "" {
			return gateway.IssuedKey{}, fmt.Errorf("issue the replacement of key %s: %w", rotatedFrom, err)
		}
		return gateway.IssuedKey{}, fmt.Errorf("issue key for %s: %w", spec.ClientID, err)
	}
	return gateway.IssuedKey{APIKey: k, Secret: key}, nil
}

// IssueAPIKey creates a key for a client and returns it with its secret,
// which is shown this once: only its SHA-256 is stored.
func (g *Gateway) IssueAPIKey(ctx context.Context, spec gateway.KeySpec) (gateway.IssuedKey, error) {
	return insertKey(ctx, g.pool, spec, "")
}

// ListAPIKeys returns the client's keys, newest first.
func (g *Gateway) ListAPIKeys(ctx context.Context, clientID string) ([]gateway.APIKey, error) {
	rows, _ := g.pool.Query(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE client_id = $1 ORDER BY created_at DESC, id`, clientID)
	list, err := pgx.CollectRows(rows, scanKey)
	if err != nil {
		return nil, fmt.Errorf("list keys of %s: %w", clientID, err)
	}
	return list, nil
}

// GetAPIKey returns one key of the client.
func (g *Gateway) GetAPIKey(ctx context.Context, clientID, keyID string) (gateway.APIKey, error) {
	rows, _ := g.pool.Query(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = $1 AND client_id = $2`, keyID, clientID)
	k, err := pgx.CollectExactlyOneRow(rows, scanKey)
	if errors.Is(err, pgx.ErrNoRows) {
		return gateway.APIKey{}, fmt.Errorf("key %s of client %s: %w", keyID, clientID, domain.ErrNotFound)
	}
	if err != nil {
		return gateway.APIKey{}, fmt.Errorf("key %s: %w", keyID, err)
	}
	return k, nil
}

// RotateAPIKey issues the replacement of an active key in one
// transaction: the new key gets the old one's scopes and label; the old
// key's expiry moves to now + grace (or stays, when it was due earlier) and
// it points at its replacement. The row lock makes concurrent rotations of
// one key take turns, so only the first succeeds.
func (g *Gateway) RotateAPIKey(ctx context.Context, spec gateway.RotateSpec) (gateway.IssuedKey, gateway.APIKey, error) {
	tx, err := g.pool.Begin(ctx)
	if err != nil {
		return gateway.IssuedKey{}, gateway.APIKey{}, fmt.Errorf("rotate key %s: %w", spec.KeyID, err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	var (
		old    gateway.APIKey
		active bool
	)
	now := g.keyNow()
	rows, _ := tx.Query(ctx, `SELECT `+keyColumns+`,
			revoked_at IS NULL AND (expires_at IS NULL OR expires_at > COALESCE($3::timestamptz, now()))
		FROM api_keys WHERE id = $1 AND client_id = $2 FOR UPDATE`, spec.KeyID, spec.ClientID, now)
	old, err = pgx.CollectExactlyOneRow(rows, func(r pgx.CollectableRow) (gateway.APIKey, error) {
		var k gateway.APIKey
		err := r.Scan(&k.ID, &k.ClientID, &k.Environment, &k.Label, &k.Scopes, &k.CreatedAt, &k.ExpiresAt, &k.RevokedAt,
			&k.LastUsedAt, &k.ReplacedBy, &active)
		return k, err
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return gateway.IssuedKey{}, gateway.APIKey{}, fmt.Errorf("key %s of client %s: %w", spec.KeyID, spec.ClientID, domain.ErrNotFound)
	case err != nil:
		return gateway.IssuedKey{}, gateway.APIKey{}, fmt.Errorf("rotate key %s: %w", spec.KeyID, err)
	case old.ReplacedBy != "":
		return gateway.IssuedKey{}, gateway.APIKey{}, fmt.Errorf("key %s was replaced by %s: %w", spec.KeyID, old.ReplacedBy, gateway.ErrKeyAlreadyRotated)
	case !active:
		return gateway.IssuedKey{}, gateway.APIKey{}, fmt.Errorf("rotate key %s: %w", spec.KeyID, gateway.ErrKeyNotActive)
	}
	issued, err := insertKey(ctx, tx, gateway.KeySpec{ClientID: spec.ClientID, Scopes: old.Scopes, Label: old.Label,
		ExpiresAt: spec.ExpiresAt}, spec.KeyID)
	if err != nil {
		return gateway.IssuedKey{}, gateway.APIKey{}, err
	}
	rows, _ = tx.Query(ctx, `
		UPDATE api_keys SET replaced_by = $2,
			expires_at = LEAST(COALESCE(expires_at, 'infinity'),
				COALESCE($4::timestamptz, now()) + make_interval(secs => $3))
		WHERE id = $1 RETURNING `+keyColumns, spec.KeyID, issued.ID, spec.Grace.Seconds(), now)
	old, err = pgx.CollectExactlyOneRow(rows, scanKey)
	if err != nil {
		return gateway.IssuedKey{}, gateway.APIKey{}, fmt.Errorf("expire key %s: %w", spec.KeyID, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return gateway.IssuedKey{}, gateway.APIKey{}, fmt.Errorf("rotate key %s: commit: %w", spec.KeyID, err)
	}
	return issued, old, nil
}

// RevokeAPIKey revokes a key now; a revoked key keeps its first revocation
// time.
func (g *Gateway) RevokeAPIKey(ctx context.Context, clientID, keyID string) (gateway.APIKey, error) {
	rows, _ := g.pool.Query(ctx, `
		UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 AND client_id = $2
		RETURNING `+keyColumns, keyID, clientID)
	k, err := pgx.CollectExactlyOneRow(rows, scanKey)
	if errors.Is(err, pgx.ErrNoRows) {
		return gateway.APIKey{}, fmt.Errorf("key %s of client %s: %w", keyID, clientID, domain.ErrNotFound)
	}
	if err != nil {
		return gateway.APIKey{}, fmt.Errorf("revoke key %s: %w", keyID, err)
	}
	return k, nil
}
