package eventstore

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pitboss/pitboss/domain"
)

// Two batches in flight.
//
// A batch the cache decides whole — every account held, nothing deferred
// to the store, at least one event — is sent on its own connection by a
// goroutine of its own, and the writer goes on at once: it puts what the
// batch writes into the cache as if it had committed (remember), and
// collects and decides the next batch from that. The next one is sent
// while the first commits; its transaction waits for the ledger lock on
// the server, behind the first, so when the first commits the second
// starts at once, without a round trip of the writer's in between.
//
// Nothing about correctness rests on the first batch committing:
//
//   - the second checks under the lock that the chain head is the first
//     one's last event (ledger_expect_head), so it commits only on top of
//     the first, and positions, the hash chain and commit order = position
//     order hold as for any batch;
//   - a caller is answered only when its own batch has committed;
//   - if the first fails, the cache is emptied, the second is let end
//     first (its head check fails, unless the first did commit after all
//     and only its answer was lost), and each is decided again from the
//     store, oldest first — exactly the path of a refused batch.
//
// A batch the cache cannot decide whole (a cold account, a deferred
// operation, replays and rejections only, which check the head outside a
// transaction) waits for the batches in flight to land and runs as before
// (runBatch). InFlight 1 turns this off.

// flight is a batch sent and not yet landed.
type flight struct {
	b      *batch
	locked chan struct{} // closed when the write holds the ledger lock, or has ended
	ctx    context.Context
	cancel context.CancelFunc
	done   chan error // the write's end; buffered, read once
	err    error
	over   bool // the write has ended and err is its result
}

// ended records the write's result, read from done.
func (f *flight) ended(err error) { f.err, f.over = err, true }

// wait returns the write's result, waiting for it if need be.
func (f *flight) wait() error {
	if !f.over {
		f.ended(<-f.done)
	}
	return f.err
}

// free returns a batch that is not in flight. The writer collects only
// with at most one batch in flight (launch lands the oldest as soon as
// InFlight are), so one of the two is always free.
func (l *Ledger) free() *batch {
	if len(l.flights) > 0 && l.flights[0].b == &l.bs[0] {
		return &l.bs[1]
	}
	return &l.bs[0]
}

// cacheDecision is a batch decided from the cache (settle) and not sent.
type cacheDecision struct {
	v    *domain.View
	left bool
}

// launch sends b in flight if the cache decides it whole, and reports
// whether it did. If not, d is the decision it made from the cache, for
// runBatch to go on from, or nil with b left as reset. On success cancel
// is the flight's to call when it lands.
func (l *Ledger) launch(ctx context.Context, cancel context.CancelFunc, b *batch) (launched bool, d *cacheDecision) {
	if l.cfg.InFlight < 2 || !b.fromCache(&l.cache) {
		return false, nil
	}
	undo := func() (bool, *cacheDecision) {
		b.resetDecisions()
		return false, nil
	}
	v, left := l.settle(b)
	if !left || len(b.events) == 0 || slices.Contains(b.deferred, true) {
		return false, &cacheDecision{v: v, left: left}
	}
	// An error here is decided again on the path that reports it.
	if b.checkView(v) != nil || b.chain() != nil {
		return undo()
	}
	conn, err := l.connection(ctx, b.slot)
	if err != nil {
		return undo()
	}
	w, err := l.prepareWrite(b, v, true)
	if err != nil {
		return undo()
	}
	f := &flight{b: b, ctx: ctx, cancel: cancel, done: make(chan error, 1), locked: make(chan struct{})}
	var before <-chan struct{} // the lock of the flight before it
	if len(l.flights) > 0 {
		before = l.flights[len(l.flights)-1].locked
		l.stats.pipelined.Add(1)
	}
	go func() {
		if before != nil {
			<-before // so the lock is granted in the batches' order
		}
		f.done <- w.sendLocked(ctx, conn, sync.OnceFunc(func() { close(f.locked) }))
	}()
	b.remember(&l.cache) // as if it commits: the next batch is decided on it
	l.flights = append(l.flights, f)
	for len(l.flights) >= l.cfg.InFlight {
		l.land()
	}
	return true, nil
}

// land ends the oldest flight. Committed, its callers are answered. Failed,
// the cache is emptied, its transaction ended, and every flight after it —
// each decided on its writes — is let end; then, if the server refused the write (the
// transaction failed whole, nothing applied), it is decided again from the
// store, as a refused batch of runBatch is; otherwise its callers get the
// error.
func (l *Ledger) land() {
	f := l.flights[0]
	err := f.wait()
	l.flights = append(l.flights[:0], l.flights[1:]...)
	b := f.b
	defer f.cancel()
	if err == nil {
		l.release(f.ctx, b.slot)
		b.markDone()
		l.stats.fast.Add(1)
		l.conclude(b, nil)
		return
	}
	l.cache.invalidate()
	b.written = 0
	conn := l.conns[b.slot].conn
	refused := errors.As(err, new(*pgconn.PgError)) && conn != nil && !conn.IsClosed()
	// Its transaction ends first (if the failure left it open, it holds
	// the lock the flights after it wait for).
	l.release(f.ctx, b.slot)
	for _, g := range l.flights {
		g.wait()
	}
	if !refused {
		l.conclude(b, err)
		return
	}
	l.log.Debug("ledger batch in flight was refused; deciding it from the store", "err", err)
	l.stats.refused.Add(1)
	b.resetDecisions()
	l.conclude(b, l.runBatch(f.ctx, b, nil))
}

// drain lands every flight.
func (l *Ledger) drain() {
	for len(l.flights) > 0 {
		l.land()
	}
}
