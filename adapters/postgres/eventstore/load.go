package eventstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pitboss/pitboss/domain"
)

// load opens the transaction, takes the lock and reads the batch's state in
// one round trip.
//
// The advisory lock must be the transaction's first statement. Postgres
// gives a transaction its xid at its first write, which here comes after the
// lock; so among ledger writers, xid order is lock order, lock order is
// commit order (the lock is held to commit), and positions — allocated from
// the chain head read under the lock — follow the same order. Positions
// therefore appear in commit order, without holes (a batch that rolls back
// leaves the head where it was for the next one), the relay can read by
// position, and the hash chain can be global.
//
// READ COMMITTED is spelled out because the reads after the lock must each
// take a fresh snapshot, one that sees the previous batch's commit; under a
// server default of REPEATABLE READ the snapshot would date from before the
// lock wait.
func (l *Ledger) load(ctx context.Context, conn *pgx.Conn, b *batch) error {
	q := &pgx.Batch{}
	q.Queue("BEGIN ISOLATION LEVEL READ COMMITTED")
	q.Queue("SELECT pg_advisory_xact_lock($1)", l.cfg.LockKey)
	q.Queue(sqlLoadAccounts, b.accountIDs)
	q.Queue(sqlLoadRecords, b.recordKeys)
	q.Queue(sqlHead)
	br := conn.SendBatch(ctx, q)
	err := b.readLoad(br)
	if cerr := br.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("load state: %w", cerr)
	}
	return err
}

func (b *batch) readLoad(br pgx.BatchResults) error {
	if _, err := br.Exec(); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if _, err := br.Exec(); err != nil {
		return fmt.Errorf("take ledger lock: %w", err)
	}
	rows, err := br.Query()
	if err != nil {
		return fmt.Errorf("load accounts: %w", err)
	}
	var (
		id string
		st domain.AccountState
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &st.Balance, &st.Version}, func() error {
		b.loadedAccounts[domain.AccountID(id)] = st
		return nil
	})
	if err != nil {
		return fmt.Errorf("load accounts: %w", err)
	}
	rows, err = br.Query()
	if err != nil {
		return fmt.Errorf("load records: %w", err)
	}
	var (
		key string
		raw []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&key, &raw}, func() error {
		var rec domain.TxRecord
		if err := json.Unmarshal(raw, &rec); err != nil {
			return fmt.Errorf("record %s: %w", key, err)
		}
		rec.Key = key
		b.loadedRecords = append(b.loadedRecords, rec)
		return nil
	})
	if err != nil {
		return fmt.Errorf("load records: %w", err)
	}
	b.headPosition, b.headHash, err = scanHead(br.QueryRow())
	if err != nil {
		return err
	}
	return nil
}
