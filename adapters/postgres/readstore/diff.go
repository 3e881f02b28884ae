package readstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pitboss/pitboss/adapters/postgres/readstore/rowcmp"
)

// rowSource yields a rebuilt table's rows in key order, normalised
// (rowcmp.Norm): from memory (memoryRows) or from a query (queryRows), so a
// table rebuilt in PostgreSQL is compared as it streams, never held.
type rowSource interface {
	next() (row []any, ok bool, err error)
}

// memoryRows reads a table rebuilt in memory.
type memoryRows struct {
	rows tableRows
	i    int
}

func (s *memoryRows) next() ([]any, bool, error) {
	if s.i >= s.rows.n {
		return nil, false, nil
	}
	s.i++
	return rowcmp.Norm(s.rows.row(s.i - 1)), true, nil
}

// queryRows reads a table's rows from a query in key order.
type queryRows struct{ rows pgx.Rows }

func (s queryRows) next() ([]any, bool, error) {
	if !s.rows.Next() {
		return nil, false, s.rows.Err()
	}
	vals, err := s.rows.Values()
	if err != nil {
		return nil, false, err
	}
	return rowcmp.Norm(vals), true, nil
}

// selectList is the select list the diff reads a table's columns with:
// ids as text, as the rebuilt rows hold them.
func selectList(tb rmTable) string {
	sel := make([]string, len(tb.cols))
	for i, c := range tb.cols {
		sel[i] = pgx.Identifier{c}.Sanitize()
		if c == "id" {
			sel[i] = "id::text"
		}
	}
	return strings.Join(sel, ", ")
}

// diffTable reads the live table's rows matching cond (with args; "" for
// all) in key order and merges them with the rebuilt rows of rb.
func (m *ReadModels) diffTable(ctx context.Context, tx pgx.Tx, tb rmTable, rb rowSource, examples int, cond string, args ...any) (TableDiff, error) {
	d := TableDiff{Table: tb.name}
	var conds []string
	for _, c := range []string{tb.where, cond} {
		if c != "" {
			conds = append(conds, "("+c+")")
		}
	}
	where := ""
	if len(conds) > 0 {
		where = " WHERE " + strings.Join(conds, " AND ")
	}
	rows, err := tx.Query(ctx, `SELECT `+selectList(tb)+` FROM `+m.t(tb.name)+where+` ORDER BY `+tb.order, args...)
	if err != nil {
		return d, fmt.Errorf("read live %s: %w", tb.name, err)
	}
	defer rows.Close()
	note := func(format string, args ...any) {
		if len(d.Examples) < examples {
			d.Examples = append(d.Examples, fmt.Sprintf(format, args...))
		}
	}
	want, ok, err := rb.next()
	advance := func() {
		if want, ok, err = rb.next(); ok {
			d.Rebuilt++
		}
	}
	if ok {
		d.Rebuilt++
	}
	for err == nil && rows.Next() {
		vals, verr := rows.Values()
		if verr != nil {
			return d, fmt.Errorf("read live %s: %w", tb.name, verr)
		}
		live := rowcmp.Norm(vals)
		d.Live++
		matched := false
		for ok && err == nil {
			c := rowcmp.CompareKeys(want[:tb.key], live[:tb.key])
			if c > 0 {
				break
			}
			if c < 0 {
				d.Missing++
				note("%s %s: missing from the live table", tb.name, keyText(tb, want))
				advance()
				continue
			}
			if diffs := changedCols(tb, want, live); diffs != "" {
				d.Changed++
				note("%s %s: %s", tb.name, keyText(tb, want), diffs)
			}
			advance()
			matched = true
			break
		}
		if !matched {
			d.Extra++
			note("%s %s: in the live table, not in the rebuild", tb.name, keyText(tb, live))
		}
	}
	if err != nil {
		return d, fmt.Errorf("read rebuilt %s: %w", tb.name, err)
	}
	if err := rows.Err(); err != nil {
		return d, fmt.Errorf("read live %s: %w", tb.name, err)
	}
	for ok {
		d.Missing++
		note("%s %s: missing from the live table", tb.name, keyText(tb, want))
		if advance(); err != nil {
			return d, fmt.Errorf("read rebuilt %s: %w", tb.name, err)
		}
	}
	return d, nil
}

func changedCols(tb rmTable, want, live []any) string {
	var diffs []string
	for i := tb.key; i < len(tb.cols); i++ {
		if !rowcmp.Equal(want[i], live[i]) {
			diffs = append(diffs, fmt.Sprintf("%s live=%v rebuilt=%v", tb.cols[i], rowcmp.Show(live[i]), rowcmp.Show(want[i])))
		}
	}
	return strings.Join(diffs, ", ")
}

func keyText(tb rmTable, row []any) string {
	parts := make([]string, tb.key)
	for i := range parts {
		parts[i] = tb.cols[i] + "=" + fmt.Sprint(rowcmp.Show(row[i]))
	}
	return strings.Join(parts, " ")
}
