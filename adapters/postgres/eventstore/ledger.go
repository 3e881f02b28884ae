// Package eventstore is the Postgres event store: the group-commit ledger
// writer (Ledger), the reader of committed account state and of the chain
// head (Accounts), and a generator of valid ledgers for benchmarks and
// rebuild tests (GenerateLedger, and SeedEvents with its own traffic).
package eventstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
)

// Ledger is the event store's write side: a single writer goroutine per
// process that runs queued operations in batches (group commit). Each batch
// is one transaction that holds the ledger's advisory lock, loads the state
// its operations name, decides them in queue order, appends the events with
// their positions and hash chain, persists the changed state and commits
// once. Several processes may each run a Ledger on the same database: the
// lock makes their batches take turns.
//
// The writer runs its batches on connections of its own, opened with the
// pool's settings but outside the pool: every batch of the process goes
// through this one goroutine, so a wait for a pooled connection (behind
// the API's lookups and the projectors, in a process running every role)
// would stall all writes at once. Measured with `make bench`: at 64
// concurrent wallet calls the wait for a connection was the largest part
// of a batch (8 to 30 ms of 20 to 50 ms), ahead of the commit.
//
// Up to InFlight (two) batches are in flight at once, each on its own
// connection: the next batch is decided from the cache, as if the one in
// flight had committed, and sent while it commits (inflight.go).
type Ledger struct {
	pool    *pgxpool.Pool
	cfg     LedgerConfig
	log     *slog.Logger
	queue   chan *request
	closed  chan struct{}
	running atomic.Bool
	// bs are the writer's two batches, reused: one may be in flight while
	// the other is collected and decided. Batch i runs on conns[i].
	bs      [2]batch
	flights []*flight  // batches sent and not yet landed, oldest first
	lastOps int        // operations in the last batch sent
	cache   stateCache // what the writer knows the ledger holds; only Run's goroutine touches it
	stats   struct{ fast, store, refused, pipelined atomic.Int64 }

	// conns are the writer's own connections (nil until first used, and
	// after a batch that left one unusable); only Run's goroutine touches
	// them, and a flight's goroutine its own while it is in flight.
	conns [2]writerConn
}

type writerConn struct {
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
		bs:     [2]batch{newBatch(0), newBatch(1)},
		cache:  newStateCache(cfg.CacheSize),
	}, nil
}

// LedgerStats counts the batches by how they were decided: from the
// writer's cache in one round trip (Fast), from the store (Store), and
// those decided from the cache whose write the server refused — the head
// had moved, or a record the cache lacked existed, or the batch in flight
// before it failed — and that were decided again from the store (Refused,
// also counted in Store). Pipelined counts the batches sent while another
// was still in flight (also counted in Fast or Refused).
type LedgerStats struct {
	Fast, Store, Refused, Pipelined int64
}

