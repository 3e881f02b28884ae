// Package eventstore is the Postgres event store: the group-commit ledger
// writer (Ledger), the reader of committed account state and of the chain
// head (Accounts), and a generator of valid ledgers for benchmarks and
// rebuild tests (SeedEvents).
package eventstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
)

// DefaultLedgerLockKey is the advisory lock every ledger writer takes for the
// length of its batch transaction ("pitbossL" in ASCII). All processes
// writing one database must use the same key; other advisory locks (the
// relay's leader lock) must use a different one.
const DefaultLedgerLockKey int64 = 0x706974626f73734c

// Ledger configuration defaults.
const (
	DefaultLedgerMaxBatch      = 256
	DefaultLedgerNotifyChannel = "pitboss_events"
	DefaultLedgerBatchTimeout  = 10 * time.Second
)

// ErrLedgerClosed is returned by Execute once the writer has stopped.
var ErrLedgerClosed = errors.New("ledger writer stopped")

// LedgerConfig configures the group-commit writer.
type LedgerConfig struct {
	// MaxBatch bounds the operations decided and committed in one
	// transaction. Default 256.
	MaxBatch int
	// Linger is how long the writer waits for more operations after taking
	// the first one. Zero (the default) takes whatever is already waiting:
	// under load the queue fills while the previous batch commits, so
	// batches grow by themselves without adding latency when idle.
	Linger time.Duration
	// LockKey is the transaction-scoped advisory lock that serialises
	// batches of every writer on the database. Default DefaultLedgerLockKey.
	LockKey int64
	// NotifyChannel is the channel notified on every commit that appended
	// events, so the relay wakes up. Default "pitboss_events".
	NotifyChannel string
	// BatchTimeout bounds one batch transaction, lock wait included. The
	// batch in flight when Run's context ends still completes within it.
	// Default 10s.
	BatchTimeout time.Duration
	// Observer, when set, is told about every batch (metrics).
	Observer LedgerObserver
}

// LedgerObserver is told about every batch the writer ran: how many
// operations it held, how many events it committed, how long it took and
// whether it failed. It is called on the writer goroutine: keep it fast.
type LedgerObserver interface {
	ObserveLedgerBatch(operations, events int, took time.Duration, err error)
}

func (c *LedgerConfig) setDefaults() {
	if c.MaxBatch == 0 {
		c.MaxBatch = DefaultLedgerMaxBatch
	}
	if c.LockKey == 0 {
		c.LockKey = DefaultLedgerLockKey
	}
	if c.NotifyChannel == "" {
		c.NotifyChannel = DefaultLedgerNotifyChannel
	}
	if c.BatchTimeout == 0 {
		c.BatchTimeout = DefaultLedgerBatchTimeout
	}
}

// Validate reports every invalid field.
func (c LedgerConfig) Validate() error {
	var errs []error
	if c.MaxBatch < 1 || c.MaxBatch > 10_000 {
		errs = append(errs, fmt.Errorf("ledger MaxBatch %d outside 1..10000", c.MaxBatch))
	}
	if c.Linger < 0 {
		errs = append(errs, fmt.Errorf("ledger Linger %s is negative", c.Linger))
	}
	if c.NotifyChannel == "" || len(c.NotifyChannel) > 63 {
		errs = append(errs, fmt.Errorf("ledger NotifyChannel %q must be 1 to 63 bytes", c.NotifyChannel))
	}
	if c.BatchTimeout <= 0 {
		errs = append(errs, fmt.Errorf("ledger BatchTimeout %s must be positive", c.BatchTimeout))
	}
	return errors.Join(errs...)
}

