package readstore

import (
	"context"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"
)

// The keys and indexes of the shadow tables:
// how pitboss replay's swap readies the shadow read models, written by COPY
// without keys or indexes, to go live (docs/read-models.md, "Replay").
//
// Each key and index is built by a statement of its own, a few at a time
// on their own connections, the largest tables' first: one table's indexes
// do not wait for each other (the history has seven; built one after the
// other in one transaction, they were most of the swap while the small
// tables were long done). An interrupted build is simply run again: the
// keys and indexes already there are skipped.

// buildIndexes gives each of tables (names) in schema to the constraints
// (primary key, unique) and other indexes of its namesake in schema from,
// under the same names, then resets its autovacuum settings (a rebuild
// turns autovacuum off on the tables it writes) and vacuums and analyses
// it. progress, when
// set, is told how many of the steps (builds, then a vacuum per table) are
// done, from one goroutine at a time, starting with none.
func buildIndexes(ctx context.Context, pool *pgxpool.Pool, from, to string, tables []string, progress func(done, total int)) error {
	ddl, err := missingIndexes(ctx, pool, from, to, tables)
	if err != nil {
		return err
	}
	total := len(ddl) + len(tables)
	if progress == nil {
		progress = func(int, int) {}
	}
	progress(0, total) // the biggest builds come first: say so before they end
	var (
		mu   sync.Mutex
		done int
	)
	step := func() {
		mu.Lock()
		defer mu.Unlock()
		done++
		progress(done, total)
	}
	limit := max(min(3, int(pool.Config().MaxConns)-1), 1)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(limit)
	for _, stmt := range ddl {
		g.Go(func() error {
			if err := buildIndex(gctx, pool, stmt); err != nil {
				return err
			}
			step()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	g, gctx = errgroup.WithContext(ctx)
	g.SetLimit(limit)
	for _, name := range tables {
		g.Go(func() error {
			target := pgx.Identifier{to, name}.Sanitize()
			if _, err := pool.Exec(gctx, `ALTER TABLE `+target+` RESET (autovacuum_enabled, toast.autovacuum_enabled)`); err != nil {
				return fmt.Errorf("%s: %w", target, err)
			}
			// VACUUM (outside a transaction) sets the visibility map of the
			// freshly copied pages, so the history's counts and deep pages
			// are index-only scans from the first query after the swap, not
			// one heap visit per row until autovacuum comes by (measured at
			// 5M events right after a rebuild: a player filter's page 78 ms,
			// type=bet at offset 100k 152 ms); and ANALYZE gives the planner
			// the new tables' statistics.
			if _, err := pool.Exec(gctx, `VACUUM (ANALYZE) `+target); err != nil {
				return fmt.Errorf("vacuum %s: %w", target, err)
			}
			step()
			return nil
		})
	}
	return g.Wait()
}

// missingIndexes is the DDL that gives the tables in to what their
// namesakes in from have and they lack, the largest tables' first.
func missingIndexes(ctx context.Context, pool *pgxpool.Pool, from, to string, tables []string) ([]string, error) {
	rows, _ := pool.Query(ctx, `
		WITH t AS (SELECT name, to_regclass(quote_ident($1) || '.' || quote_ident(name)) AS live,
		                  to_regclass(quote_ident($2) || '.' || quote_ident(name)) AS target
		           FROM unnest($3::text[]) AS name),
		ddl AS (
			SELECT t.target, c.conname AS name,
			       'ALTER TABLE ' || t.target::text || ' ADD CONSTRAINT ' || quote_ident(c.conname) || ' ' ||
			       pg_get_constraintdef(c.oid) AS stmt
			FROM t JOIN pg_constraint c ON c.conrelid = t.live AND c.contype IN ('p', 'u')
			UNION ALL
			SELECT t.target, ic.relname,
			       replace(pg_get_indexdef(i.indexrelid), ' ON ' || quote_ident($1) || '.', ' ON ' || quote_ident($2) || '.')
			FROM t JOIN pg_index i ON i.indrelid = t.live JOIN pg_class ic ON ic.oid = i.indexrelid
			WHERE NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid))
		SELECT stmt FROM ddl
		WHERE NOT EXISTS (SELECT 1 FROM pg_class x WHERE x.relname = ddl.name AND x.relnamespace = $2::regnamespace)
		ORDER BY pg_relation_size(ddl.target) DESC, ddl.name`, from, to, tables)
	ddl, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("read the definitions of the tables in %s: %w", from, err)
	}
	return ddl, nil
}

// buildIndex runs a key or index build in a transaction of its own whose sort
// may use 256 MB (PostgreSQL's memory; the rebuild's set-based statements
// take as much).
func buildIndex(ctx context.Context, pool *pgxpool.Pool, stmt string) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SET LOCAL maintenance_work_mem = '256MB'`); err != nil {
		return fmt.Errorf("%s: %w", stmt, err)
	}
	if _, err := tx.Exec(ctx, stmt); err != nil {
		return fmt.Errorf("%s: %w", stmt, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit %s: %w", stmt, err)
	}
	return nil
}
