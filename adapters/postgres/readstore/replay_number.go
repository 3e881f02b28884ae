package readstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"
)

// numberShadow fills the shadow schema's numbering tables (tx_order,
// tx_counts, tx_days, tx_filter_counts, tx_filter_marks) from its history
// rows with seq at or below position (the history watermark), in one pass
// (orderHistory): tx_order as the rows stream, the other four, which
// are per client, day, type and player, at the end.
func (m *ReadModels) numberShadow(ctx context.Context, position int64) error {
	n, err := orderHistory(ctx, m.pool, m.shadow, position)
	if err != nil {
		return err
	}
	// Its two connections are back in the pool: copyTables takes its own.
	rb := &rebuilt{}
	rb.setNumbering(n.counts, n.numbering)
	return m.copyTables(ctx, m.shadow, rb, []rmTable{tableNamed("tx_counts"), tableNamed("tx_days"),
		tableNamed("tx_filter_counts"), tableNamed("tx_filter_marks")})
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
// (digestOf) before reading any row: equal digests end the comparison;
// an empty live table makes every rebuilt row missing: they are counted,
// and only the first examples are read. ok is false when the rows must be
// read and merged (diffShadowTable).
func (m *ReadModels) diffByDigest(ctx context.Context, tx pgx.Tx, tb rmTable, salt string, examples int) (d TableDiff, ok bool, err error) {
	exprs, shadow := selectList(tb), pgx.Identifier{m.shadow, tb.name}.Sanitize()
	// An empty live table (a first build): the rebuilt rows' count is all
	// their digest would tell, and counting takes a fraction of hashing
	// (10M events: the comparison went from 95 s to the examples' reads).
	var liveRows bool
	where := ""
	if tb.where != "" {
		where = " WHERE " + tb.where
	}
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+m.t(tb.name)+where+`)`).Scan(&liveRows); err != nil {
		return d, false, fmt.Errorf("compare %s: %w", tb.name, err)
	}
	d = TableDiff{Table: tb.name}
	if liveRows {
		var live, rebuilt rowDigest
		g, gctx := errgroup.WithContext(ctx)
		g.Go(func() (err error) {
			live, err = digestOf(gctx, tx, exprs, m.t(tb.name), tb.where, salt)
			return err
		})
		g.Go(func() (err error) { rebuilt, err = digestOf(gctx, m.pool, exprs, shadow, "", salt); return err })
		if err := g.Wait(); err != nil {
			return d, false, fmt.Errorf("compare %s: %w", tb.name, err)
		}
		if live != rebuilt {
			return TableDiff{}, false, nil
		}
		d.Live, d.Rebuilt, d.ByDigest = live.Rows, rebuilt.Rows, true
		return d, true, nil
	}
	if err := m.pool.QueryRow(ctx, `SELECT count(*) FROM `+shadow).Scan(&d.Rebuilt); err != nil {
		return d, false, fmt.Errorf("count rebuilt %s: %w", tb.name, err)
	}
	if d.Rebuilt == 0 {
		d.ByDigest = true // both empty: the digests would be equal
		return d, true, nil
	}
	d.Missing = d.Rebuilt
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
