// Package postgres is the base of the PostgreSQL adapters: the connection,
// the migration runner and what the stores share (plan settings, UUID
// text, keyed advisory locks, the read models' schema and history row).
// Each store is a package of its own below this one, using it where it
// needs to: eventstore (the ledger writer), readstore (the read models),
// gatewaystore (clients, keys, catalog, sessions, usage, rate windows,
// lag), deliverystore (the delivery queue, webhooks, forwarded callbacks)
// and auditstore (verify, export, the console's transaction detail). This
// package imports none of them.
package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/pitboss/pitboss/migrations"
)

// Connect opens a pool and checks that the server answers.
func Connect(ctx context.Context, dsn string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("ping %s:%d: %w", cfg.ConnConfig.Host, cfg.ConnConfig.Port, err)
	}
	return pool, nil
}

// Migrate applies every pending migration. A Postgres session lock makes
// concurrent callers (several replicas, parallel tests) take turns.
func Migrate(ctx context.Context, pool *pgxpool.Pool) ([]string, error) {
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	return migrateDB(ctx, db)
}

func migrateDB(ctx context.Context, db *sql.DB) ([]string, error) {
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return nil, fmt.Errorf("migration lock: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS, goose.WithSessionLocker(locker))
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	res, err := p.Up(ctx)
	if err != nil {
		return nil, fmt.Errorf("apply migrations: %w", err)
	}
	applied := make([]string, 0, len(res))
	for _, r := range res {
		applied = append(applied, r.Source.Path)
	}
	return applied, nil
}
