package auditstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres/readstore"
	"github.com/pitboss/pitboss/audit"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/projections"
)

// Console reads what the console shows beyond the other read routes: one
// history row with the ledger events behind it (docs/console.md).
type Console struct {
	pool *pgxpool.Pool
}

var _ audit.TransactionDetails = (*Console)(nil)

// NewConsole returns the console's store.
func NewConsole(pool *pgxpool.Pool) *Console { return &Console{pool: pool} }

// The rows a detail's events come from. Every row of one round, and a
// rollback and what it undoes, belong to one player, so the lookups use the
// (client_id, player_id, ...) index and read only that player's rows.
var (
	sqlConsoleRow = `SELECT ` + readstore.TxCols("") + ` FROM ` + readstore.ReadModelSchema + `.transactions WHERE id = $1 AND client_id = $2`
	// The event rows of a game result's round.
	sqlConsoleRoundRows = `SELECT id::text FROM ` + readstore.ReadModelSchema + `.transactions WHERE ` + readstore.RoundRowsWhere
	// The rollbacks that reference a bet or win.
	sqlConsoleReferencing = `
SELECT id::text FROM ` + readstore.ReadModelSchema + `.transactions
 WHERE client_id = $1 AND player_id = $2 AND provider = $3 AND reference_id = $4 AND type <> 'game_result'`
	// The client check repeats ClientEvents': the stream names the client
	// and so does the body.
	sqlConsoleEvents = `
SELECT position, event_id::text, stream_id, stream_version, event_type, occurred_at, body::text, prev_hash, hash
  FROM events
 WHERE event_id = ANY($1::uuid[]) AND split_part(stream_id, ':', 2) = $2 AND body->'data'->>'client_id' = $2
 ORDER BY position`
)

// TransactionDetail implements audit.TransactionDetails, in one read-only
// snapshot.
func (c *Console) TransactionDetail(ctx context.Context, clientID, id string) (audit.TransactionDetail, error) {
	var d audit.TransactionDetail
	tx, err := c.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return d, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(ctx)
	rows, err := tx.Query(ctx, sqlConsoleRow, id, clientID)
	if err != nil {
		return d, fmt.Errorf("read transaction %s: %w", id, err)
	}
	d.Transaction, err = pgx.CollectExactlyOneRow(rows, readstore.ScanTx)
	if errors.Is(err, pgx.ErrNoRows) {
		return d, fmt.Errorf("transaction %s: %w", id, domain.ErrNotFound)
	}
	if err != nil {
		return d, fmt.Errorf("read transaction %s: %w", id, err)
	}
	t := d.Transaction
	var ids []string
	switch {
	case t.Type == projections.TypeGameResult:
		ids, err = collectIDs(ctx, tx, sqlConsoleRoundRows, t.ClientID, t.PlayerID, t.Provider, t.RoundID)
	case t.Provider != "" && t.ExternalTxID != "":
		ids, err = collectIDs(ctx, tx, sqlConsoleReferencing, t.ClientID, t.PlayerID, t.Provider, t.ExternalTxID)
		ids = append(ids, t.ID)
	default:
		ids = []string{t.ID}
	}
	if err != nil {
		return d, fmt.Errorf("read the rows of transaction %s: %w", id, err)
	}
	evs, err := tx.Query(ctx, sqlConsoleEvents, ids, clientID)
	if err != nil {
		return d, fmt.Errorf("read the events of transaction %s: %w", id, err)
	}
	d.Events, err = pgx.CollectRows(evs, func(r pgx.CollectableRow) (audit.Record, error) {
		var rec audit.Record
		err := r.Scan(&rec.Position, &rec.EventID, &rec.StreamID, &rec.StreamVersion, &rec.Type, &rec.OccurredAt,
			&rec.Body, &rec.PrevHash, &rec.Hash)
		rec.OccurredAt = rec.OccurredAt.UTC()
		return rec, err
	})
	if err != nil {
		return d, fmt.Errorf("read the events of transaction %s: %w", id, err)
	}
	return d, tx.Commit(ctx)
}

func collectIDs(ctx context.Context, tx pgx.Tx, query string, args ...any) ([]string, error) {
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