// Ledger is the event store's write side: a single writer goroutine per
// process that runs queued operations in batches (group commit). Each batch
// is one transaction that holds the ledger's advisory lock, loads the state
// its operations name, decides them in queue order, appends the events with
// their positions and hash chain, persists the changed state and commits
// once. Several processes may each run a Ledger on the same database: the
// lock makes their batches take turns.
//
// The writer runs its batches on a connection of its own, opened with the
// pool's settings but outside the pool: every batch of the process goes
// through this one goroutine, so a wait for a pooled connection (behind
// the API's lookups and the projectors, in a process running every role)
// would stall all writes at once. Measured with `make bench`: at 64
// concurrent wallet calls the wait for a connection was the largest part
// of a batch (8 to 30 ms of 20 to 50 ms), ahead of the commit.
type Ledger struct {
	pool    *pgxpool.Pool
	cfg     LedgerConfig
	log     *slog.Logger
	queue   chan *request
	closed  chan struct{}
	running atomic.Bool
	b       batch // the writer's scratch space, reused across batches

	// conn is the writer's own connection (nil until the first batch, and
	// after one that left it unusable); only Run's goroutine touches it.
	conn     *pgx.Conn
	lastUsed time.Time
}

// idlePing is how long the writer's connection may sit idle before a
// batch checks it with a ping, so a connection the server or the network
// dropped meanwhile fails the ping, not a batch.
const idlePing = 30 * time.Second

var _ commands.Ledger = (*Ledger)(nil)

// NewLedger returns a ledger writing through pool. Call Run to start it.
func NewLedger(pool *pgxpool.Pool, cfg LedgerConfig, logger *slog.Logger) (*Ledger, error) {
	if pool == nil {
		return nil, errors.New("ledger: nil pool")
	}
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &Ledger{
		pool: pool, cfg: cfg, log: logger.With("component", "ledger"),
		queue:  make(chan *request, 2*cfg.MaxBatch),
		closed: make(chan struct{}),
		b:      newBatch(),
	}, nil
}

// request states: a request is taken by the writer or abandoned by its
// caller, whichever comes first.
const (
	stateWaiting int32 = iota
	stateTaken
	stateAbandoned
)

type request struct {
	op    commands.Operation
	state atomic.Int32
	done  chan answer // buffered: the writer never blocks on a gone caller
}

type answer struct {
	out commands.Outcome
	err error
}

// Execute queues op and waits for its batch to commit.
//
// Context: a caller whose ctx ends while op is still queued gets ctx.Err()
// and op is skipped — it never runs. Once the writer has taken op into a
// batch it runs to the end regardless; a caller whose ctx ends meanwhile
// gets ctx.Err() without knowing whether op was applied. That is safe
// because every money operation is idempotent: a retry with the same
// external id answers the original result.
func (l *Ledger) Execute(ctx context.Context, op commands.Operation) (commands.Outcome, error) {
	if op.Decide == nil {
		return commands.Outcome{}, fmt.Errorf("ledger: operation without Decide: %w", domain.ErrInvalidArgument)
	}
	if err := ctx.Err(); err != nil {
		return commands.Outcome{}, err
	}
	r := &request{op: op, done: make(chan answer, 1)}
	select {
	case l.queue <- r:
	case <-ctx.Done():
		return commands.Outcome{}, ctx.Err()
	case <-l.closed:
		return commands.Outcome{}, ErrLedgerClosed
	}
	select {
	case a := <-r.done:
		return a.out, a.err
	case <-ctx.Done():
		select {
		case a := <-r.done:
			return a.out, a.err
		default:
		}
		if r.state.CompareAndSwap(stateWaiting, stateAbandoned) {
			return commands.Outcome{}, ctx.Err()
		}
		return commands.Outcome{}, fmt.Errorf("ledger: operation already taken into a batch, outcome unknown: %w", ctx.Err())
	case <-l.closed:
		// Run answers everything it took before it closes, so an answer
		// that is not here now will never come.
		select {
		case a := <-r.done:
			return a.out, a.err
		default:
			return commands.Outcome{}, ErrLedgerClosed
		}
	}
}

// Run is the single writer. It runs batches until ctx ends, finishes the
// batch in flight, refuses what is still queued with ErrLedgerClosed and
// returns nil. It may be called once.
func (l *Ledger) Run(ctx context.Context) error {
	if !l.running.CompareAndSwap(false, true) {
		return errors.New("ledger: Run called more than once")
	}
	defer close(l.closed)
	defer l.dropConn()
	l.log.Info("ledger writer started", "max_batch", l.cfg.MaxBatch, "linger", l.cfg.Linger)
	defer l.log.Info("ledger writer stopped")
	for {
		select {
		case <-ctx.Done():
			l.refuseQueued()
			return nil
		case first := <-l.queue:
			l.collect(ctx, first)
			l.process(ctx)
		}
	}
}

