package eventstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pitboss/pitboss/domain"
)

// write appends the batch's events, writes the changed accounts and
// records, notifies the relay and commits, in one round trip. fast is the
// batch decided from the cache: the round trip then also begins the
// transaction, takes the lock and checks that the chain head is the one
// the cache was valid at (ledger_expect_head); otherwise load did that.
func (l *Ledger) write(ctx context.Context, conn *pgx.Conn, b *batch, v *domain.View, fast bool) error {
	w, err := l.prepareWrite(b, v, fast)
	if err != nil {
		return err
	}
	return w.send(ctx, conn)
}

// pendingWrite is a batch's write, built and not yet sent: the statements
// and the row counts each must report.
type pendingWrite struct {
	q                                      *pgx.Batch
	fast                                   bool
	events, accounts, newRecs, changedRecs int
}

// prepareWrite builds the batch's write and notes in b what it changes
// (b.dirty, b.recs), for remember once it commits — or, for a batch in
// flight, as soon as it is sent.
func (l *Ledger) prepareWrite(b *batch, v *domain.View, fast bool) (pendingWrite, error) {
	dirty := v.DirtyAccounts()
	ids := make([]string, 0, len(dirty))
	for id := range dirty {
		ids = append(ids, string(id))
	}
	slices.Sort(ids) // a stable row order, so row locks are taken in one order
	kinds := make([]string, len(ids))
	currencies := make([]string, len(ids))
	balances := make([]int64, len(ids))
	versions := make([]int64, len(ids))
	lastPos := make([]int64, len(ids))
	for i, s := range ids {
		id := domain.AccountID(s)
		st := dirty[id]
		kinds[i], currencies[i] = id.Kind().String(), id.CurrencyCode()
		balances[i], versions[i], lastPos[i] = st.Balance, st.Version, b.lastPos[id]
	}

	recs, isNew := v.DirtyRecords()
	var newRecs, changedRecs recordColumns
	written := b.recs[:0]
	for i := range recs {
		rec := &recs[i]
		if p, ok := b.eventPos[rec.EventID]; ok && rec.Position == 0 {
			rec.Position = p
		}
		raw, err := domain.AppendTxRecordJSON(nil, rec)
		if err != nil {
			return pendingWrite{}, fmt.Errorf("encode record %s: %w", rec.Key, err)
		}
		if isNew[i] {
			newRecs.add(rec, raw)
		} else {
			changedRecs.add(rec, raw)
		}
		written = append(written, rawRecord{key: rec.Key, raw: raw})
	}

	q := &pgx.Batch{}
	if fast {
		q.Queue("BEGIN ISOLATION LEVEL READ COMMITTED")
		q.Queue("SELECT pg_advisory_xact_lock($1)", l.cfg.LockKey)
		q.Queue(sqlExpectHead, b.headPosition, b.headHash)
	}
	ev := b.rows.columns()
	q.Queue(sqlInsertEvents, ev.positions, ev.ids, ev.streams, ev.versions, ev.types, ev.occurred, ev.bodies, ev.prevs, ev.hashes)
	q.Queue(sqlUpsertAccounts, ids, kinds, currencies, balances, versions, lastPos)
	if len(newRecs.keys) > 0 {
		q.Queue(sqlInsertRecords, newRecs.keys, newRecs.kinds, newRecs.records)
	}
	if len(changedRecs.keys) > 0 {
		q.Queue(sqlUpdateRecords, changedRecs.keys, changedRecs.kinds, changedRecs.records)
	}
	q.Queue("SELECT pg_notify($1, '')", l.cfg.NotifyChannel)
	q.Queue("COMMIT")
	b.dirty, b.recs = dirty, written
	return pendingWrite{q: q, fast: fast, events: len(b.events), accounts: len(ids),
		newRecs: len(newRecs.keys), changedRecs: len(changedRecs.keys)}, nil
}

// send runs the write in one round trip on conn and reads every answer.
func (w pendingWrite) send(ctx context.Context, conn *pgx.Conn) error {
	br := conn.SendBatch(ctx, w.q)
	err := readWrite(br, w.fast, w.events, w.accounts, w.newRecs, w.changedRecs)
	if cerr := br.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("commit: %w", cerr)
	}
	return err
}

// execer reads a write's answers in order: pgx.BatchResults, or a
// pipeline's (pipelineResults).
type execer interface {
	Exec() (pgconn.CommandTag, error)
}

