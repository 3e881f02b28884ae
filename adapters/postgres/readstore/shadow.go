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
// the swap (docs/benchmarks.md, "Read side, replay and verify"). Logged from
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
// vacuumed and analysed, a few builds at a time (buildIndexes), and
// the schema is marked ready. It runs before Swap takes its lock, so the
// projectors do not wait for it.
func (m *ReadModels) prepareShadow(ctx context.Context, progress func(done, total int)) error {
	names := make([]string, len(rmTables))
	for i, tb := range rmTables {
		names[i] = tb.name
	}
	if err := buildIndexes(ctx, m.pool, m.schema, ShadowSchema, names, progress); err != nil {
		return err
	}
	if _, err := m.pool.Exec(ctx, `COMMENT ON SCHEMA `+pgx.Identifier{ShadowSchema}.Sanitize()+` IS '`+shadowReady+`'`); err != nil {
		return fmt.Errorf("mark shadow schema ready: %w", err)
	}
	return nil
}
