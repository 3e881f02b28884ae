// Package replaypass records the passes of a rebuild in slices (`pitboss
// replay --full`), so that an interrupted one resumes from its last
// completed pass instead of starting over (docs/read-models.md,
// "Resuming an interrupted replay").
//
// The record lives in the rebuild's staging schema, next to the shadow
// tables it describes, and goes with them: a fresh rebuild drops it, a
// finished one too. It holds the arguments' fingerprint, and per pass the
// ledger position it covered (with that event's hash: the hash chain then
// vouches for every event before it), the counters so far, and the state a
// slice carries to the next (balances, GGR groups, checkpoints) as the
// rows that pass changed. A pass's carried rows and its record are written
// in one transaction, after the pass's rows are in the shadow and staging
// tables: a record is the proof that everything up to its position is
// there.
package replaypass

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Pass is one completed pass (slice) of a rebuild; the counts are those
// of every pass up to it.
type Pass struct {
	N        int    // 1 for the first
	Position int64  // of the last event it applied
	Hash     []byte // that event's hash, read when the pass is recorded
	Events   int64  // events read
	Skipped  int64  // events a projection could not apply
	History  int64  // history rows written to the shadow schema
}

// Carry is one row of the state a slice hands to the next, as the pass
// that last changed it left it: Kind names the map, Key the entry, Value
// is its JSON.
type Carry struct {
	Kind, Key string
	Value     []byte
}

// Log is the record in one staging schema. history names the shadow
// history table, whose rows (by position) show that it still holds what
// the passes wrote. Its run row is in an UNLOGGED table, like the staging
// tables the passes append to: a PostgreSQL crash empties them together,
// and a record without its run row is not resumed.
type Log struct {
	pool    *pgxpool.Pool
	schema  string
	history string
}

// New returns the record in schema.
func New(pool *pgxpool.Pool, schema, historyTable string) *Log {
	return &Log{pool: pool, schema: schema, history: historyTable}
}

func (l *Log) t(name string) string { return pgx.Identifier{l.schema, name}.Sanitize() }

// Create starts an empty record of a rebuild with fingerprint in the
// (existing, empty) schema.
func (l *Log) Create(ctx context.Context, fingerprint string) error {
	for _, stmt := range []string{
		// Unlogged: it goes with the unlogged staging tables (Log).
		`CREATE UNLOGGED TABLE ` + l.t("run") + ` (fingerprint text NOT NULL, finishing boolean NOT NULL DEFAULT false,
			started_at timestamptz NOT NULL DEFAULT now())`,
		`CREATE TABLE ` + l.t("passes") + ` (pass integer PRIMARY KEY, position bigint NOT NULL, hash bytea,
			events bigint NOT NULL, skipped bigint NOT NULL, history bigint NOT NULL,
			recorded_at timestamptz NOT NULL DEFAULT now())`,
		// Written once a pass and read only to resume: autovacuum going
		// through it during the rebuild was CPU taken from the rebuild.
		`CREATE TABLE ` + l.t("carry") + ` (pass integer NOT NULL, kind text NOT NULL, key text NOT NULL, value bytea NOT NULL)
			WITH (autovacuum_enabled = false, toast.autovacuum_enabled = false)`,
		`CREATE INDEX ON ` + l.t("carry") + ` (kind, key, pass)`,
	} {
		if _, err := l.pool.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("create the replay's pass record: %w", err)
		}
	}
	if _, err := l.pool.Exec(ctx, `INSERT INTO `+l.t("run")+` (fingerprint) VALUES ($1)`, fingerprint); err != nil {
		return fmt.Errorf("record the replay's fingerprint: %w", err)
	}
	return nil
}