func readWrite(br execer, fast bool, events, accounts, newRecs, changedRecs int) error {
	expect := func(what string, n int) error {
		tag, err := br.Exec()
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if tag.RowsAffected() != int64(n) {
			return fmt.Errorf("%s: %d rows written, expected %d", what, tag.RowsAffected(), n)
		}
		return nil
	}
	if fast {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("take ledger lock: %w", err)
		}
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("check chain head: %w", err)
		}
	}
	if err := expect("append events", events); err != nil {
		return asConcurrencyError(err)
	}
	if err := expect("save accounts", accounts); err != nil {
		return err
	}
	if newRecs > 0 {
		if err := expect("insert records", newRecs); err != nil {
			return err
		}
	}
	if changedRecs > 0 {
		// The statement checks its own count (ledger_expect_rows).
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("update records: %w", err)
		}
	}
	if _, err := br.Exec(); err != nil {
		return fmt.Errorf("notify: %w", err)
	}
	tag, err := br.Exec()
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	// COMMIT of a failed transaction answers ROLLBACK without an error.
	if tag.String() != "COMMIT" {
		return fmt.Errorf("commit: transaction ended with %s", tag.String())
	}
	return nil
}

type recordColumns struct{ keys, kinds, records []string }

// rawRecord is a record written, as JSON, for the cache.
type rawRecord struct {
	key string
	raw []byte
}

func (c *recordColumns) add(rec *domain.TxRecord, raw []byte) {
	c.keys = append(c.keys, rec.Key)
	c.kinds = append(c.kinds, string(rec.Kind))
	c.records = append(c.records, string(raw))
}

// asConcurrencyError turns a taken stream version into the error commands
// retry; anything else is returned as it is.
func asConcurrencyError(err error) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23505" || pgErr.ConstraintName != "events_stream_version_key" {
		return err
	}
	stream, version := parseStreamVersionKey(pgErr.Detail)
	return fmt.Errorf("%w: %w", &domain.ConcurrencyError{StreamID: stream, Expected: version - 1}, err)
}

// parseStreamVersionKey reads the key from a unique-violation detail such as
// "Key (stream_id, stream_version)=(player:c:p:EUR, 3) already exists.".
// Account ids cannot contain ", ", so the last one separates the values.
func parseStreamVersionKey(detail string) (string, int64) {
	_, rest, ok := strings.Cut(detail, ")=(")
	if !ok {
		return "", 0
	}
	rest, _, ok = strings.Cut(rest, ") already exists")
	if !ok {
		return "", 0
	}
	i := strings.LastIndex(rest, ", ")
	if i < 0 {
		return "", 0
	}
	v, err := strconv.ParseInt(rest[i+2:], 10, 64)
	if err != nil {
		return rest[:i], 0
	}
	return rest[:i], v
}

// eventRows are the batch's events with their positions, bodies and
// hashes, written as one INSERT over arrays (columns).
type eventRows struct {
	rows []eventRow
	cols eventCols
}

type eventRow struct {
	position         int64
	id               pgtype.UUID
	event            *domain.Event
	body, prev, hash []byte
}

// eventCols are the arrays sqlInsertEvents takes, reused across batches.
type eventCols struct {
	positions, versions []int64
	ids                 []pgtype.UUID
	streams, types      []string
	bodies              []string
	occurred            []time.Time
	prevs, hashes       [][]byte
}

func (s *eventRows) reset() {
	clear(s.rows)
	s.rows = s.rows[:0]
}

func (s *eventRows) columns() *eventCols {
	c := &s.cols
	c.positions, c.versions, c.ids = c.positions[:0], c.versions[:0], c.ids[:0]
	c.streams, c.types, c.bodies, c.occurred = c.streams[:0], c.types[:0], c.bodies[:0], c.occurred[:0]
	c.prevs, c.hashes = c.prevs[:0], c.hashes[:0]
	for i := range s.rows {
		r := &s.rows[i]
		e := r.event
		c.positions = append(c.positions, r.position)
		c.ids = append(c.ids, r.id)
		c.streams = append(c.streams, string(e.StreamID))
		c.versions = append(c.versions, e.Version)
		c.types = append(c.types, string(e.Type))
		c.occurred = append(c.occurred, e.OccurredAt)
		c.bodies = append(c.bodies, string(r.body))
		c.prevs = append(c.prevs, r.prev)
		c.hashes = append(c.hashes, r.hash)
	}
	return c
}
