// Package rowcmp holds the values of the read-model comparison (pitboss
// replay and verify): a row read from PostgreSQL or rebuilt in memory made
// comparable (Norm), keys ordered as the comparison's ORDER BY orders them
// (text bytewise, "C" collation), values compared and shown.
package rowcmp

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pitboss/pitboss/adapters/postgres"
)

// Norm makes live and rebuilt values comparable: integers as int64,
// times in UTC, uuids as text.
func Norm(vals []any) []any {
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

// CompareKeys orders two rows' normalised key values (Compare, column by
// column).
func CompareKeys(a, b []any) int {
	for i := range a {
		if c := Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

// Compare orders normalised key values as the diff's ORDER BY does
// (text in "C" collation: bytewise).
func Compare(a, b any) int {
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

// Equal says whether two normalised values are the same (times as
// instants).
func Equal(a, b any) bool {
	if ta, ok := a.(time.Time); ok {
		tb, ok := b.(time.Time)
		return ok && ta.Equal(tb)
	}
	return a == b
}

// Show is a value as a difference's example prints it.
func Show(v any) any {
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
