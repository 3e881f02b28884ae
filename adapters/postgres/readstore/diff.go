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

// diffTable reads the live table's rows matching cond (with args; "" for
// all) in key order and merges them with the rebuilt rows.
func (m *ReadModels) diffTable(ctx context.Context, tx pgx.Tx, tb rmTable, rb tableRows, examples int, cond string, args ...any) (TableDiff, error) {
	d := TableDiff{Table: tb.name, Rebuilt: int64(rb.n)}
	sel := make([]string, len(tb.cols))
	for i, c := range tb.cols {
		sel[i] = pgx.Identifier{c}.Sanitize()
		if c == "id" {
			sel[i] = "id::text"
		}
	}
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
	rows, err := tx.Query(ctx, `SELECT `+strings.Join(sel, ", ")+` FROM `+m.t(tb.name)+where+` ORDER BY `+tb.order, args...)
	if err != nil {
		return d, fmt.Errorf("read live %s: %w", tb.name, err)
	}
	defer rows.Close()
	note := func(format string, args ...any) {
		if len(d.Examples) < examples {
			d.Examples = append(d.Examples, fmt.Sprintf(format, args...))
		}
	}
	i := 0
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return d, fmt.Errorf("read live %s: %w", tb.name, err)
		}
		live := normRow(vals)
		d.Live++
		for ; i < rb.n; i++ {
			want := normRow(rb.row(i))
			c := cmpKey(want[:tb.key], live[:tb.key])
			if c > 0 {
				break
			}
			if c < 0 {
				d.Missing++
				note("%s %s: missing from the live table", tb.name, keyText(tb, want))
				continue
			}
			if diffs := changedCols(tb, want, live); diffs != "" {
				d.Changed++
				note("%s %s: %s", tb.name, keyText(tb, want), diffs)
			}
			i++
			goto next
		}
		d.Extra++
		note("%s %s: in the live table, not in the rebuild", tb.name, keyText(tb, live))
	next:
	}
	if err := rows.Err(); err != nil {
		return d, fmt.Errorf("read live %s: %w", tb.name, err)
	}
	for ; i < rb.n; i++ {
		d.Missing++
		note("%s %s: missing from the live table", tb.name, keyText(tb, normRow(rb.row(i))))
	}
	return d, nil
}

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

func cmpKey(a, b []any) int {
	for i := range a {
		if c := cmpValue(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

// cmpValue orders normalised key values as the diff's ORDER BY does
// (text in "C" collation: bytewise).
func cmpValue(a, b any) int {
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

func equalValue(a, b any) bool {
	if ta, ok := a.(time.Time); ok {
		tb, ok := b.(time.Time)
		return ok && ta.Equal(tb)
	}
	return a == b
}

func changedCols(tb rmTable, want, live []any) string {
	var diffs []string
	for i := tb.key; i < len(tb.cols); i++ {
		if !equalValue(want[i], live[i]) {
			diffs = append(diffs, fmt.Sprintf("%s live=%v rebuilt=%v", tb.cols[i], show(live[i]), show(want[i])))
		}
	}
	return strings.Join(diffs, ", ")
}

func keyText(tb rmTable, row []any) string {
	parts := make([]string, tb.key)
	for i := range parts {
		parts[i] = tb.cols[i] + "=" + fmt.Sprint(show(row[i]))
	}
	return strings.Join(parts, " ")
}

func show(v any) any {
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
