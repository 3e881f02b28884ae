package postgres

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/audit"
)

// Audit reads the event store for auditors: `pitboss verify`, `pitboss
// export` and GET /api/v1/audit/events. It only reads, except SaveRun.
type Audit struct {
	pool *pgxpool.Pool
	rm   *ReadModels
}

var _ api.AuditLog = (*Audit)(nil)

// NewAudit returns the audit reader over pool.
func NewAudit(pool *pgxpool.Pool) *Audit { return &Audit{pool: pool, rm: NewReadModels(pool)} }

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
SELECT position, event_id::text, stream_id, stream_version, event_type, occurred_at, body::text, prev_hash, hash
  FROM events WHERE position > $1 AND position <= $2 ORDER BY position LIMIT $3`

	// Per account, what its events say: the exact numeric sum of its
	// postings, the events on its stream and their highest version, and the
	// last position that touched it. Amounts that are not plain decimal
	// text are counted, not cast (a cast would abort the whole check; the
	// chain check names those events). The hash aggregate spills to disk,
	// and the cursor hands the groups out in batches, in byte order to
	// merge with the accounts table.
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
// fold of the events, and the idempotency records; then the read models
// against a rebuild (in the rebuild's own snapshot). Memory stays bounded
// by the batch size and the number of currencies: events are read in
// batches by position, and the per-account fold is aggregated by Postgres
// and merged with the accounts table through two cursors.
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

	conn, err := a.pool.Acquire(ctx)
	if err != nil {
		return rep, fmt.Errorf("acquire connection: %w", err)
	}
	defer conn.Release()
	// One snapshot for events, accounts and records: the ledger writes all
	// three in one transaction, so a live ledger never shows a half batch.
	// Read-only, it takes no transaction id and holds no writer back.
	snap, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return rep, fmt.Errorf("begin snapshot: %w", err)
	}
	defer snap.Rollback(ctx)

	chain := audit.NewChain(opts.Examples, opts.Anchors...)
	if err := a.walkChain(ctx, snap, chain, opts.BatchSize, progress); err != nil {
		return rep, err
	}
	checks, totals := chain.Results()
	rep.Events = chain.Events()
	rep.HeadPosition, _ = chain.Head()
	if rep.Events > 0 {
		_, h := chain.Head()
		rep.HeadHash = hex.EncodeToString(h)
	}
	rep.Currencies = totals
	rep.Checks = checks

	accounts, err := a.foldAccounts(ctx, snap, opts, progress)
	if err != nil {
		return rep, err
	}
	rep.Checks = append(rep.Checks, accounts)

	records, err := a.checkRecords(ctx, snap, opts.Examples)
	if err != nil {
		return rep, err
	}
	progress(audit.Progress{Phase: "tx_records", Done: records.Rows, Total: records.Rows})
	rep.Checks = append(rep.Checks, records)
	if err := snap.Commit(ctx); err != nil {
		return rep, fmt.Errorf("end snapshot: %w", err)
	}

	if opts.SkipReadModels {
		rep.Checks = append(rep.Checks, audit.CheckResult{Name: audit.CheckReadModels, Skipped: "--skip-read-models"})
	} else {
		rm, err := a.compareReadModels(ctx, opts.Examples, progress)
		if err != nil {
			return rep, err
		}
		rep.Checks = append(rep.Checks, rm)
	}
	rep.Finish(time.Now().UTC())
	return rep, nil
}

// walkChain reads every event in position order, in batches, examines the
// rows of a batch in parallel (hashing and decoding are per row) and links
// them in order.
func (a *Audit) walkChain(ctx context.Context, tx pgx.Tx, chain *audit.Chain, batch int,
	progress func(audit.Progress)) error {
	var head int64
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(position), 0) FROM events`).Scan(&head); err != nil {
		return fmt.Errorf("read chain head: %w", err)
	}
	start := time.Now()
	workers := max(1, min(runtime.GOMAXPROCS(0), 8))
	recs := make([]audit.Record, 0, batch)
	exs := make([]audit.Examined, batch)
	var after, done int64
	for {
		var err error
		recs, err = readEvents(ctx, tx, after, head, batch, recs[:0])
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			break
		}
		examineAll(recs, exs, workers)
		for i := range recs {
			chain.Add(recs[i], exs[i])
		}
		after = recs[len(recs)-1].Position
		done += int64(len(recs))
		progress(audit.Progress{Phase: "events", Done: done, Total: head, Elapsed: time.Since(start)})
		if len(recs) < batch {
			break
		}
	}
	return nil
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
	defer rows.Close()
	for rows.Next() {
		var r audit.Record
		if err := rows.Scan(&r.Position, &r.EventID, &r.StreamID, &r.StreamVersion, &r.Type, &r.OccurredAt,
			&r.Body, &r.PrevHash, &r.Hash); err != nil {
			return dst, fmt.Errorf("read events after %d: %w", after, err)
		}
		r.OccurredAt = r.OccurredAt.UTC()
		dst = append(dst, r)
	}
	if err := rows.Err(); err != nil {
		return dst, fmt.Errorf("read events after %d: %w", after, err)
	}
	return dst, nil
}

