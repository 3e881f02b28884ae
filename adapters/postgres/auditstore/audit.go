// Package auditstore reads the event store for auditors and the console:
// `pitboss verify` (the hash chain, double entry, the accounts and
// idempotency records, and the read models against a rebuild by
// readstore), the verify runs, `pitboss export`, a client's audit events
// and a history row's detail with the ledger events behind it. It
// implements the ports of package audit.
package auditstore

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/pitboss/pitboss/audit"
)

// Audit reads the event store for auditors: `pitboss verify`, `pitboss
// export` and GET /api/v1/audit/events. It only reads, except SaveRun.
type Audit struct {
	pool *pgxpool.Pool
}

var (
	_ audit.Log  = (*Audit)(nil)
	_ audit.Runs = (*Audit)(nil)
)

// NewAudit returns the audit reader over pool.
func NewAudit(pool *pgxpool.Pool) *Audit { return &Audit{pool: pool} }

// VerifyOptions configures Verify.
type VerifyOptions struct {
	// Examples bounds the broken rows listed per check. Default 10.
	Examples int
	// Anchors are hashes recorded earlier; each must still be at its
	// position.
	Anchors []audit.Anchor
	// SkipReadModels leaves the read-model comparison out (it holds the
	// rebuilt read models in memory).
	SkipReadModels bool
	// BatchSize is the events read per round trip. Default 2000.
	BatchSize int
	// Progress, when set, is called after every batch and at the end of
	// each phase.
	Progress func(audit.Progress)
}

const (
	sqlAuditEvents = `
SELECT ` + recordColumns + `
  FROM events WHERE position > $1 AND position <= $2 ORDER BY position LIMIT $3`

	// Per account, what its events say: the exact numeric sum of its
	// postings, the events on its stream and their highest version, and the
	// last position that touched it. Amounts that are not plain decimal
	// text are counted, not cast (a cast would abort the whole check; the
	// chain check names those events). The aggregate may run in parallel
	// and spills to disk; its groups stream out in byte order to merge
	// with the accounts table.
	sqlAuditFold = `
SELECT t.account, coalesce(sum(t.amount)::text, ''), count(t.amount), sum(t.bad)::bigint,
       sum(t.on_stream)::bigint, coalesce(max(t.version), 0), max(t.position)
  FROM (
    SELECT stream_id AS account, position, 1 AS on_stream, stream_version AS version,
           NULL::numeric AS amount, 0 AS bad
      FROM events
    UNION ALL
    SELECT p.value->>'account', e.position, 0, NULL,
           CASE WHEN p.value->>'amount' ~ '^-?[0-9]{1,40}(\.[0-9]{1,40})?$' THEN (p.value->>'amount')::numeric END,
           CASE WHEN p.value->>'amount' ~ '^-?[0-9]{1,40}(\.[0-9]{1,40})?$' THEN 0 ELSE 1 END
      FROM events e
     CROSS JOIN LATERAL json_array_elements(CASE WHEN json_typeof(e.body->'data'->'postings') = 'array'
                                                 THEN e.body->'data'->'postings' ELSE '[]'::json END) p
  ) t
 WHERE t.account IS NOT NULL
 GROUP BY t.account
 ORDER BY t.account COLLATE "C"`

	sqlAuditAccounts = `
SELECT account_id, kind, currency, balance, version, last_position FROM accounts ORDER BY account_id COLLATE "C"`

	// Idempotency records that name an event which does not exist, or sits
	// at another position than the record says.
	sqlAuditRecords = `
WITH r AS (
  SELECT key, record->>'event_id' AS event_id, record->>'position' AS position
    FROM tx_records
   WHERE coalesce(record->>'event_id', '') <> ''
), j AS (
  SELECT r.key, r.event_id, r.position, e.position AS event_position
    FROM r LEFT JOIN events e
      ON e.event_id = CASE WHEN r.event_id ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
                           THEN r.event_id::uuid END
)
SELECT key, event_id, coalesce(position, ''), event_position, count(*) OVER ()
  FROM j
 WHERE event_position IS NULL OR (position IS NOT NULL AND position <> event_position::text)
 ORDER BY key COLLATE "C"
 LIMIT $1`
)

