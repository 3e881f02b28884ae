package eventstore

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pitboss/pitboss/adapters/postgres"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
)

// batch is the writer's state for one batch. Its maps and slices are reused
// so a steady load allocates little beyond the events themselves.
type batch struct {
	slot     int       // which of the writer's connections the batch runs on
	start    time.Time // when it was collected
	reqs     []*request
	answers  []answer
	poisoned []bool // the operation broke the ledger's contract; it was excluded
	deferred []bool // decided from the cache on a record it lacked: left to the store
	done     []bool // answered by a part of the batch already committed
	written  int    // events committed by the batch's parts so far

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

	missed map[string]struct{} // records the cache did not hold (fast path)
	dirty  map[domain.AccountID]domain.AccountState
	recs   []rawRecord // the records written, with their positions, as JSON
}

func newBatch(slot int) batch {
	return batch{
		slot:       slot,
		accountSet: map[domain.AccountID]struct{}{}, recordSet: map[string]struct{}{},
		loadedAccounts: map[domain.AccountID]domain.AccountState{}, streamCount: map[domain.AccountID]int64{},
		eventPos: map[string]int64{}, lastPos: map[domain.AccountID]int64{},
		missed: map[string]struct{}{},
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
	b.deferred = slices.Grow(b.deferred[:0], len(b.reqs))[:len(b.reqs)] // cleared by resetDecisions
	b.done = slices.Grow(b.done[:0], len(b.reqs))[:len(b.reqs)]
	clear(b.done)
	b.written = 0
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
	b.resetDecisions()
}

// resetDecisions forgets the state loaded and everything decided from it
// (the deferrals too), keeping the requests, what they declared, the
// operations excluded and those answered.
func (b *batch) resetDecisions() {
	clear(b.deferred)
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
	clear(b.missed)
	b.dirty = nil
	clear(b.recs)
	b.recs = b.recs[:0]
}

// fromCache loads the batch's state from the cache: false, with nothing
// loaded, when the cache is not valid or lacks one of its accounts.
// Records it lacks are noted in b.missed and taken to be absent; an
// operation decided on such a record stands only if the batch creates it
// (unsettled), and the INSERT of a new record fails if it existed after
// all.
func (b *batch) fromCache(c *stateCache) bool {
	if !c.valid {
		return false
	}
	for _, id := range b.accountIDs {
		st, ok := c.accounts.get(domain.AccountID(id))
		if !ok {
			clear(b.loadedAccounts)
			return false
		}
		b.loadedAccounts[domain.AccountID(id)] = st
	}
	for _, k := range b.recordKeys {
		if raw, ok := c.records.get(k); ok {
			var rec domain.TxRecord
			if err := domain.DecodeTxRecord(raw, &rec); err != nil {
				// Never: the cache holds what the writer encoded or loaded.
				c.invalidate()
				b.resetDecisions()
				return false
			}
			rec.Key = k
			b.loadedRecords = append(b.loadedRecords, rec)
		} else {
			b.missed[k] = struct{}{}
		}
	}
	b.headPosition, b.headHash = c.head, c.headHash
	return true
}

// settle defers, until none is left, every operation decided on a record
// the cache lacked and the batch does not create: its decision may rest on
// an absence that is not true. Deferring one that appended an event
// changes what the others saw, so they are decided again without it. It
// reports whether anything is left to write or answer from the cache.
func (l *Ledger) settle(b *batch) (*domain.View, bool) {
	v := l.decideAll(b)
	for len(b.missed) > 0 {
		again, left := false, false
		for i, r := range b.reqs {
			if b.skipped(i) {
				continue
			}
			if b.readMissed(v, r.op.Records) {
				b.deferred[i] = true
				again = again || b.answers[i].out.Event != nil
				continue
			}
			left = true
		}
		if !left {
			return v, false
		}
		if !again {
			break
		}
		v = l.decideAll(b)
	}
	return v, true
}

// readMissed reports whether keys name a record the cache lacked that the
// batch did not create.
func (b *batch) readMissed(v *domain.View, keys []string) bool {
	for _, k := range keys {
		if _, missed := b.missed[k]; !missed {
			continue
		}
		if !v.Created(k) {
			return true
		}
	}
	return false
}

// answer sends operation i its answer, once.
func (b *batch) answer(i int) {
	if r := b.reqs[i]; r != nil {
		r.done <- b.answers[i]
		b.reqs[i] = nil
	}
}

// skipped reports whether operation i is not decided in this part of the
// batch: excluded, deferred to the store, or answered already.
func (b *batch) skipped(i int) bool { return b.poisoned[i] || b.deferred[i] || b.done[i] }

// learn puts what load read under the lock into the cache, valid at the
// head it read: every declared account (an absent one as the empty state
// it is) and every record found.
func (b *batch) learn(c *stateCache) {
	c.rebase(b.headPosition, b.headHash)
	for _, id := range b.accountIDs {
		c.accounts.put(domain.AccountID(id), b.loadedAccounts[domain.AccountID(id)])
	}
	for i := range b.loadedRecords {
		// Kept as the writer writes it (Postgres answers jsonb in its own
		// spelling), which DecodeTxRecord reads fastest. A record that
		// cannot be written so (a year outside 0..9999) stays out: a miss
		// is always safe.
		if raw, err := domain.AppendTxRecordJSON(nil, &b.loadedRecords[i]); err == nil {
			c.records.put(b.loadedRecords[i].Key, raw)
		}
	}
}

// remember puts what a committed batch wrote into the cache and moves its
// head to the batch's last event.
func (b *batch) remember(c *stateCache) {
	for id, st := range b.dirty {
		c.accounts.put(id, st)
	}
	for _, r := range b.recs {
		c.records.put(r.key, r.raw)
	}
	last := b.rows.rows[len(b.rows.rows)-1]
	c.advance(last.position, last.hash)
	b.written += len(b.rows.rows)
}

// runBatch decides and commits one batch. It fills b.answers; an error
// means nothing was applied and fails every operation that was not already
// excluded.
//
// A batch whose accounts the cache holds is decided from the cache and
// written in one round trip (fastBatch); the rest, and any batch the cache
// turns out not to settle, take the store's path (storeBatch): load under
// the lock, decide, write and commit — two round trips. d, when not nil,
// is the decision launch already made from the cache and did not send.
func (l *Ledger) runBatch(ctx context.Context, b *batch, d *cacheDecision) error {
	conn, err := l.connection(ctx, b.slot)
	if err != nil {
		return err
	}
	defer l.release(ctx, b.slot) // also ends a batch that only read
	if d != nil || b.fromCache(&l.cache) {
		settled, err := l.fastBatch(ctx, conn, b, d)
		if settled && (err != nil || !slices.Contains(b.deferred, true)) {
			return err
		}
		if err != nil {
			// The server refused the batch (the head moved, a key the cache
			// did not hold existed): nothing was written, no caller has
			// been answered; decide it again from the store.
			l.log.Debug("ledger batch decided from the cache was refused; deciding it from the store", "err", err)
			l.cache.invalidate()
			l.stats.refused.Add(1)
		}
		// What is left — the deferred operations, or all of them — is
		// decided from the store. What the cache settled and committed is
		// answered first: its callers need not wait for the store.
		for i, done := range b.done {
			if done {
				b.answer(i)
			}
		}
		b.resetDecisions()
	}
	err = l.storeBatch(ctx, conn, b)
	if err != nil {
		l.cache.invalidate()
	}
	return err
}

// fastBatch decides b from the cache. settled is false when the cache
// cannot settle it — a record the cache did not hold was read and not
// created, or the server refused the write with nothing applied — and the
// batch must be decided again from the store.
func (l *Ledger) fastBatch(ctx context.Context, conn *pgx.Conn, b *batch, d *cacheDecision) (settled bool, err error) {
	if d == nil {
		d = new(cacheDecision)
		d.v, d.left = l.settle(b)
	}
	v := d.v
	if !d.left {
		return false, nil
	}
	if len(b.events) == 0 {
		// Replays and rejections only: they stand if the head has not moved.
		pos, hash, err := scanHead(conn.QueryRow(ctx, sqlHead))
		if err != nil {
			l.cache.invalidate()
			return true, err
		}
		if !l.cache.at(pos, hash) {
			l.cache.invalidate()
			return false, nil
		}
		b.markDone()
		l.stats.fast.Add(1)
		return true, nil
	}
	if err := b.checkView(v); err != nil {
		l.cache.invalidate()
		return true, err
	}
	if err := b.chain(); err != nil {
		l.cache.invalidate()
		return true, err
	}
	if err := l.write(ctx, conn, b, v, true); err != nil {
		if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && !conn.IsClosed() {
			// The server refused a statement, so the transaction failed
			// whole (a refused COMMIT ends it too). End it and redo.
			if conn.PgConn().TxStatus() != 'I' {
				if _, rerr := conn.Exec(ctx, "ROLLBACK"); rerr != nil {
					l.cache.invalidate()
					return true, errors.Join(err, fmt.Errorf("roll back: %w", rerr))
				}
			}
			return false, err
		}
		l.cache.invalidate()
		return true, err
	}
	b.remember(&l.cache)
	b.markDone()
	l.stats.fast.Add(1)
	return true, nil
}

// markDone marks the operations this part of the batch answered.
func (b *batch) markDone() {
	for i := range b.reqs {
		if !b.skipped(i) {
			b.done[i] = true
		}
	}
}

// storeBatch is the batch decided from the store: one round trip loads its
// state under the lock, a second writes and commits.
func (l *Ledger) storeBatch(ctx context.Context, conn *pgx.Conn, b *batch) error {
	if err := l.load(ctx, conn, b); err != nil {
		return err
	}
	b.learn(&l.cache)
	v := l.decideAll(b)
	l.stats.store.Add(1)
	if len(b.events) == 0 {
		return nil // replays and rejections only: nothing to write
	}
	if err := b.checkView(v); err != nil {
		return err
	}
	if err := b.chain(); err != nil {
		return err
	}
	if err := l.write(ctx, conn, b, v, false); err != nil {
		return err
	}
	b.remember(&l.cache)
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
			if b.skipped(i) {
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
