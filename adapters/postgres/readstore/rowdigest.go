package readstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Whether two tables hold the same rows, told without reading them out of
// PostgreSQL.
//
// A table's digest is its row count and the sum, as exact numerics, of a
// keyed hash of each row's text: md5(salt || ROW(...)::text), its two
// 64-bit halves summed apart. The sum does not depend on the rows' order,
// so neither table is sorted, and PostgreSQL computes it in one scan (in
// parallel where it may). Equal digests mean equal rows (as multisets) but
// for a chance of about 2⁻¹²⁸; unequal digests say only that the rows
// differ, and the caller reads them to say how.
//
// The salt is random for every comparison (newDigestSalt), so rows
// altered to keep a table's digest would have to be chosen before the salt
// they must match is drawn: an additive hash with a known key can be balanced by
// altering many rows (a generalised birthday search); one with a key drawn
// afterwards cannot.
//
// Used by pitboss replay and verify (docs/read-models.md, "Compare"):
// where the rebuild and the live table agree, the comparison ends there.

// digestQuerier is what a digest is read with: a pool, a connection or a
// transaction (the snapshot the live tables are compared in).
type digestQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// rowDigest is a table's row count and the sum of its rows' keyed hashes.
type rowDigest struct {
	Rows int64
	Sum  string // the two halves' sums, "hi:lo", exact
}

// newDigestSalt returns the random key of one comparison.
func newDigestSalt() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("digest salt: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// digestSQL is the statement digestOf runs: $1 is the salt. exprs is the select list
// of the compared columns (as the row-by-row comparison reads them), from
// a table or schema-qualified name, where a condition or "".
//
// OFFSET 0 keeps the hashing subquery a subquery: pulled up into the
// aggregate, each row's md5 was computed once per half summed — twice —
// and that was half the comparison's time (2.9M history rows: 17.8 s
// against 10.0 s, one process).
func digestSQL(exprs, from, where string) string {
	if where != "" {
		where = " WHERE " + where
	}
	return `SELECT count(*),
		coalesce(sum(('x' || substr(h, 1, 16))::bit(64)::bigint::numeric), 0)::text || ':' ||
		coalesce(sum(('x' || substr(h, 17, 16))::bit(64)::bigint::numeric), 0)::text
		FROM (SELECT md5($1 || ROW(` + exprs + `)::text) AS h FROM ` + from + where + ` OFFSET 0) d`
}

// digestOf digests the rows of digestSQL(exprs, from, where) under salt.
func digestOf(ctx context.Context, q digestQuerier, exprs, from, where, salt string) (rowDigest, error) {
	var d rowDigest
	if err := q.QueryRow(ctx, digestSQL(exprs, from, where), salt).Scan(&d.Rows, &d.Sum); err != nil {
		return rowDigest{}, fmt.Errorf("digest of %s: %w", from, err)
	}
	return d, nil
}