// Verify checks the whole event store in one snapshot: the hash chain, the
// event bodies, double entry, the anchors, the accounts table against the
// fold of the events, the idempotency records and the verifiable log
// (checkLog); then the read models
// against a rebuild (in the rebuild's own snapshot). Memory stays bounded
// by the batch size and the number of currencies: events are read in
// batches by position, and the per-account fold is aggregated by Postgres
// and merged with the accounts table as both stream in. The fold and the
// accounts are read on two more connections sharing the snapshot, while
// this process hashes and decodes the events.
//
// An error means the verification could not run; a broken ledger is a
// Report with OK false.
func (a *Audit) Verify(ctx context.Context, opts VerifyOptions) (audit.Report, error) {
	if opts.BatchSize <= 0 {
		opts.BatchSize = 2000
	}
	if opts.Examples <= 0 {
		opts.Examples = audit.DefaultExamples
	}
	progress := opts.Progress
	if progress == nil {
		progress = func(audit.Progress) {}
	}
	rep := audit.Report{StartedAt: time.Now().UTC()}

	// One snapshot for events, accounts and records: the ledger writes all
	// three in one transaction, so a live ledger never shows a half batch.
	// Read-only, it takes no transaction id and holds no writer back.
	snaps, release, err := a.sharedSnapshot(ctx, 4)
	if err != nil {
		return rep, err
	}
	defer release()

	chain := audit.NewChain(opts.Examples, opts.Anchors...)
	var accounts, records, logs audit.CheckResult
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		var err error
		if accounts, err = foldAccounts(gctx, snaps[1], snaps[2], opts.Examples); err != nil {
			return err
		}
		records, err = a.checkRecords(gctx, snaps[1], opts.Examples)
		return err
	})
	g.Go(func() error { return walkChain(gctx, snaps[0], chain, opts.BatchSize, progress) })
	g.Go(func() error {
		var err error
		logs, err = checkLog(gctx, snaps[3], opts.Examples, opts.BatchSize)
		return err
	})
	if err := g.Wait(); err != nil {
		return rep, err
	}
	progress(audit.Progress{Phase: "accounts", Done: accounts.Rows, Total: accounts.Rows})
	progress(audit.Progress{Phase: "tx_records", Done: records.Rows, Total: records.Rows})

	checks, totals := chain.Results()
	rep.Events = chain.Events()
	rep.HeadPosition, _ = chain.Head()
	if rep.Events > 0 {
		_, h := chain.Head()
		rep.HeadHash = hex.EncodeToString(h)
	}
	rep.Currencies = totals
	rep.Clients = chain.Clients()
	rep.Checks = append(checks, accounts, records, logs)
	release()

	if opts.SkipReadModels {
		rep.Checks = append(rep.Checks, audit.CheckResult{Name: audit.CheckReadModels, Skipped: "--skip-read-models"})
	} else {
		rm, err := checkReadModels(ctx, a.pool, opts.Examples, progress)
		if err != nil {
			return rep, err
		}
		rep.Checks = append(rep.Checks, rm)
	}
	rep.Finish(time.Now().UTC())
	return rep, nil
}

// sharedSnapshot opens n read-only REPEATABLE READ transactions on n
// connections that see the same snapshot (pg_export_snapshot): Verify's
// walks the chain, two stream the account fold and the accounts table side
// by side, one recomputes the verifiable log; VerifySince's walks the
// events after the checkpoint while the others read the accounts. release
// ends them all; it may be called more than once.
func (a *Audit) sharedSnapshot(ctx context.Context, n int) (snaps []pgx.Tx, release func(), err error) {
	snaps = make([]pgx.Tx, n)
	var conns []*pgxpool.Conn
	var txs []pgx.Tx
	release = func() {
		for _, tx := range txs {
			_ = tx.Rollback(context.WithoutCancel(ctx)) // read only: nothing to keep
		}
		for _, c := range conns {
			c.Release()
		}
		conns, txs = nil, nil
	}
	defer func() {
		if err != nil {
			release()
		}
	}()
	var id string
	for i := range snaps {
		c, err := a.pool.Acquire(ctx)
		if err != nil {
			return snaps, release, fmt.Errorf("acquire connection: %w", err)
		}
		conns = append(conns, c)
		tx, err := c.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
		if err != nil {
			return snaps, release, fmt.Errorf("begin snapshot: %w", err)
		}
		txs = append(txs, tx)
		if i == 0 {
			err = tx.QueryRow(ctx, `SELECT pg_export_snapshot()`).Scan(&id)
		} else {
			// An identifier Postgres produced, not user input.
			_, err = tx.Exec(ctx, "SET TRANSACTION SNAPSHOT '"+strings.ReplaceAll(id, "'", "")+"'")
		}
		if err != nil {
			return snaps, release, fmt.Errorf("share snapshot: %w", err)
		}
		snaps[i] = tx
	}
	return snaps, release, nil
}

