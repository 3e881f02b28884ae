package pgtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres"
	"github.com/pitboss/pitboss/migrations"
)

// templateLockKey serializes the making of a template across test
// processes (go test runs packages side by side).
const templateLockKey = 0x70697462_6f737374 // "pitbosst"

var (
	tplMu    sync.Mutex
	tplNames = map[string]string{} // server URL → template database
)

// template is the name of a database on the server at base with every
// migration applied, made once per set of migrations and kept: a test's
// database is a copy of it (CREATE DATABASE ... TEMPLATE, a file copy),
// not 29 migrations run anew — that was most of a small test's time. Its
// name carries a digest of the embedded migrations, so a changed or added
// migration makes a new template; none is ever migrated in place. It is
// made under a temporary name and renamed when complete, so a test killed
// halfway leaves no half-migrated template behind.
func template(base string) (string, error) {
	tplMu.Lock()
	defer tplMu.Unlock()
	if name, ok := tplNames[base]; ok {
		return name, nil
	}
	digest, err := migrationsDigest()
	if err != nil {
		return "", err
	}
	name := "pitboss_tpl_" + digest
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := ensureTemplate(ctx, base, name); err != nil {
		return "", fmt.Errorf("template database %s: %w", name, err)
	}
	tplNames[base] = name
	return name, nil
}

// ensureTemplate makes name unless it exists, holding the server-wide
// advisory lock so that one process makes it while the others wait.
func ensureTemplate(ctx context.Context, base, name string) error {
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		return err
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "SELECT pg_advisory_lock($1)", int64(templateLockKey)); err != nil {
		return err
	}
	// Closing the session would release it too; unlocking says so.
	defer func() {
		_, _ = admin.Exec(context.Background(), "SELECT pg_advisory_unlock($1)", int64(templateLockKey))
	}()
	var exists bool
	if err := admin.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	tmp := name + "_" + hex.EncodeToString(b)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+tmp); err != nil {
		return err
	}
	if err := migrateAt(ctx, base, tmp); err != nil {
		_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+tmp+" WITH (FORCE)")
		return err
	}
	_, err = admin.Exec(ctx, "ALTER DATABASE "+tmp+" RENAME TO "+name)
	return err
}

// migrateAt applies the migrations to database db and closes every
// connection to it (a template must have none when copied).
func migrateAt(ctx context.Context, base, db string) error {
	u, err := url.Parse(base)
	if err != nil {
		return err
	}
	u.Path = "/" + db
	pool, err := pgxpool.New(ctx, u.String())
	if err != nil {
		return err
	}
	defer pool.Close()
	_, err = postgres.Migrate(ctx, pool)
	return err
}

// migrationsDigest is the first 12 hex digits of a SHA-256 over the
// embedded migrations' names and contents.
func migrationsDigest() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(migrations.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(migrations.FS, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("digest of the migrations: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}
