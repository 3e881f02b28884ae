package auditstore

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/pitboss/pitboss/adapters/postgres/logstore"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/ledgerlog"
	"github.com/pitboss/pitboss/statement"
)

// Statements keeps the closed periods' statements (docs/statements.md).
type Statements struct {
	pool *pgxpool.Pool
}

var _ statement.Store = (*Statements)(nil)

// NewStatements returns the statement store.
func NewStatements(pool *pgxpool.Pool) *Statements { return &Statements{pool: pool} }

const (
	statementLockClass = 0x73746d74 // "stmt"
	statementColumns   = `s.id::text, s.client_id, s.provider, s.period, s.period_from, s.period_to, s.closed_at, s.key_id,
		s.payload, s.signature, k.public_key`
)

func scanStatement(row pgx.Row) (statement.Signed, error) {
	var (
		s   statement.Signed
		pub []byte
	)
	err := row.Scan(&s.ID, &s.ClientID, &s.Provider, &s.Period, &s.From, &s.To, &s.ClosedAt, &s.KeyID, &s.Payload, &s.Signature, &pub)
	s.PublicKey, s.ClosedAt = ed25519.PublicKey(pub), s.ClosedAt.UTC()
	return s, err
}

// Closed lists the client's statements at provider, oldest period first.
func (st *Statements) Closed(ctx context.Context, client, provider string) ([]statement.Signed, error) {
	rows, err := st.pool.Query(ctx, `SELECT `+statementColumns+` FROM statements s JOIN checkpoint_keys k USING (key_id)
		WHERE s.client_id = $1 AND s.provider = $2 ORDER BY s.period_from`, client, provider)
	if err != nil {
		return nil, fmt.Errorf("list statements: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (statement.Signed, error) { return scanStatement(r) })
	if err != nil {
		return nil, fmt.Errorf("list statements: %w", err)
	}
	return out, nil
}

// List returns a page of the client's statements (provider "" for all),
// the latest closed first, and how many there are.
func (st *Statements) List(ctx context.Context, client, provider string, page, perPage int) ([]statement.Signed, int, error) {
	var total int
	if err := st.pool.QueryRow(ctx, `SELECT count(*) FROM statements WHERE client_id = $1 AND ($2 = '' OR provider = $2)`,
		client, provider).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count statements: %w", err)
	}
	rows, err := st.pool.Query(ctx, `SELECT `+statementColumns+` FROM statements s JOIN checkpoint_keys k USING (key_id)
		WHERE s.client_id = $1 AND ($2 = '' OR s.provider = $2) ORDER BY s.closed_at DESC, s.id LIMIT $3 OFFSET $4`,
		client, provider, perPage, (page-1)*perPage)
	if err != nil {
		return nil, 0, fmt.Errorf("list statements: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (statement.Signed, error) { return scanStatement(r) })
	if err != nil {
		return nil, 0, fmt.Errorf("list statements: %w", err)
	}
	return out, total, nil
}

// Get returns the client's statement id; domain.ErrNotFound when the
// client has none with that id.
func (st *Statements) Get(ctx context.Context, client, id string) (statement.Signed, error) {
	s, err := scanStatement(st.pool.QueryRow(ctx, `SELECT `+statementColumns+` FROM statements s JOIN checkpoint_keys k USING (key_id)
		WHERE s.client_id = $1 AND s.id::text = $2`, client, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return s, domain.ErrNotFound
	}
	if err != nil {
		return s, fmt.Errorf("read statement: %w", err)
	}
	return s, nil
}

// LastEventBefore is the client's last event before end as the history
// read model numbered it (its per-day seq ranges), with the chain's hash
// there: every event of the client created before end is at or below it.
func (st *Statements) LastEventBefore(ctx context.Context, client string, end time.Time) (int64, []byte, error) {
	var (
		pos  *int64
		hash []byte
	)
	if err := st.pool.QueryRow(ctx, `SELECT max(max_seq) FROM readmodels.tx_days WHERE client_id = $1 AND day < $2::date`,
		client, end.UTC().Format(time.DateOnly)).Scan(&pos); err != nil {
		return 0, nil, fmt.Errorf("the client's last event before %s: %w", end.Format(time.DateOnly), err)
	}
	if pos == nil {
		return 0, nil, nil
	}
	if err := st.pool.QueryRow(ctx, `SELECT hash FROM events WHERE position = $1`, *pos).Scan(&hash); err != nil {
		return 0, nil, fmt.Errorf("the chain's hash at %d: %w", *pos, err)
	}
	return *pos, hash, nil
}

// CheckpointCovering is the client's first checkpoint at or after position.
func (st *Statements) CheckpointCovering(ctx context.Context, client string, position int64) (int64, bool, error) {
	var id int64
	err := st.pool.QueryRow(ctx, `SELECT id FROM checkpoints WHERE client_id = $1 AND position >= $2 ORDER BY id LIMIT 1`,
		client, position).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("the checkpoint covering %d: %w", position, err)
	}
	return id, true, nil
}

// Insert stores s under the client and provider's lock: refused when its
// period overlaps a stored one (statement.ErrClosed), starts before one
// (statement.ErrOutOfOrder), or another was stored since the close listed
// known of them (statement.ErrConcurrent).
func (st *Statements) Insert(ctx context.Context, s statement.Signed, known int) error {
	return pgx.BeginFunc(ctx, st.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2 || chr(31) || $3))`,
			statementLockClass, s.ClientID, s.Provider); err != nil {
			return fmt.Errorf("lock statements: %w", err)
		}
		var n int
		var overlap, later bool
		if err := tx.QueryRow(ctx, `SELECT count(*), coalesce(bool_or(period_from <= $4 AND $3 <= period_to), false),
			coalesce(bool_or(period_from > $4), false) FROM statements WHERE client_id = $1 AND provider = $2`,
			s.ClientID, s.Provider, s.From, s.To).Scan(&n, &overlap, &later); err != nil {
			return fmt.Errorf("check statements: %w", err)
		}
		switch {
		case overlap:
			return statement.ErrClosed
		case later:
			return statement.ErrOutOfOrder
		case n != known:
			return statement.ErrConcurrent
		}
		if _, err := tx.Exec(ctx, `INSERT INTO statements (id, client_id, provider, period, period_from, period_to, closed_at, key_id,
			payload, signature) VALUES ($1::uuid, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			s.ID, s.ClientID, s.Provider, s.Period, s.From, s.To, s.ClosedAt, s.KeyID, s.Payload, s.Signature); err != nil {
			return fmt.Errorf("store statement: %w", err)
		}
		return nil
	})
}