// Record records pass p complete, with the carried rows it changed, in one
// transaction. The hash is read from the event store.
func (l *Log) Record(ctx context.Context, p Pass, carry []Carry) error {
	tx, err := l.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{l.schema, "carry"}, []string{"pass", "kind", "key", "value"},
		pgx.CopyFromSlice(len(carry), func(i int) ([]any, error) {
			return []any{p.N, carry[i].Kind, carry[i].Key, carry[i].Value}, nil
		})); err != nil {
		return fmt.Errorf("record pass %d's carried state: %w", p.N, err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO `+l.t("passes")+` (pass, position, hash, events, skipped, history)
		VALUES ($1, $2, (SELECT hash FROM events WHERE position = $2), $3, $4, $5)`,
		p.N, p.Position, p.Events, p.Skipped, p.History); err != nil {
		return fmt.Errorf("record pass %d: %w", p.N, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("record pass %d: %w", p.N, err)
	}
	return nil
}

// Finishing records that the passes are over and the shadow tables are
// being finished: from then on the record no longer describes them.
func (l *Log) Finishing(ctx context.Context) error {
	if _, err := l.pool.Exec(ctx, `UPDATE `+l.t("run")+` SET finishing = true`); err != nil {
		return fmt.Errorf("record the replay finishing: %w", err)
	}
	return nil
}

// State is what Load found.
type State struct {
	// Found: the schema holds the record of an unfinished rebuild.
	Found bool
	// Last is its last completed pass, when it can resume (Reason "").
	Last Pass
	// Reason says why it cannot, when Found.
	Reason string
}

// Load reads the record of an interrupted rebuild and checks that a rebuild
// with fingerprint may resume from its last pass: same fingerprint, not
// interrupted while finishing, at least one pass, the event at the pass's
// position still the one it read, and the shadow history still holding
// the rows the passes wrote.
func (l *Log) Load(ctx context.Context, fingerprint string) (State, error) {
	var st State
	var exists bool
	if err := l.pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, l.t("run")).Scan(&exists); err != nil {
		return st, fmt.Errorf("find the replay's pass record: %w", err)
	}
	if !exists {
		return st, nil
	}
	st.Found = true
	var (
		was       string
		finishing bool
	)
	err := l.pool.QueryRow(ctx, `SELECT fingerprint, finishing FROM `+l.t("run")).Scan(&was, &finishing)
	if errors.Is(err, pgx.ErrNoRows) {
		st.Reason = "its record is empty (PostgreSQL empties the unlogged staging tables after a crash)"
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("read the replay's pass record: %w", err)
	}
	switch {
	case was != fingerprint:
		st.Reason = fmt.Sprintf("it ran with other arguments or another version (%s; now %s)", was, fingerprint)
		return st, nil
	case finishing:
		st.Reason = "it was interrupted after its last pass, while finishing the shadow tables"
		return st, nil
	}
	p := &st.Last
	err = l.pool.QueryRow(ctx, `SELECT pass, position, hash, events, skipped, history FROM `+l.t("passes")+`
		ORDER BY pass DESC LIMIT 1`).Scan(&p.N, &p.Position, &p.Hash, &p.Events, &p.Skipped, &p.History)
	if errors.Is(err, pgx.ErrNoRows) {
		st.Reason = "it completed no pass"
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("read the replay's last pass: %w", err)
	}
	var hash []byte
	err = l.pool.QueryRow(ctx, `SELECT hash FROM events WHERE position = $1`, p.Position).Scan(&hash)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return st, fmt.Errorf("read the event at position %d: %w", p.Position, err)
	}
	if err != nil || !bytes.Equal(hash, p.Hash) {
		st.Reason = fmt.Sprintf("the event at position %d is not the one its pass %d read (the ledger changed)", p.Position, p.N)
		return st, nil
	}
	if err := l.pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, l.history).Scan(&exists); err != nil {
		return st, fmt.Errorf("find the shadow history: %w", err)
	}
	if !exists {
		st.Reason = "its shadow tables are gone"
		return st, nil
	}
	var rows int64
	if err := l.pool.QueryRow(ctx, `SELECT count(*) FROM `+l.history+` WHERE position <= $1`, p.Position).Scan(&rows); err != nil {
		return st, fmt.Errorf("count the shadow history: %w", err)
	}
	if rows != p.History {
		st.Reason = fmt.Sprintf("the shadow history holds %d rows up to position %d, its passes wrote %d "+
			"(they were changed outside the replay)", rows, p.Position, p.History)
	}
	return st, nil
}

// Rewind drops what was written after pass last: the record of later
// passes, and the rows of tables (schema-qualified, each with a position
// column) beyond its position: a pass that was being written when the
// rebuild stopped.
func (l *Log) Rewind(ctx context.Context, last Pass, tables []string) error {
	tx, err := l.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(ctx)
	stmts := []string{`DELETE FROM ` + l.t("passes") + ` WHERE pass > $1`, `DELETE FROM ` + l.t("carry") + ` WHERE pass > $1`}
	for _, stmt := range stmts {
		if _, err := tx.Exec(ctx, stmt, last.N); err != nil {
			return fmt.Errorf("rewind the replay to pass %d: %w", last.N, err)
		}
	}
	for _, t := range tables {
		if _, err := tx.Exec(ctx, `DELETE FROM `+t+` WHERE position > $1`, last.Position); err != nil {
			return fmt.Errorf("rewind %s to position %d: %w", t, last.Position, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("rewind the replay to pass %d: %w", last.N, err)
	}
	return nil
}

// Carried calls f with every carried row as of pass n: per kind and key,
// the row of the last pass up to n that changed it.
func (l *Log) Carried(ctx context.Context, n int, f func(Carry) error) error {
	rows, _ := l.pool.Query(ctx, `SELECT DISTINCT ON (kind, key) kind, key, value FROM `+l.t("carry")+`
		WHERE pass <= $1 ORDER BY kind, key, pass DESC`, n)
	var c Carry
	_, err := pgx.ForEachRow(rows, []any{&c.Kind, &c.Key, &c.Value}, func() error { return f(c) })
	if err != nil {
		return fmt.Errorf("read the replay's carried state: %w", err)
	}
	return nil
}