func (l *Ledger) refuseQueued() {
	for {
		select {
		case r := <-l.queue:
			if r.state.CompareAndSwap(stateWaiting, stateTaken) {
				r.done <- answer{err: ErrLedgerClosed}
			}
		default:
			return
		}
	}
}

// collect fills l.b.reqs with first and whatever else is waiting, up to
// MaxBatch, lingering for more when configured. Requests whose callers have
// gone are dropped here: they never run.
func (l *Ledger) collect(ctx context.Context, first *request) {
	b := &l.b
	b.reqs = b.reqs[:0]
	b.take(first)
	for len(b.reqs) < l.cfg.MaxBatch {
		select {
		case r := <-l.queue:
			b.take(r)
			continue
		default:
		}
		break
	}
	if l.cfg.Linger <= 0 || len(b.reqs) >= l.cfg.MaxBatch {
		return
	}
	t := time.NewTimer(l.cfg.Linger)
	defer t.Stop()
	for len(b.reqs) < l.cfg.MaxBatch {
		select {
		case r := <-l.queue:
			b.take(r)
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// process runs the collected batch and answers every caller in it.
func (l *Ledger) process(runCtx context.Context) {
	b := &l.b
	if len(b.reqs) == 0 {
		return
	}
	// The batch is not cut short by shutdown: callers are waiting for it.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(runCtx), l.cfg.BatchTimeout)
	defer cancel()
	b.reset()
	start := time.Now()
	err := l.runBatch(ctx, b)
	if l.cfg.Observer != nil {
		l.cfg.Observer.ObserveLedgerBatch(len(b.reqs), len(b.events), time.Since(start), err)
	}
	if err != nil {
		err = fmt.Errorf("ledger batch of %d operations: %w", len(b.reqs), err)
		if ce := (*domain.ConcurrencyError)(nil); errors.As(err, &ce) {
			l.log.Debug("ledger batch conflicted", "err", err)
		} else {
			l.log.Warn("ledger batch failed", "err", err)
		}
		for i := range b.answers {
			if !b.poisoned[i] {
				b.answers[i] = answer{err: err}
			}
		}
	} else {
		l.log.Debug("ledger batch committed", "operations", len(b.reqs), "events", len(b.events),
			"took", time.Since(start))
	}
	for i, r := range b.reqs {
		r.done <- b.answers[i]
		b.reqs[i] = nil
	}
	b.reqs = b.reqs[:0]
}

// batch is the writer's state for one batch. Its maps and slices are reused
// so a steady load allocates little beyond the events themselves.
type batch struct {
	reqs     []*request
	answers  []answer
	poisoned []bool // the operation broke the ledger's contract; it was excluded

	accountSet map[domain.AccountID]struct{} // every account the batch may touch
	accountIDs []string
	recordSet  map[string]struct{}
	recordKeys []string

	loadedAccounts map[domain.AccountID]domain.AccountState // rows that exist
	loadedRecords  []domain.TxRecord
	headPosition   int64
	headHash       []byte

	events      []*domain.Event // applied, in queue order
	streamCount map[domain.AccountID]int64
	eventPos    map[string]int64
	lastPos     map[domain.AccountID]int64
	rows        eventRows
}

func newBatch() batch {
	return batch{
		accountSet: map[domain.AccountID]struct{}{}, recordSet: map[string]struct{}{},
		loadedAccounts: map[domain.AccountID]domain.AccountState{}, streamCount: map[domain.AccountID]int64{},
		eventPos: map[string]int64{}, lastPos: map[domain.AccountID]int64{},
	}
}

func (b *batch) take(r *request) {
	if r.state.CompareAndSwap(stateWaiting, stateTaken) {
		b.reqs = append(b.reqs, r)
	}
}

func (b *batch) reset() {
	b.answers = slices.Grow(b.answers[:0], len(b.reqs))[:len(b.reqs)]
	clear(b.answers)
	b.poisoned = slices.Grow(b.poisoned[:0], len(b.reqs))[:len(b.reqs)]
	clear(b.poisoned)
	clear(b.accountSet)
	clear(b.recordSet)
	b.accountIDs, b.recordKeys = b.accountIDs[:0], b.recordKeys[:0]
	for _, r := range b.reqs {
		for _, id := range r.op.Accounts {
			if _, ok := b.accountSet[id]; !ok {
				b.accountSet[id] = struct{}{}
				b.accountIDs = append(b.accountIDs, string(id))
			}
		}
		for _, k := range r.op.Records {
			if _, ok := b.recordSet[k]; !ok {
				b.recordSet[k] = struct{}{}
				b.recordKeys = append(b.recordKeys, k)
			}
		}
	}
	clear(b.loadedAccounts)
	clear(b.loadedRecords)
	b.loadedRecords = b.loadedRecords[:0]
	b.headPosition, b.headHash = 0, nil
	clear(b.events)
	b.events = b.events[:0]
	clear(b.streamCount)
	clear(b.eventPos)
	clear(b.lastPos)
	b.rows.reset()
}

const (
	sqlLoadAccounts = `SELECT account_id, balance, version FROM accounts WHERE account_id = ANY($1::text[])`
	sqlLoadRecords  = `SELECT key, record FROM tx_records WHERE key = ANY($1::text[])`
	sqlHead         = `SELECT position, hash FROM events ORDER BY position DESC LIMIT 1`

	sqlUpsertAccounts = `
INSERT INTO accounts (account_id, kind, currency, balance, version, last_position)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[])
ON CONFLICT (account_id) DO UPDATE
   SET balance = EXCLUDED.balance, version = EXCLUDED.version,
       last_position = EXCLUDED.last_position, updated_at = now()`
	// A plain INSERT: a key that already exists is a broken batch (an
	// operation that did not declare a record it wrote), never a silent pass.
	sqlInsertRecords = `
INSERT INTO tx_records (key, kind, record)
SELECT u.key, u.kind, u.record::jsonb FROM unnest($1::text[], $2::text[], $3::text[]) AS u(key, kind, record)`
	sqlUpdateRecords = `
UPDATE tx_records t SET kind = u.kind, record = u.record::jsonb, updated_at = now()
  FROM unnest($1::text[], $2::text[], $3::text[]) AS u(key, kind, record)
 WHERE t.key = u.key`
)

var eventColumns = []string{"position", "event_id", "stream_id", "stream_version", "event_type",
	"occurred_at", "body", "prev_hash", "hash"}

// runBatch is one batch transaction. It fills b.answers; an error means
// nothing was applied and fails every operation that was not already
// excluded.
func (l *Ledger) runBatch(ctx context.Context, b *batch) error {
	conn, err := l.connection(ctx)
	if err != nil {
		return err
	}
	defer func() {
		// Also ends a batch that only read. A connection the rollback
		// cannot bring back to idle is closed; the next batch opens another.
		if conn.PgConn().TxStatus() != 'I' {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			_, _ = conn.Exec(rctx, "ROLLBACK")
			cancel()
		}
		if conn.IsClosed() || conn.PgConn().TxStatus() != 'I' {
			l.dropConn()
		}
		l.lastUsed = time.Now()
	}()

	if err := l.load(ctx, conn, b); err != nil {
		return err
	}
	v := l.decideAll(b)
	if len(b.events) == 0 {
		return nil // replays and rejections only: nothing to write
	}
	if err := b.checkView(v); err != nil {
		return err
	}
	if err := b.chain(); err != nil {
		return err
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"events"}, eventColumns, &b.rows); err != nil {
		return fmt.Errorf("append %d events: %w", len(b.events), asConcurrencyError(err))
	}
	return l.persist(ctx, conn, b, v)
}

// connection returns the writer's connection, opening it if need be. One
// that sat idle a while is pinged first, and replaced if it is gone.
func (l *Ledger) connection(ctx context.Context) (*pgx.Conn, error) {
	if l.conn != nil && !l.conn.IsClosed() && time.Since(l.lastUsed) > idlePing {
		if err := l.conn.Ping(ctx); err != nil {
			l.log.Info("ledger connection lost while idle; reconnecting", "err", err)
			l.dropConn()
		}
	}
	if l.conn != nil && !l.conn.IsClosed() {
		return l.conn, nil
	}
	l.dropConn()
	cfg := l.pool.Config().ConnConfig.Copy()
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams[postgres.PlanCacheModeParam] = postgres.GenericPlans
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect the ledger writer: %w", err)
	}
	l.conn = conn
	return conn, nil
}

func (l *Ledger) dropConn() {
	if l.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = l.conn.Close(ctx)
	l.conn = nil
}

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
	err = br.QueryRow().Scan(&b.headPosition, &b.headHash)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		b.headPosition, b.headHash = 0, domain.GenesisHash
	case err != nil:
		return fmt.Errorf("read chain head: %w", err)
	}
	return nil
}

