package readstore

import (
	"context"
	"fmt"
	"testing"

	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
)

// TestDigest: two tables' digests are equal exactly when they hold the same
// rows, in any order; a value moved between rows, a row duplicated, a NULL
// for an empty text, one changed digit, each makes them differ.
func TestDigest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDatabase(t)
	const base = `INSERT INTO %s (k, v, n, at) VALUES
		('a', 'x', 1, '2026-11-27 10:00:00+00'), ('b', 'y', 2, '2026-11-27 11:00:00+00'), ('c', '', 3, NULL)`
	salt, err := newDigestSalt()
	if err != nil {
		t.Fatal(err)
	}
	other, err := newDigestSalt()
	if err != nil || other == salt {
		t.Fatalf("salts %q and %q (%v)", salt, other, err)
	}
	const exprs = "k, v, n, at"
	digest := func(table, where, salt string) rowDigest {
		t.Helper()
		d, err := digestOf(ctx, pool, exprs, table, where, salt)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, tc := range []struct {
		name  string
		alter string // applied to table b, filled like a
		equal bool
	}{
		{"the same rows", ``, true},
		{"the same rows, inserted in another order", `DELETE FROM b; INSERT INTO b SELECT * FROM a ORDER BY k DESC`, true},
		{"one digit changed", `UPDATE b SET n = 4 WHERE k = 'c'`, false},
		{"values swapped between rows", `UPDATE b SET v = CASE k WHEN 'a' THEN 'y' WHEN 'b' THEN 'x' ELSE v END`, false},
		{"a NULL for an empty text", `UPDATE b SET v = NULL WHERE k = 'c'`, false},
		{"a row duplicated", `INSERT INTO b SELECT * FROM a WHERE k = 'a'`, false},
		{"a row missing", `DELETE FROM b WHERE k = 'b'`, false},
		{"a time a microsecond later", `UPDATE b SET at = at + interval '1 microsecond' WHERE k = 'a'`, false},
	} {
		for _, table := range []string{"a", "b"} {
			if _, err := pool.Exec(ctx, `DROP TABLE IF EXISTS `+table+`; CREATE TABLE `+table+` (k text, v text, n bigint, at timestamptz)`); err != nil {
				t.Fatal(err)
			}
			if _, err := pool.Exec(ctx, fmt.Sprintf(base, table)); err != nil {
				t.Fatal(err)
			}
		}
		if tc.alter != "" {
			if _, err := pool.Exec(ctx, tc.alter); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
		}
		a, b := digest("a", "", salt), digest("b", "", salt)
		if (a == b) != tc.equal {
			t.Errorf("%s: digests %+v and %+v, want equal = %v", tc.name, a, b, tc.equal)
		}
		if a.Rows != 3 {
			t.Errorf("%s: %d rows counted, want 3", tc.name, a.Rows)
		}
		if digest("a", "", other) == a {
			t.Errorf("%s: the digest does not depend on the salt", tc.name)
		}
	}
	// A condition leaves rows out, and an empty table has an empty digest.
	if d := digest("a", "n > 1", salt); d.Rows != 2 {
		t.Errorf("with a condition: %d rows, want 2", d.Rows)
	}
	if d := digest("a", "false", salt); d != (rowDigest{Rows: 0, Sum: "0:0"}) {
		t.Errorf("no rows: %+v", d)
	}
}
