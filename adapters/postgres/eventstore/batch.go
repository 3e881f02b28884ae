package eventstore

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pitboss/pitboss/adapters/postgres"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
)

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
