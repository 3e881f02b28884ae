package readstore

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pitboss/pitboss/adapters/postgres"
)

// rowSource yields a rebuilt table's rows in key order, normalised
// (normRow): from memory (memoryRows) or from a query (queryRows), so a
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
	return normRow(s.rows.row(s.i - 1)), true, nil
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
	return normRow(vals), true, nil
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
		live := normRow(vals)
		d.Live++
		matched := false
		for ok && err == nil {
			c := compareKeys(want[:tb.key], live[:tb.key])
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
		if !equalValue(want[i], live[i]) {
			diffs = append(diffs, fmt.Sprintf("%s live=%v rebuilt=%v", tb.cols[i], showValue(live[i]), showValue(want[i])))
		}
	}
	return strings.Join(diffs, ", ")
}

func keyText(tb rmTable, row []any) string {
	parts := make([]string, tb.key)
	for i := range parts {
		parts[i] = tb.cols[i] + "=" + fmt.Sprint(showValue(row[i]))
	}
	return strings.Join(parts, " ")
}

// The compared values: a row read from PostgreSQL or rebuilt in memory
// made comparable (normRow), keys ordered as the comparison's ORDER BY
// orders them (text bytewise, "C" collation), values compared and shown.

// normRow makes live and rebuilt values comparable: integers as int64,
// times in UTC, uuids as text.
func normRow(vals []any) []any {
	out := make([]any, len(vals))
	for i, v := range vals {
		switch x := v.(type) {
		case int:
			out[i] = int64(x)
		case int16:
			out[i] = int64(x)
		case int32:
			out[i] = int64(x)
		case time.Time:
			out[i] = x.UTC()
		case [16]byte:
			out[i] = postgres.UUIDText(x)
		case pgtype.UUID:
			out[i] = postgres.UUIDText(x.Bytes)
		default:
			out[i] = v
		}
	}
	return out
}

// compareKeys orders two rows' normalised key values (compareValue,
// column by column).
func compareKeys(a, b []any) int {
	for i := range a {
		if c := compareValue(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

// compareValue orders normalised key values as the diff's ORDER BY does
// (text in "C" collation: bytewise).
func compareValue(a, b any) int {
	switch x := a.(type) {
	case string:
		y, _ := b.(string)
		return strings.Compare(x, y)
	case int64:
		y, _ := b.(int64)
		return cmp.Compare(x, y)
	case time.Time:
		y, _ := b.(time.Time)
		return x.Compare(y)
	}
	return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

// equalValue says whether two normalised values are the same (times as
// instants).
func equalValue(a, b any) bool {
	if ta, ok := a.(time.Time); ok {
		tb, ok := b.(time.Time)
		return ok && ta.Equal(tb)
	}
	return a == b
}

// showValue is a value as a difference's example prints it.
func showValue(v any) any {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case time.Time:
		if x.Hour() == 0 && x.Minute() == 0 && x.Second() == 0 && x.Nanosecond() == 0 {
			return x.Format(time.DateOnly)
		}
		return x.Format(time.RFC3339Nano)
	}
	return v
}
