package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/pitboss/pitboss/adapters/postgres"
)

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