// decideAll decides every operation in queue order against one view. An
// operation that panics or touches an account it did not declare may have
// left the view in any state, so it is excluded and the decisions start over
// from the loaded state; each restart excludes one more operation, so this
// ends.
func (l *Ledger) decideAll(b *batch) *domain.View {
	for {
		v := domain.NewView()
		for id, st := range b.loadedAccounts {
			v.LoadAccount(id, st)
		}
		for _, r := range b.loadedRecords {
			v.LoadRecord(r)
		}
		clear(b.events)
		b.events = b.events[:0]
		restart := false
		for i, r := range b.reqs {
			if b.poisoned[i] {
				continue
			}
			a, broken := l.decideOne(v, r.op, b)
			b.answers[i] = a
			if broken {
				b.poisoned[i], restart = true, true
				break
			}
			if a.err == nil && a.out.Event != nil {
				b.events = append(b.events, a.out.Event)
			}
		}
		if !restart {
			return v
		}
	}
}

// decideOne runs one Decide. The answer's error is the operation's own (a
// domain rejection) unless broken is set: then the operation broke the
// ledger's contract and the view can no longer be trusted.
func (l *Ledger) decideOne(v *domain.View, op commands.Operation, b *batch) (a answer, broken bool) {
	defer func() {
		if p := recover(); p != nil {
			l.log.Error("ledger operation panicked", "panic", p, "stack", string(debug.Stack()))
			a, broken = answer{err: fmt.Errorf("ledger: operation panicked: %v", p)}, true
		}
	}()
	out, err := op.Decide(v)
	if err != nil {
		return answer{err: err}, false
	}
	if e := out.Event; e != nil {
		if _, ok := b.accountSet[e.StreamID]; !ok {
			return answer{err: fmt.Errorf("ledger: event %s on stream %s the operation did not declare: %w",
				e.Type, e.StreamID, domain.ErrInvalidArgument)}, true
		}
		for _, p := range e.Data.Postings {
			if _, ok := b.accountSet[p.Account]; !ok {
				return answer{err: fmt.Errorf("ledger: event %s posts to %s the operation did not declare: %w",
					e.Type, p.Account, domain.ErrInvalidArgument)}, true
			}
		}
		if _, ok := postgres.ParseUUID(e.ID); !ok {
			return answer{err: fmt.Errorf("ledger: event id %q is not a UUID: %w", e.ID, domain.ErrInvalidArgument)}, true
		}
	}
	return answer{out: out}, false
}

