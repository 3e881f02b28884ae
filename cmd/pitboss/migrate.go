package main

import (
	"context"
	"fmt"

	"github.com/pitboss/pitboss/adapters/postgres"
)

func migrate(ctx context.Context, cfg config) error {
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
		fmt.Println("migrations: up to date")
	}
	for _, a := range applied {
		fmt.Println("migrations: applied", a)
	}
	return nil
}