// walkChain reads every event in position order, in batches (the next
// batch is read while the current one is examined), examines the rows of
// a batch in parallel (hashing and decoding are per row) and links them in
// order.
func walkChain(ctx context.Context, tx pgx.Tx, chain *audit.Chain, batch int, progress func(audit.Progress)) error {
	var head int64
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(position), 0) FROM events`).Scan(&head); err != nil {
		return fmt.Errorf("read chain head: %w", err)
	}
	start := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	type batchOf struct {
		recs []audit.Record
		err  error
	}
	batches := make(chan batchOf, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel() // runs before wg.Wait: the reader stops
	wg.Go(func() {
		defer close(batches)
		var after int64
		for {
			recs, err := readEvents(ctx, tx, after, head, batch, make([]audit.Record, 0, batch))
			select {
			case batches <- batchOf{recs, err}:
			case <-ctx.Done():
				return
			}
			if err != nil || len(recs) < batch {
				return
			}
			after = recs[len(recs)-1].Position
		}
	})
	workers := max(1, min(runtime.GOMAXPROCS(0), 8))
	exs := make([]audit.Examined, batch)
	var done int64
	for b := range batches {
		if b.err != nil {
			return b.err
		}
		examineAll(b.recs, exs, workers)
		for i := range b.recs {
			chain.Add(b.recs[i], exs[i])
		}
		done += int64(len(b.recs))
		progress(audit.Progress{Phase: "events", Done: done, Total: head, Elapsed: time.Since(start)})
	}
	return ctx.Err()
}

func examineAll(recs []audit.Record, exs []audit.Examined, workers int) {
	if workers == 1 || len(recs) < 64 {
		for i := range recs {
			exs[i] = audit.Examine(recs[i])
		}
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(recs); i += workers {
				exs[i] = audit.Examine(recs[i])
			}
		})
	}
	wg.Wait()
}

// readEvents appends the events after position after, up to upTo, at most
// limit of them.
func readEvents(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, after, upTo int64, limit int, dst []audit.Record) ([]audit.Record, error) {
	rows, err := q.Query(ctx, sqlAuditEvents, after, upTo, limit)
	if err != nil {
		return dst, fmt.Errorf("read events after %d: %w", after, err)
	}
	dst, err = appendRecords(rows, dst)
	if err != nil {
		return dst, fmt.Errorf("read events after %d: %w", after, err)
	}
	return dst, nil
}

// recordColumns are the columns of events that make an audit.Record, in
// the order appendRecords scans them.
const recordColumns = `position, event_id::text, stream_id, stream_version, event_type, occurred_at, body::text, prev_hash, hash`

// appendRecords appends the rows of a query of recordColumns to dst, and
// closes rows.
func appendRecords(rows pgx.Rows, dst []audit.Record) ([]audit.Record, error) {
	defer rows.Close()
	for rows.Next() {
		var r audit.Record
		if err := rows.Scan(&r.Position, &r.EventID, &r.StreamID, &r.StreamVersion, &r.Type, &r.OccurredAt,
			&r.Body, &r.PrevHash, &r.Hash); err != nil {
			return dst, err
		}
		r.OccurredAt = r.OccurredAt.UTC()
		dst = append(dst, r)
	}
	return dst, rows.Err()
}

// rowStream hands out the rows of one query as they arrive. pgx reads the
// result from the socket as it goes, and the server waits while the socket
// is full, so memory holds a buffer, not the result. A plain query (unlike
// a cursor) may run in parallel on the server.
type rowStream[T any] struct {
	rows pgx.Rows
	scan func(pgx.Rows) (T, error)
	cur  T
}

func streamRows[T any](ctx context.Context, tx pgx.Tx, what, query string, scan func(pgx.Rows) (T, error)) (*rowStream[T], error) {
	rows, err := tx.Query(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	return &rowStream[T]{rows: rows, scan: scan}, nil
}

func (s *rowStream[T]) next() (*T, bool, error) {
	if !s.rows.Next() {
		s.rows.Close()
		return nil, false, s.rows.Err()
	}
	v, err := s.scan(s.rows)
	if err != nil {
		s.rows.Close()
		return nil, false, err
	}
	s.cur = v
	return &s.cur, true, nil
}

// foldAccounts merges the per-account fold of the events (read on foldTx)
// with the accounts table (read on accTx), both in byte order of the
// account id.
func foldAccounts(ctx context.Context, foldTx, accTx pgx.Tx, examples int) (audit.CheckResult, error) {
	folds, err := streamRows(ctx, foldTx, "the fold of the accounts", sqlAuditFold, func(r pgx.Rows) (audit.AccountFold, error) {
		var f audit.AccountFold
		err := r.Scan(&f.Account, &f.Sum, &f.Postings, &f.BadAmounts, &f.StreamEvents, &f.MaxVersion, &f.LastPosition)
		return f, err
	})
	if err != nil {
		return audit.CheckResult{}, err
	}
	defer folds.rows.Close()
	rows, err := streamRows(ctx, accTx, "accounts", sqlAuditAccounts, func(r pgx.Rows) (audit.AccountRow, error) {
		var a audit.AccountRow
		err := r.Scan(&a.Account, &a.Kind, &a.Currency, &a.Balance, &a.Version, &a.LastPosition)
		return a, err
	})
	if err != nil {
		return audit.CheckResult{}, err
	}
	defer rows.rows.Close()
	acc := audit.NewAccounts(examples)
	if err := acc.Merge(folds.next, rows.next); err != nil {
		return audit.CheckResult{}, fmt.Errorf("compare accounts: %w", err)
	}
	return acc.Result(), nil
}

// checkRecords checks that every idempotency record that names an event
// names one that exists, at the position it says.
func (a *Audit) checkRecords(ctx context.Context, tx pgx.Tx, examples int) (audit.CheckResult, error) {
	res := audit.CheckResult{Name: audit.CheckTxRecords}
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM tx_records`).Scan(&res.Rows); err != nil {
		return res, fmt.Errorf("count tx_records: %w", err)
	}
	rows, err := tx.Query(ctx, sqlAuditRecords, examples)
	if err != nil {
		return res, fmt.Errorf("check tx_records: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			key, eventID, pos string
			at                *int64
			n                 int64
		)
		if err := rows.Scan(&key, &eventID, &pos, &at, &n); err != nil {
			return res, fmt.Errorf("check tx_records: %w", err)
		}
		res.Failures = n
		f := audit.Finding{Key: key, EventID: eventID, Field: "event_id", Stored: eventID}
		if at == nil {
			f.Message = fmt.Sprintf("names event %s, which is not in the event store", eventID)
		} else {
			f.Field, f.Stored, f.Recomputed, f.Position = "position", pos, fmt.Sprint(*at), *at
			f.Message = fmt.Sprintf("says its event %s is at position %s, but it is at %d", eventID, pos, *at)
		}
		res.Examples = append(res.Examples, f)
	}
	if err := rows.Err(); err != nil {
		return res, fmt.Errorf("check tx_records: %w", err)
	}
	res.OK = res.Failures == 0
	return res, nil
}

// SaveRun records a verification's outcome for the console.
func (a *Audit) SaveRun(ctx context.Context, rep audit.Report) error {
	raw, err := json.Marshal(rep)
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	_, err = a.pool.Exec(ctx, `
INSERT INTO audit_runs (started_at, finished_at, ok, events, head_position, head_hash, report)
VALUES ($1, $2, $3, $4, $5, $6, $7)`, rep.StartedAt, rep.FinishedAt, rep.OK, rep.Events, rep.HeadPosition, rep.HeadHash, raw)
	if err != nil {
		return fmt.Errorf("save verify run: %w", err)
	}
	return nil
}

// LastRun returns the most recent recorded verification; ok is false when
// there is none.
func (a *Audit) LastRun(ctx context.Context) (rep audit.Report, ok bool, err error) {
	var raw []byte
	err = a.pool.QueryRow(ctx, `SELECT report FROM audit_runs ORDER BY finished_at DESC, id DESC LIMIT 1`).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return rep, false, nil
	}
	if err != nil {
		return rep, false, fmt.Errorf("read last verify run: %w", err)
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		return rep, false, fmt.Errorf("decode last verify run: %w", err)
	}
	return rep, true, nil
}
