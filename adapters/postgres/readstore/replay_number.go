package readstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"

	"github.com/pitboss/pitboss/adapters/postgres/readstore/numbering"
	"github.com/pitboss/pitboss/adapters/postgres/readstore/rowdigest"
)

// numberShadow fills the shadow schema's numbering tables from its history
// rows up to position (the history watermark), a few statements at once.
// Computed in PostgreSQL after the last slice, the numbering costs the
// rebuild no memory: in memory it was an id per row, a sort of every row
// and the per-filter counts (projections.Memory.SetWatermark).
func (m *ReadModels) numberShadow(ctx context.Context, position int64) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(min(3, int(m.pool.Config().MaxConns)-1), 1))
	for _, stmt := range numbering.SQL(m.shadow) {
		g.Go(func() error {
			if err := m.execWithMemory(gctx, stmt, position); err != nil {
				return fmt.Errorf("number the shadow history: %w", err)
			}
			return nil
		})
	}
	return g.Wait()
}

// diffShadowTable compares a table of the shadow schema, read in key order
// on a connection of its own, with the live table in the snapshot tx.
func (m *ReadModels) diffShadowTable(ctx context.Context, tx pgx.Tx, tb rmTable, examples int) (TableDiff, error) {
	conn, err := m.pool.Acquire(ctx)
	if err != nil {
		return TableDiff{}, fmt.Errorf("acquire connection: %w", err)
	}
	defer conn.Release()
	rows, err := conn.Query(ctx, `SELECT `+selectList(tb)+` FROM `+pgx.Identifier{m.shadow, tb.name}.Sanitize()+` ORDER BY `+tb.order)
	if err != nil {
		return TableDiff{}, fmt.Errorf("read rebuilt %s: %w", tb.name, err)
	}
	defer rows.Close()
	return m.diffTable(ctx, tx, tb, queryRows{rows: rows}, examples, "")
}

// diffByDigest compares a shadow table with the live one by digest
// (rowdigest) before reading any row: equal digests end the comparison;
// an empty live table makes every rebuilt row missing, and only the first
// examples are read. ok is false when the rows must be read and merged
// (diffShadowTable).
func (m *ReadModels) diffByDigest(ctx context.Context, tx pgx.Tx, tb rmTable, salt string, examples int) (d TableDiff, ok bool, err error) {
	exprs, shadow := selectList(tb), pgx.Identifier{m.shadow, tb.name}.Sanitize()
	var live, rebuilt rowdigest.Digest
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		live, err = rowdigest.Of(gctx, tx, exprs, m.t(tb.name), tb.where, salt)
		return err
	})
	g.Go(func() (err error) { rebuilt, err = rowdigest.Of(gctx, m.pool, exprs, shadow, "", salt); return err })
	if err := g.Wait(); err != nil {
		return d, false, fmt.Errorf("compare %s: %w", tb.name, err)
	}
	d = TableDiff{Table: tb.name, Live: live.Rows, Rebuilt: rebuilt.Rows}
	switch {
	case live == rebuilt:
		d.ByDigest = true
		return d, true, nil
	case live.Rows > 0:
		return TableDiff{}, false, nil
	}
	d.Missing = rebuilt.Rows
	rows, err := m.pool.Query(ctx, `SELECT `+exprs+` FROM `+shadow+` ORDER BY `+tb.order+` LIMIT `+strconv.Itoa(examples))
	if err != nil {
		return d, false, fmt.Errorf("read rebuilt %s: %w", tb.name, err)
	}
	src := queryRows{rows: rows}
	defer rows.Close()
	for {
		row, more, err := src.next()
		if err != nil {
			return d, false, fmt.Errorf("read rebuilt %s: %w", tb.name, err)
		}
		if !more {
			return d, true, nil
		}
		d.Examples = append(d.Examples, fmt.Sprintf("%s %s: missing from the live table", tb.name, keyText(tb, row)))
	}
}
