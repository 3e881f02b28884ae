package readstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

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
// with empty tables: the live tables' columns and checks, UNLOGGED and
// without keys or indexes. copyTables appends rebuilt rows by binary COPY,
// a few tables at a time (once per client). That is the cheapest way to put
// millions of rows down; Swap makes them durable and indexes them before
// they go live. markShadowWritten comes last, so Swap never takes a
// half-written schema.
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
	for _, tb := range rmTables {
		if _, err := tx.Exec(ctx, `CREATE UNLOGGED TABLE `+pgx.Identifier{m.shadow, tb.name}.Sanitize()+
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
// logged (durable), then given the live table's keys and indexes under
// the same names, then vacuumed and analysed. Tables are prepared a few at a time, each in one
// transaction; it runs before Swap takes its lock, so the projectors do
// not wait for it.
func (m *ReadModels) prepareShadow(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(min(3, int(m.pool.Config().MaxConns)-1), 1))
	for _, tb := range rmTables {
		g.Go(func() error { return m.prepareShadowTable(gctx, tb) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if _, err := m.pool.Exec(ctx, `COMMENT ON SCHEMA `+pgx.Identifier{ShadowSchema}.Sanitize()+` IS '`+shadowReady+`'`); err != nil {
		return fmt.Errorf("mark shadow schema ready: %w", err)
	}
	return nil
}

func (m *ReadModels) prepareShadowTable(ctx context.Context, tb rmTable) error {
	tx, err := m.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(ctx)
	target := pgx.Identifier{ShadowSchema, tb.name}
	if _, err := tx.Exec(ctx, `SET LOCAL maintenance_work_mem = '256MB'`); err != nil {
		return fmt.Errorf("shadow %s: %w", tb.name, err)
	}
	// Live, the table is autovacuumed again (noAutovacuum).
	if _, err := tx.Exec(ctx, `ALTER TABLE `+target.Sanitize()+` RESET (autovacuum_enabled, toast.autovacuum_enabled), SET LOGGED`); err != nil {
		return fmt.Errorf("log shadow %s: %w", tb.name, err)
	}
	// The live table's constraints (primary key, unique) and its other
	// indexes, under the same names in the shadow schema.
	rows, _ := tx.Query(ctx, `
		SELECT 'ALTER TABLE ' || $3 || ' ADD CONSTRAINT ' || quote_ident(c.conname) || ' ' || pg_get_constraintdef(c.oid)
		FROM pg_constraint c WHERE c.conrelid = $1::regclass AND c.contype IN ('p', 'u')
		UNION ALL
		SELECT replace(pg_get_indexdef(i.indexrelid), ' ON ' || quote_ident($2) || '.', ' ON ' || quote_ident($4) || '.')
		FROM pg_index i WHERE i.indrelid = $1::regclass
		  AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`,
		m.t(tb.name), m.schema, target.Sanitize(), ShadowSchema)
	ddl, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("read the definition of %s: %w", tb.name, err)
	}
	for _, stmt := range ddl {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("shadow %s: %s: %w", tb.name, stmt, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit shadow %s: %w", tb.name, err)
	}
	// VACUUM (outside a transaction) sets the visibility map of the freshly
	// copied pages, so the history's counts and deep pages are index-only
	// scans from the first query after the swap, not one heap visit per
	// row until autovacuum comes by (measured at 5M events right after a
	// rebuild: a player filter's page 78 ms, type=bet at offset 100k
	// 152 ms); and ANALYZE gives the planner the new tables' statistics.
	if _, err := m.pool.Exec(ctx, `VACUUM (ANALYZE) `+target.Sanitize()); err != nil {
		return fmt.Errorf("vacuum shadow %s: %w", tb.name, err)
	}
	return nil
}