// Stats returns the counts since the ledger was made.
func (l *Ledger) Stats() LedgerStats {
	return LedgerStats{Fast: l.stats.fast.Load(), Store: l.stats.store.Load(), Refused: l.stats.refused.Load(),
		Pipelined: l.stats.pipelined.Load()}
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
// batches in flight, refuses what is still queued with ErrLedgerClosed and
// returns nil. It may be called once.
func (l *Ledger) Run(ctx context.Context) error {
	if !l.running.CompareAndSwap(false, true) {
		return errors.New("ledger: Run called more than once")
	}
	defer close(l.closed)
	defer l.dropConns()
	l.log.Info("ledger writer started", "max_batch", l.cfg.MaxBatch, "linger", l.cfg.Linger, "in_flight", l.cfg.InFlight)
	defer l.log.Info("ledger writer stopped")
	for {
		// b is the batch being collected. While another is in flight it
		// gathers what arrives, and is sent once it holds as many
		// operations as the batch before it (gathered) or when the one in
		// flight lands, whichever is first.
		b := l.free()
		var landed <-chan error // the oldest flight's end, if one is in flight
		if len(l.flights) > 0 {
			if l.flights[0].over { // its end was read while an older one landed
				l.landThenRun(ctx, b)
				continue
			}
			landed = l.flights[0].done
		}
		select {
		case <-ctx.Done():
			l.drain()
			if len(b.reqs) > 0 { // taken, so run: their callers are waiting
				l.process(ctx, b)
				l.drain()
			}
			l.refuseQueued()
			return nil
		case err := <-landed:
			l.flights[0].ended(err)
			l.landThenRun(ctx, b)
		case r := <-l.queue:
			if len(l.flights) == 0 {
				l.collect(ctx, b, r)
				l.process(ctx, b)
				continue
			}
			b.take(r)
			l.fill(b)
			if len(b.reqs) >= l.gathered() {
				l.process(ctx, b)
			}
		}
	}
}

// landThenRun lands the oldest flight, then runs b if it gathered
// operations meanwhile (with whatever else is waiting).
func (l *Ledger) landThenRun(ctx context.Context, b *batch) {
	l.land()
	if len(b.reqs) > 0 {
		l.fill(b)
		l.process(ctx, b)
	}
}

// gathered is how many operations a batch gathered while another is in
// flight must hold to be sent before that one lands: as many as the last
// batch sent. Batches keep the size the load gives them — sent at once,
// the second would carry only the few operations that arrived since the
// first was sent, and more, smaller commits cost the database and the
// relay more per operation.
func (l *Ledger) gathered() int { return max(1, min(l.lastOps, l.cfg.MaxBatch)) }

// fill takes whatever else is waiting into b, up to MaxBatch, without
// waiting.
func (l *Ledger) fill(b *batch) {
	for len(b.reqs) < l.cfg.MaxBatch {
		select {
		case r := <-l.queue:
			b.take(r)
		default:
			return
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

// collect adds to b.reqs first and whatever else is waiting, up to
// MaxBatch, lingering for more when configured. Requests whose callers have
// gone are dropped here: they never run.
func (l *Ledger) collect(ctx context.Context, b *batch, first *request) {
	b.take(first)
	l.fill(b)
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

// process runs the collected batch: sent in flight when the cache decides
// it whole (launch), otherwise, once the batches in flight have landed,
// run here and answered.
func (l *Ledger) process(runCtx context.Context, b *batch) {
	if len(b.reqs) == 0 {
		return
	}
	// The batch is not cut short by shutdown: callers are waiting for it.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(runCtx), l.cfg.BatchTimeout)
	b.reset()
	b.start = time.Now()
	l.lastOps = len(b.reqs)
	launched, d := l.launch(ctx, cancel, b)
	if launched {
		return
	}
	defer cancel()
	if len(l.flights) > 0 {
		// Decided on batches still in flight: once they have landed, the
		// cache may say otherwise (one failed), so decide it again.
		l.drain()
		if d != nil {
			b.resetDecisions()
			d = nil
		}
	}
	l.conclude(b, l.runBatch(ctx, b, d))
}

// conclude reports the batch to the observer and answers every caller in
// it; err fails those not answered already.
func (l *Ledger) conclude(b *batch, err error) {
	if l.cfg.Observer != nil {
		l.cfg.Observer.ObserveLedgerBatch(len(b.reqs), b.written, time.Since(b.start), err)
	}
	if err != nil {
		err = fmt.Errorf("ledger batch of %d operations: %w", len(b.reqs), err)
		if ce := (*domain.ConcurrencyError)(nil); errors.As(err, &ce) {
			l.log.Debug("ledger batch conflicted", "err", err)
		} else {
			l.log.Warn("ledger batch failed", "err", err)
		}
		for i := range b.answers {
			if !b.poisoned[i] && !b.done[i] {
				b.answers[i] = answer{err: err}
			}
		}
	} else {
		l.log.Debug("ledger batch committed", "operations", len(b.reqs), "events", b.written,
			"took", time.Since(b.start))
	}
	for i := range b.reqs {
		b.answer(i)
	}
	b.reqs = b.reqs[:0]
}

// connection returns the writer's connection for slot, opening it if need
// be. One that sat idle a while is pinged first, and replaced if it is gone.
func (l *Ledger) connection(ctx context.Context, slot int) (*pgx.Conn, error) {
	c := &l.conns[slot]
	if c.conn != nil && !c.conn.IsClosed() && time.Since(c.lastUsed) > idlePing {
		if err := c.conn.Ping(ctx); err != nil {
			l.log.Info("ledger connection lost while idle; reconnecting", "err", err)
			l.dropConn(slot)
		}
	}
	if c.conn != nil && !c.conn.IsClosed() {
		return c.conn, nil
	}
	l.dropConn(slot)
	cfg := l.pool.Config().ConnConfig.Copy()
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams[postgres.PlanCacheModeParam] = postgres.GenericPlans
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect the ledger writer: %w", err)
	}
	c.conn = conn
	return conn, nil
}

// release ends whatever a batch left open on slot's connection: a
// transaction a failed batch left (rolled back), or the connection itself
// when it cannot be brought back to idle (the next batch opens another).
func (l *Ledger) release(ctx context.Context, slot int) {
	conn := l.conns[slot].conn
	if conn == nil {
		return
	}
	if conn.PgConn().TxStatus() != 'I' {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		_, _ = conn.Exec(rctx, "ROLLBACK")
		cancel()
	}
	if conn.IsClosed() || conn.PgConn().TxStatus() != 'I' {
		l.dropConn(slot)
		return
	}
	l.conns[slot].lastUsed = time.Now()
}

func (l *Ledger) dropConn(slot int) {
	c := &l.conns[slot]
	if c.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = c.conn.Close(ctx)
	c.conn = nil
}

func (l *Ledger) dropConns() {
	for slot := range l.conns {
		l.dropConn(slot)
	}
}