// checkView guards the one thing the view cannot tell us: that every change
// it holds came with an event we know of. A stream's version must have moved
// by exactly the number of its events in this batch.
func (b *batch) checkView(v *domain.View) error {
	for _, e := range b.events {
		b.streamCount[e.StreamID]++
	}
	for id, st := range v.DirtyAccounts() {
		if _, ok := b.accountSet[id]; !ok {
			return fmt.Errorf("account %s changed without being loaded", id)
		}
		if want := b.loadedAccounts[id].Version + b.streamCount[id]; st.Version != want {
			return fmt.Errorf("account %s at version %d, expected %d: an operation applied a change it did not return",
				id, st.Version, want)
		}
	}
	return nil
}

// chain assigns positions after the head, encodes the bodies and links the
// hashes, filling b.rows for COPY.
func (b *batch) chain() error {
	pos, prev := b.headPosition, b.headHash
	for _, e := range b.events {
		pos++
		e.Position = pos
		body, err := domain.EncodeBody(*e)
		if err != nil {
			return fmt.Errorf("encode event %s: %w", e.ID, err)
		}
		id, ok := postgres.ParseUUID(e.ID)
		if !ok {
			return fmt.Errorf("event id %q is not a UUID", e.ID)
		}
		hash := domain.ChainHash(prev, body)
		b.rows.rows = append(b.rows.rows, eventRow{position: pos, id: pgtype.UUID{Bytes: id, Valid: true}, event: e, body: body, prev: prev, hash: hash})
		prev = hash
		b.eventPos[e.ID] = pos
		b.lastPos[e.StreamID] = pos
		for _, p := range e.Data.Postings {
			b.lastPos[p.Account] = pos
		}
	}
	for i := range b.answers {
		rec := &b.answers[i].out.Record
		if p, ok := b.eventPos[rec.EventID]; ok && rec.Position == 0 && b.answers[i].err == nil {
			rec.Position = p
		}
	}
	return nil
}

