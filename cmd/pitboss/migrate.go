package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres"
)

// openDatabase connects to the configured database and applies the
// pending migrations, which every command that uses the database does
// first. The caller closes the pool.
func openDatabase(ctx context.Context, cfg config) (*pgxpool.Pool, error) {
	pool, err := postgres.Connect(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if _, err := postgres.Migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

func migrate(ctx context.Context, cfg config, args []string, stdout, stderr io.Writer) error {
	if err := parseFlags(flag.NewFlagSet("migrate", flag.ContinueOnError), args, stdout, stderr); err != nil {
		return err
	}
	pool, err := postgres.Connect(ctx, cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	defer pool.Close()
	applied, err := postgres.Migrate(ctx, pool)
	if err != nil {
		return err
	}
	if len(applied) == 0 {
		fmt.Fprintln(stdout, "migrations: up to date")
	}
	for _, a := range applied {
		fmt.Fprintln(stdout, "migrations: applied", a)
	}
	return nil
}
