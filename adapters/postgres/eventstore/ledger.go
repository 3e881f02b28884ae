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
	b       batch      // the writer's scratch space, reused across batches
	cache   stateCache // what the writer knows the ledger holds; only Run's goroutine touches it
	stats   struct{ fast, store, refused atomic.Int64 }

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
		cache:  newStateCache(cfg.CacheSize),
	}, nil
}

// LedgerStats counts the batches by how they were decided: from the
// writer's cache in one round trip (Fast), from the store (Store), and
// those decided from the cache whose write the server refused — the head
// had moved, or a record the cache lacked existed — and that were decided
// again from the store (Refused, also counted in Store).
type LedgerStats struct {
	Fast, Store, Refused int64
}

// Stats returns the counts since the ledger was made.
func (l *Ledger) Stats() LedgerStats {
	return LedgerStats{Fast: l.stats.fast.Load(), Store: l.stats.store.Load(), Refused: l.stats.refused.Load()}
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
		l.cfg.Observer.ObserveLedgerBatch(len(b.reqs), b.written, time.Since(start), err)
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
			"took", time.Since(start))
	}
	for i := range b.reqs {
		b.answer(i)
	}
	b.reqs = b.reqs[:0]
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