// persist writes the changed accounts and records, notifies the relay and
// commits, all in one round trip.
func (l *Ledger) persist(ctx context.Context, conn *pgx.Conn, b *batch, v *domain.View) error {
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
	for i := range recs {
		rec := &recs[i]
		if p, ok := b.eventPos[rec.EventID]; ok && rec.Position == 0 {
			rec.Position = p
		}
		raw, err := json.Marshal(rec)
		if err != nil {
			return fmt.Errorf("encode record %s: %w", rec.Key, err)
		}
		if isNew[i] {
			newRecs.add(rec, raw)
		} else {
			changedRecs.add(rec, raw)
		}
	}

	q := &pgx.Batch{}
	q.Queue(sqlUpsertAccounts, ids, kinds, currencies, balances, versions, lastPos)
	if len(newRecs.keys) > 0 {
		q.Queue(sqlInsertRecords, newRecs.keys, newRecs.kinds, newRecs.records)
	}
	if len(changedRecs.keys) > 0 {
		q.Queue(sqlUpdateRecords, changedRecs.keys, changedRecs.kinds, changedRecs.records)
	}
	q.Queue("SELECT pg_notify($1, '')", l.cfg.NotifyChannel)
	q.Queue("COMMIT")
	br := conn.SendBatch(ctx, q)
	err := readPersist(br, len(ids), len(newRecs.keys), len(changedRecs.keys))
	if cerr := br.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("commit: %w", cerr)
	}
	return err
}

func readPersist(br pgx.BatchResults, accounts, newRecs, changedRecs int) error {
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
	if err := expect("save accounts", accounts); err != nil {
		return err
	}
	if newRecs > 0 {
		if err := expect("insert records", newRecs); err != nil {
			return err
		}
	}
	if changedRecs > 0 {
		if err := expect("update records", changedRecs); err != nil {
			return err
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

// eventRows feeds COPY. Values reuses one slice: pgx encodes each row
// before it asks for the next.
type eventRows struct {
	rows []eventRow
	next int
	vals [9]any
}

type eventRow struct {
	position         int64
	id               pgtype.UUID
	event            *domain.Event
	body, prev, hash []byte
}

func (s *eventRows) reset() {
	clear(s.rows)
	s.rows, s.next = s.rows[:0], 0
}

func (s *eventRows) Next() bool {
	s.next++
	return s.next <= len(s.rows)
}

func (s *eventRows) Values() ([]any, error) {
	r := &s.rows[s.next-1]
	e := r.event
	s.vals = [9]any{r.position, r.id, string(e.StreamID), e.Version, string(e.Type), e.OccurredAt, r.body, r.prev, r.hash}
	return s.vals[:], nil
}

func (s *eventRows) Err() error { return nil }
