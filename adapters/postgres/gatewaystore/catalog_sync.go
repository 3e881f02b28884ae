package gatewaystore

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/pitboss/pitboss/adapters/postgres"
	"github.com/pitboss/pitboss/gateway"
)

// Catalog sync (migration 00032, gateway.CatalogSyncer): the provider's
// catalog as a sync reads it, and its writes.

var _ gateway.CatalogSyncStore = (*Gateway)(nil)

// Advisory lock classes of the catalog sync: one sync of a provider at a
// time (transaction-scoped, keyed by the provider id), and one periodic
// job of the cluster at a time (session-scoped, ExclusiveCatalogSync).
const (
	catalogSyncLockClass = 0x63747379 // "ctsy"
	catalogJobLockClass  = 0x63746a62 // "ctjb"
)

// gameCols are a gateway.Game's columns, as scanGame reads them.
const gameCols = `id, provider_id, name, category, enabled, COALESCE(NULLIF(provider_game_code, ''), id), blocked_countries`

func scanGame(r pgx.CollectableRow) (gateway.Game, error) {
	var x gateway.Game
	err := r.Scan(&x.ID, &x.ProviderID, &x.Name, &x.Category, &x.Enabled, &x.Code, &x.BlockedCountries)
	return x, err
}

// catalogSnapshot reads the provider's games and the ids of other
// providers' games in its new-game id space ({provider}-...).
func catalogSnapshot(ctx context.Context, q querier, providerID string, forUpdate bool) (gateway.CatalogSnapshot, error) {
	lock := ""
	if forUpdate {
		lock = " FOR UPDATE"
	}
	rows, err := q.Query(ctx, `SELECT `+gameCols+`, sync_disabled FROM games WHERE provider_id = $1 ORDER BY id`+lock, providerID)
	if err != nil {
		return gateway.CatalogSnapshot{}, fmt.Errorf("catalog of provider %s: %w", providerID, err)
	}
	games, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (gateway.CatalogGame, error) {
		var x gateway.CatalogGame
		err := r.Scan(&x.ID, &x.ProviderID, &x.Name, &x.Category, &x.Enabled, &x.Code, &x.BlockedCountries, &x.SyncDisabled)
		return x, err
	})
	if err != nil {
		return gateway.CatalogSnapshot{}, fmt.Errorf("catalog of provider %s: %w", providerID, err)
	}
	rows, err = q.Query(ctx, `SELECT id FROM games WHERE provider_id <> $1 AND starts_with(id, $1 || '-')`, providerID)
	if err != nil {
		return gateway.CatalogSnapshot{}, fmt.Errorf("catalog of provider %s: %w", providerID, err)
	}
	taken, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return gateway.CatalogSnapshot{}, fmt.Errorf("catalog of provider %s: %w", providerID, err)
	}
	return gateway.CatalogSnapshot{Games: games, TakenIDs: taken}, nil
}

// CatalogSnapshot reads the provider's catalog: the dry run's read.
func (g *Gateway) CatalogSnapshot(ctx context.Context, providerID string) (gateway.CatalogSnapshot, error) {
	tx, err := g.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return gateway.CatalogSnapshot{}, fmt.Errorf("catalog of provider %s: %w", providerID, err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only; rollback after commit is a no-op
	snap, err := catalogSnapshot(ctx, tx, providerID, false)
	if err != nil {
		return gateway.CatalogSnapshot{}, err
	}
	return snap, tx.Commit(ctx)
}

// SyncCatalog reads the provider's catalog holding the provider's sync
// lock (a second sync of it waits, then plans from what the first wrote)
// and its games' rows, and writes the plan in the same transaction: added
// games inserted, changed ones updated. Nothing is deleted. A new game
// whose id was taken meanwhile (a `pitboss game set` racing the sync)
// fails the whole sync, which writes nothing.
func (g *Gateway) SyncCatalog(ctx context.Context, providerID string,
	plan func(gateway.CatalogSnapshot) (gateway.CatalogSyncPlan, error)) (gateway.CatalogSyncPlan, error) {
	tx, err := g.pool.Begin(ctx)
	if err != nil {
		return gateway.CatalogSyncPlan{}, fmt.Errorf("sync catalog of provider %s: %w", providerID, err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // rollback after commit is a no-op
	if _, err := tx.Exec(ctx, postgres.KeyedLockSQL, catalogSyncLockClass, providerID); err != nil {
		return gateway.CatalogSyncPlan{}, fmt.Errorf("sync catalog of provider %s: lock: %w", providerID, err)
	}
	snap, err := catalogSnapshot(ctx, tx, providerID, true)
	if err != nil {
		return gateway.CatalogSyncPlan{}, err
	}
	p, err := plan(snap)
	if err != nil {
		return gateway.CatalogSyncPlan{}, err
	}
	batch := &pgx.Batch{}
	for _, c := range p.Added {
		x := c.Game
		batch.Queue(`
			INSERT INTO games (id, provider_id, name, category, enabled, provider_game_code, blocked_countries,
				sync_disabled, synced_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now())`,
			x.ID, x.ProviderID, x.Name, x.Category, x.Enabled, x.Code, countries(x.BlockedCountries), c.SyncDisabled)
	}
	for _, c := range slices.Concat(p.Updated, p.Disabled) {
		x := c.Game
		batch.Queue(`
			UPDATE games SET name = $3, category = $4, enabled = $5, blocked_countries = $6, sync_disabled = $7,
				synced_at = now()
			WHERE id = $1 AND provider_id = $2`,
			x.ID, x.ProviderID, x.Name, x.Category, x.Enabled, countries(x.BlockedCountries), c.SyncDisabled)
	}
	if batch.Len() > 0 {
		if err := tx.SendBatch(ctx, batch).Close(); err != nil {
			return gateway.CatalogSyncPlan{}, fmt.Errorf("sync catalog of provider %s: %w", providerID, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return gateway.CatalogSyncPlan{}, fmt.Errorf("sync catalog of provider %s: %w", providerID, err)
	}
	return p, nil
}

// countries is a list as a text[] parameter: never NULL.
func countries(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}

// ExclusiveCatalogSync runs fn while it holds the periodic catalog sync's
// session advisory lock; when another instance holds it, it returns false
// at once without running fn.
func (g *Gateway) ExclusiveCatalogSync(ctx context.Context, fn func(context.Context) error) (ran bool, err error) {
	conn, err := g.pool.Acquire(ctx)
	if err != nil {
		return false, fmt.Errorf("catalog sync job: acquire connection: %w", err)
	}
	defer conn.Release()
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1, 0)`, catalogJobLockClass).Scan(&ran); err != nil {
		return false, fmt.Errorf("catalog sync job: lock: %w", err)
	}
	if !ran {
		return false, nil
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1, 0)`, catalogJobLockClass)
	}()
	return true, fn(ctx)
}
