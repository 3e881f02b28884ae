package readstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"
)

// Markers of the shadow schema (its comment): written by a rebuild, then
// made ready (logged, keyed, indexed) by the first step of Swap.
const (
	shadowWritten = "pitboss rebuild written"
	shadowReady   = "pitboss rebuild ready"
)

// The shadow schema is written in three steps. createShadow replaces it
// with empty tables: the live tables' columns and checks, logged (durable)
// but without keys or indexes. copyTables appends rebuilt rows by binary
// COPY, a few tables at a time (once per client). That is the cheapest way
// to put millions of rows down durably; Swap indexes them before they go
// live. markShadowWritten comes last, so Swap never takes a half-written
// schema.
//
// The tables were UNLOGGED until 2026-11-27, made durable by the swap
// (SET LOGGED): that wrote every row twice, once by COPY and once by the
// rewrite SET LOGGED is, and the rewrite of the history was a fifth of
// the swap (docs/benchmarks.md, "The swap without a rewrite"). Logged from
// the start, a row is written once; its WAL is the same either way.
// Verify's scratch schemas (WithScratch) are never swapped in, only
// compared and dropped: they stay UNLOGGED and write no WAL at all.
func (m *ReadModels) createShadow(ctx context.Context) error {
	shadow := pgx.Identifier{m.shadow}.Sanitize()
	tx, err := m.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `DROP SCHEMA IF EXISTS `+shadow+` CASCADE`); err != nil {
		return fmt.Errorf("drop shadow schema: %w", err)
	}
	if _, err := tx.Exec(ctx, `CREATE SCHEMA `+shadow); err != nil {
		return fmt.Errorf("create shadow schema: %w", err)
	}
	create := `CREATE TABLE `
	if m.shadow != ShadowSchema {
		create = `CREATE UNLOGGED TABLE `
	}
	for _, tb := range rmTables {
		if _, err := tx.Exec(ctx, create+pgx.Identifier{m.shadow, tb.name}.Sanitize()+
			` (LIKE `+m.t(tb.name)+` INCLUDING ALL EXCLUDING INDEXES)`+noAutovacuum); err != nil {
			return fmt.Errorf("create shadow %s: %w", tb.name, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("create shadow tables: %w", err)
	}
	return nil
}

// copyTables appends rb's rows of tables to their namesakes in schema (the
// shadow schema), or in the table's own schema if it names one.
func (m *ReadModels) copyTables(ctx context.Context, schema string, rb *rebuilt, tables []rmTable) error {
	g, gctx := errgroup.WithContext(ctx)
	// A few tables at a time, leaving a connection for the snapshot.
	g.SetLimit(max(min(3, int(m.pool.Config().MaxConns)-1), 1))
	for _, tb := range tables {
		g.Go(func() error {
			conn, err := m.pool.Acquire(gctx)
			if err != nil {
				return fmt.Errorf("acquire connection: %w", err)
			}
			defer conn.Release()
			schema := cmp.Or(tb.schema, schema)
			cols := make([]string, len(tb.cols))
			for i, c := range tb.cols {
				cols[i] = pgx.Identifier{c}.Sanitize()
			}
			_, err = conn.Conn().PgConn().CopyFrom(gctx, rowsReader(tb.rows(rb), tb.types),
				`COPY `+pgx.Identifier{schema, tb.name}.Sanitize()+` (`+strings.Join(cols, ", ")+`) FROM STDIN WITH (FORMAT binary)`)
			if err != nil {
				return fmt.Errorf("copy %s.%s: %w", schema, tb.name, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// markShadowWritten marks a fully copied shadow schema ready for Swap.
func (m *ReadModels) markShadowWritten(ctx context.Context) error {
	shadow := pgx.Identifier{m.shadow}.Sanitize()
	if _, err := m.pool.Exec(ctx, `COMMENT ON SCHEMA `+shadow+` IS '`+shadowWritten+`'`); err != nil {
		return fmt.Errorf("mark shadow schema written: %w", err)
	}
	return nil
}

// shadowState is the marker on the shadow schema, "" when there is none.
func (m *ReadModels) shadowState(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (string, error) {
	var state *string
	err := q.QueryRow(ctx, `SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1`, ShadowSchema).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && state == nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("find shadow schema: %w", err)
	}
	return *state, nil
}

// prepareShadow makes a written shadow schema ready to go live: each table
// is given the live table's keys and indexes under the same names, then
// vacuumed and analysed, and the schema is marked ready. It runs before
// Swap takes its lock, so the projectors do not wait for it.
//
// Each key and index is built by a statement of its own, a few at a time
// on their own connections, the largest tables' first: one table's
// indexes no longer wait for each other (the history has seven; in one
// transaction they were built one after the other while the small tables
// were long done). A build an interruption lost is simply made again: the
// ones already there are skipped (shadowDDL).
func (m *ReadModels) prepareShadow(ctx context.Context, progress func(done, total int)) error {
	ddl, err := m.shadowDDL(ctx)
	if err != nil {
		return err
	}
	total := len(ddl) + len(rmTables)
	if progress == nil {
		progress = func(int, int) {}
	}
	progress(0, total) // the biggest builds come first: say so before they end
	var (
		mu   sync.Mutex // progress is called from one goroutine at a time
		done int
	)
	step := func() {
		mu.Lock()
		defer mu.Unlock()
		done++
		progress(done, total)
	}
	limit := max(min(3, int(m.pool.Config().MaxConns)-1), 1)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(limit)
	for _, stmt := range ddl {
		g.Go(func() error {
			if err := m.execMaintenance(gctx, stmt); err != nil {
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
	for _, tb := range rmTables {
		g.Go(func() error {
			target := pgx.Identifier{ShadowSchema, tb.name}.Sanitize()
			// Live, the table is autovacuumed again (noAutovacuum).
			if _, err := m.pool.Exec(gctx, `ALTER TABLE `+target+` RESET (autovacuum_enabled, toast.autovacuum_enabled)`); err != nil {
				return fmt.Errorf("shadow %s: %w", tb.name, err)
			}
			// VACUUM (outside a transaction) sets the visibility map of the
			// freshly copied pages, so the history's counts and deep pages
			// are index-only scans from the first query after the swap, not
			// one heap visit per row until autovacuum comes by (measured at
			// 5M events right after a rebuild: a player filter's page 78 ms,
			// type=bet at offset 100k 152 ms); and ANALYZE gives the planner
			// the new tables' statistics.
			if _, err := m.pool.Exec(gctx, `VACUUM (ANALYZE) `+target); err != nil {
				return fmt.Errorf("vacuum shadow %s: %w", tb.name, err)
			}
			step()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if _, err := m.pool.Exec(ctx, `COMMENT ON SCHEMA `+pgx.Identifier{ShadowSchema}.Sanitize()+` IS '`+shadowReady+`'`); err != nil {
		return fmt.Errorf("mark shadow schema ready: %w", err)
	}
	return nil
}

// shadowDDL is what gives the shadow tables the live tables' constraints
// (primary key, unique) and other indexes, under the same names, less the
// ones already there; the largest tables' first.
func (m *ReadModels) shadowDDL(ctx context.Context) ([]string, error) {
	names := make([]string, len(rmTables))
	for i, tb := range rmTables {
		names[i] = tb.name
	}
	rows, _ := m.pool.Query(ctx, `
		WITH t AS (SELECT name, to_regclass(quote_ident($1) || '.' || quote_ident(name)) AS live,
		                  to_regclass(quote_ident($2) || '.' || quote_ident(name)) AS shadow
		           FROM unnest($3::text[]) AS name),
		ddl AS (
			SELECT t.shadow, c.conname AS name,
			       'ALTER TABLE ' || t.shadow::text || ' ADD CONSTRAINT ' || quote_ident(c.conname) || ' ' ||
			       pg_get_constraintdef(c.oid) AS stmt
			FROM t JOIN pg_constraint c ON c.conrelid = t.live AND c.contype IN ('p', 'u')
			UNION ALL
			SELECT t.shadow, ic.relname,
			       replace(pg_get_indexdef(i.indexrelid), ' ON ' || quote_ident($1) || '.', ' ON ' || quote_ident($2) || '.')
			FROM t JOIN pg_index i ON i.indrelid = t.live JOIN pg_class ic ON ic.oid = i.indexrelid
			WHERE NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid))
		SELECT stmt FROM ddl
		WHERE NOT EXISTS (SELECT 1 FROM pg_class x WHERE x.relname = ddl.name AND x.relnamespace = $2::regnamespace)
		ORDER BY pg_relation_size(ddl.shadow) DESC, ddl.name`, m.schema, ShadowSchema, names)
	ddl, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("read the definitions of the read-model tables: %w", err)
	}
	return ddl, nil
}

// execMaintenance runs a key or index build in a transaction of its own
// whose sort may use 256 MB (PostgreSQL's memory, as execWithMemory).
func (m *ReadModels) execMaintenance(ctx context.Context, stmt string) error {
	tx, err := m.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SET LOCAL maintenance_work_mem = '256MB'`); err != nil {
		return fmt.Errorf("shadow: %w", err)
	}
	if _, err := tx.Exec(ctx, stmt); err != nil {
		return fmt.Errorf("shadow: %s: %w", stmt, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("shadow: commit %s: %w", stmt, err)
	}
	return nil
}
