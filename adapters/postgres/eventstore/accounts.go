package eventstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/projections"
)

// Accounts reads the committed state of accounts and of the event chain.
// It reads the rows the ledger writes in its batch transactions, so it sees
// every committed command at once (the read models may lag).
type Accounts struct {
	pool *pgxpool.Pool
}

var (
	_ commands.Balances       = (*Accounts)(nil)
	_ projections.LedgerHead  = (*Accounts)(nil)
	_ projections.ClientHeads = (*Accounts)(nil)
)

// NewAccounts returns a reader over pool.
func NewAccounts(pool *pgxpool.Pool) *Accounts { return &Accounts{pool: pool} }

// Account returns the balance and stream version of id. An account that
// has never been written is empty, not an error.
func (a *Accounts) Account(ctx context.Context, id domain.AccountID) (domain.AccountState, error) {
	var s domain.AccountState
	err := a.pool.QueryRow(ctx, `SELECT balance, version FROM accounts WHERE account_id = $1`, string(id)).
		Scan(&s.Balance, &s.Version)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return domain.AccountState{}, nil
	case err != nil:
		return domain.AccountState{}, fmt.Errorf("read account %s: %w", id, err)
	}
	return s, nil
}

// Head returns the position and hash of the last committed event, or 0 and
// domain.GenesisHash when there is none.
func (a *Accounts) Head(ctx context.Context) (position int64, hash []byte, err error) {
	return scanHead(a.pool.QueryRow(ctx, sqlHead))
}

// scanHead reads sqlHead's answer: the last event's position and hash, or
// 0 and domain.GenesisHash when there is none. Accounts.Head, the writer's
// load and its check of a batch answered from the cache read the head
// with it.
func scanHead(row pgx.Row) (position int64, hash []byte, err error) {
	err = row.Scan(&position, &hash)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return 0, append([]byte(nil), domain.GenesisHash...), nil
	case err != nil:
		return 0, nil, fmt.Errorf("read chain head: %w", err)
	}
	return position, hash, nil
}

// sqlClientHead walks the client's events backwards from atMost on
// events_client_position_idx (migrations/00008_audit.sql) and stops at the
// first (postgres.ClientEventAtOrBefore: a plan that cannot read the
// client's whole history). The body must name the same client, as in the
// audit export (adapters/postgres/auditstore).
var sqlClientHead = postgres.ClientEventAtOrBefore("position", "$1", "$2::bigint")

// ClientHead implements projections.ClientHeads: the position of
// clientID's last event at or below atMost, 0 when it has none there.
func (a *Accounts) ClientHead(ctx context.Context, clientID string, atMost int64) (int64, error) {
	var position int64
	err := a.pool.QueryRow(ctx, sqlClientHead, clientID, atMost).Scan(&position)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("read the head of client %s: %w", clientID, err)
	}
	return position, nil
}

// TxRecords reads the idempotency records of keys in one statement
// (wallet.TxRecordsBatch): the keys without one are not in the map.
func (a *Accounts) TxRecords(ctx context.Context, keys []string) (map[string]domain.TxRecord, error) {
	rows, _ := a.pool.Query(ctx, `SELECT key, record FROM tx_records WHERE key = ANY($1)`, keys)
	defer rows.Close()
	out := make(map[string]domain.TxRecord, len(keys))
	for rows.Next() {
		var (
			key string
			raw []byte
			rec domain.TxRecord
		)
		if err := rows.Scan(&key, &raw); err != nil {
			return nil, fmt.Errorf("read the records of %d keys: %w", len(keys), err)
		}
		if err := json.Unmarshal(raw, &rec); err != nil {
			return nil, fmt.Errorf("decode the record of %s: %w", key, err)
		}
		out[key] = rec
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the records of %d keys: %w", len(keys), err)
	}
	return out, nil
}

// TxRecord reads the idempotency record of key (domain.GameTxKey,
// domain.ClientTxKey); found is false when there is none.
func (a *Accounts) TxRecord(ctx context.Context, key string) (rec domain.TxRecord, found bool, err error) {
	var raw []byte
	err = a.pool.QueryRow(ctx, `SELECT record FROM tx_records WHERE key = $1`, key).Scan(&raw)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return rec, false, nil
	case err != nil:
		return rec, false, fmt.Errorf("read the record of %s: %w", key, err)
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		return rec, false, fmt.Errorf("decode the record of %s: %w", key, err)
	}
	return rec, true, nil
}