// ClientLogAt is the client's verifiable log at position (a statement's):
// how many of its events are at or below position, and the root of their
// tree. When the builder's stored tree has reached position, the root is
// read from the stored tiles, checked against the stored root
// (tlog.TileHashReader); when it has not yet (the builder runs every
// PITBOSS_LOG_CHECKPOINT_INTERVAL in the relay role), the client's events
// after the stored tree up to position are appended to it as the builder
// will append them (ledgerlog.Append), so a close neither waits for the
// builder nor is refused. 0 and nil when the client has no event there.
func (st *Statements) ClientLogAt(ctx context.Context, client string, position int64) (int64, []byte, error) {
	logs := logstore.New(st.pool)
	name := ledgerlog.ClientLog(client)
	tree, err := logs.Tree(ctx, name)
	if err != nil {
		return 0, nil, err
	}
	var stored tlog.HashReader
	if tree.Size > 0 {
		stored = tlog.TileHashReader(tlog.Tree{N: tree.Size, Hash: tree.Root}, logs.TileReader(ctx, name))
	}
	if tree.Position >= position {
		var size int64
		if err := st.pool.QueryRow(ctx, `SELECT coalesce((SELECT n * 256 + (SELECT count(*) FROM unnest(positions) p WHERE p <= $2)
			FROM log_leaves WHERE log = $1 AND first_position <= $2 ORDER BY first_position DESC LIMIT 1), 0)`,
			name, position).Scan(&size); err != nil {
			return 0, nil, fmt.Errorf("the leaves of %s up to %d: %w", name, position, err)
		}
		if size == 0 {
			return 0, nil, nil
		}
		root, err := tlog.TreeHash(size, stored)
		if err != nil {
			return 0, nil, fmt.Errorf("the root of %s at %d: %w", name, size, err)
		}
		return size, root[:], nil
	}
	rows, err := st.pool.Query(ctx, `SELECT body::text FROM events WHERE position > $1 AND position <= $2
		AND split_part(stream_id, ':', 2) = $3 ORDER BY position`, tree.Position, position, client)
	if err != nil {
		return 0, nil, fmt.Errorf("the events of %s after its tree: %w", name, err)
	}
	var leaves []tlog.Hash
	var body string
	if _, err := pgx.ForEachRow(rows, []any{&body}, func() error {
		leaves = append(leaves, ledgerlog.LeafHash([]byte(body)))
		return nil
	}); err != nil {
		return 0, nil, fmt.Errorf("the events of %s after its tree: %w", name, err)
	}
	if tree.Size+int64(len(leaves)) == 0 {
		return 0, nil, nil
	}
	g, err := ledgerlog.Append(tree.Size, stored, leaves)
	if err != nil {
		return 0, nil, fmt.Errorf("%s at %d: %w", name, position, err)
	}
	return g.To, g.Root[:], nil
}