// cursor hands out the rows of a server-side cursor, fetching them in
// batches.
type cursor[T any] struct {
	ctx   context.Context
	tx    pgx.Tx
	name  string
	batch int
	scan  func(pgx.Rows) (T, error)
	buf   []T
	i     int
	done  bool
	count int64
}

func openCursor[T any](ctx context.Context, tx pgx.Tx, name, query string, batch int, scan func(pgx.Rows) (T, error)) (*cursor[T], error) {
	if _, err := tx.Exec(ctx, "DECLARE "+name+" NO SCROLL CURSOR FOR "+query); err != nil {
		return nil, fmt.Errorf("declare cursor %s: %w", name, err)
	}
	return &cursor[T]{ctx: ctx, tx: tx, name: name, batch: batch, scan: scan}, nil
}

func (c *cursor[T]) next() (*T, bool, error) {
	if c.i == len(c.buf) {
		if c.done {
			return nil, false, nil
		}
		rows, err := c.tx.Query(c.ctx, fmt.Sprintf("FETCH %d FROM %s", c.batch, c.name))
		if err != nil {
			return nil, false, fmt.Errorf("fetch from %s: %w", c.name, err)
		}
		c.buf, c.i = c.buf[:0], 0
		for rows.Next() {
			v, err := c.scan(rows)
			if err != nil {
				rows.Close()
				return nil, false, fmt.Errorf("fetch from %s: %w", c.name, err)
			}
			c.buf = append(c.buf, v)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, false, fmt.Errorf("fetch from %s: %w", c.name, err)
		}
		if len(c.buf) < c.batch {
			c.done = true
		}
		if len(c.buf) == 0 {
			return nil, false, nil
		}
	}
	c.i++
	c.count++
	return &c.buf[c.i-1], true, nil
}

// foldAccounts merges the per-account fold of the events with the accounts
// table.
func (a *Audit) foldAccounts(ctx context.Context, tx pgx.Tx, opts VerifyOptions, progress func(audit.Progress)) (audit.CheckResult, error) {
	start := time.Now()
	var total int64
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM accounts`).Scan(&total); err != nil {
		return audit.CheckResult{}, fmt.Errorf("count accounts: %w", err)
	}
	progress(audit.Progress{Phase: "accounts", Total: total})
	folds, err := openCursor(ctx, tx, "audit_fold", sqlAuditFold, opts.BatchSize, func(r pgx.Rows) (audit.AccountFold, error) {
		var f audit.AccountFold
		err := r.Scan(&f.Account, &f.Sum, &f.Postings, &f.BadAmounts, &f.StreamEvents, &f.MaxVersion, &f.LastPosition)
		return f, err
	})
	if err != nil {
		return audit.CheckResult{}, err
	}
	rows, err := openCursor(ctx, tx, "audit_accounts", sqlAuditAccounts, opts.BatchSize, func(r pgx.Rows) (audit.AccountRow, error) {
		var a audit.AccountRow
		err := r.Scan(&a.Account, &a.Kind, &a.Currency, &a.Balance, &a.Version, &a.LastPosition)
		return a, err
	})
	if err != nil {
		return audit.CheckResult{}, err
	}
	acc := audit.NewAccounts(opts.Examples)
	nextRow := func() (*audit.AccountRow, bool, error) {
		r, ok, err := rows.next()
		if ok && rows.count%int64(opts.BatchSize) == 0 {
			progress(audit.Progress{Phase: "accounts", Done: rows.count, Total: total, Elapsed: time.Since(start)})
		}
		return r, ok, err
	}
	if err := acc.Merge(folds.next, nextRow); err != nil {
		return audit.CheckResult{}, fmt.Errorf("compare accounts: %w", err)
	}
	progress(audit.Progress{Phase: "accounts", Done: rows.count, Total: total, Elapsed: time.Since(start)})
	for _, name := range []string{"audit_fold", "audit_accounts"} {
		if _, err := tx.Exec(ctx, "CLOSE "+name); err != nil {
			return audit.CheckResult{}, fmt.Errorf("close cursor %s: %w", name, err)
		}
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

// compareReadModels rebuilds the read models from the events and compares
// them with the live tables (ReadModels.Compare, as of the live
// checkpoints, so the projectors' lag is not a difference).
func (a *Audit) compareReadModels(ctx context.Context, examples int, progress func(audit.Progress)) (audit.CheckResult, error) {
	res := audit.CheckResult{Name: audit.CheckReadModels}
	rep, err := a.rm.Compare(ctx, ReplayOptions{Examples: examples, Progress: func(p ReplayProgress) {
		progress(audit.Progress{Phase: "read_models", Done: p.Events, Total: p.Total, Elapsed: p.Elapsed})
	}})
	if err != nil {
		return res, fmt.Errorf("compare read models: %w", err)
	}
	for _, t := range rep.Tables {
		res.Rows += max(t.Live, t.Rebuilt)
		for _, ex := range t.Examples {
			if len(res.Examples) < examples {
				res.Examples = append(res.Examples, audit.Finding{Key: t.Table, Message: ex})
			}
		}
	}
	res.Failures = rep.Differences()
	res.OK = res.Failures == 0
	res.Note = fmt.Sprintf("rebuilt from %d events as of the live checkpoints", rep.Events)
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
