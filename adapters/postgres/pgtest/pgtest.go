// Package pgtest gives tests their own freshly migrated database on the real
// PostgreSQL server named by PITBOSS_DATABASE_URL (`make test` starts it).
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DSN returns the server's URL, failing the test when it is not set: a
// test that needs Postgres never silently skips.
func DSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("PITBOSS_DATABASE_URL")
	if dsn == "" {
		t.Fatal("PITBOSS_DATABASE_URL is not set: run the tests with `make test`, which starts PostgreSQL and Kafka")
	}
	return dsn
}

// NewDatabase creates a database with a random name, a copy of the
// migrated template (template), and returns a pool on it and its URL. The
// database is dropped when the test ends.
func NewDatabase(t testing.TB) (*pgxpool.Pool, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	base := DSN(t)
	tpl, err := template(base)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to %s: %v", base, err)
	}
	defer admin.Close(ctx)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "pitboss_t_" + hex.EncodeToString(b)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE "+tpl); err != nil {
		t.Fatalf("create database %s from %s: %v", name, tpl, err)
	}
	pc, err := pgxpool.ParseConfig(base)
	if err != nil {
		t.Fatal(err)
	}
	pc.ConnConfig.Database = name
	pc.MaxConns = 40
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	t.Cleanup(func() {
		pool.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Logf("drop database %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("drop database %s: %v", name, err)
		}
	})
	return pool, urlFor(t, base, name)
}

// urlFor swaps the database name in a postgres:// URL.
func urlFor(t testing.TB, base, name string) string {
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse %s: %v", base, err)
	}
	u.Path = "/" + name
	return u.String()
}
