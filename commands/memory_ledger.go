package commands

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/pitboss/pitboss/domain"
)

// MemoryLedger is a Ledger that keeps the event store in memory: the
// commands run against it without a database, in tests and anywhere a
// throwaway ledger will do. It keeps the contract of the Postgres writer
// (commands/ledgertest runs both): each operation is decided against the
// state it declares, loaded into a fresh view, under one lock; the events
// take positions one after another in commit order, linked by the hash
// chain (domain.ChainHash over domain.EncodeBody); an error from Decide, a
// panic in it, or a change to an account it did not declare fails that
// operation alone and leaves nothing behind. It is safe for concurrent use.
//
// It commits every operation on its own (a batch of one), so it never
// answers a *domain.ConcurrencyError: nothing else writes its state. An
// operation that holds the lock runs to the end, and its caller gets its
// answer even if the caller's context ended meanwhile.
type MemoryLedger struct {
	// lock is held while an operation runs. A channel rather than a mutex
	// so a caller whose context ends while it waits gives up, and its
	// operation never runs, as with the Postgres writer's queue.
	lock     chan struct{}
	accounts map[domain.AccountID]domain.AccountState
	records  map[string]domain.TxRecord
	events   []StoredEvent
	head     []byte // hash of the last event
}

// StoredEvent is one committed event with its link in the hash chain.
type StoredEvent struct {
	Event domain.Event
	// Body is the canonical encoding the hash covers (domain.EncodeBody).
	Body []byte
	// PrevHash is the hash of the event before (domain.GenesisHash for the
	// first); Hash is domain.ChainHash(PrevHash, Body).
	PrevHash, Hash []byte
}

var (
	_ Ledger   = (*MemoryLedger)(nil)
	_ Balances = (*MemoryLedger)(nil)
)

// NewMemoryLedger returns an empty ledger.
func NewMemoryLedger() *MemoryLedger {
	return &MemoryLedger{
		lock:     make(chan struct{}, 1),
		accounts: map[domain.AccountID]domain.AccountState{},
		records:  map[string]domain.TxRecord{},
		head:     domain.GenesisHash,
	}
}

// Execute runs op and commits what it decided.
func (l *MemoryLedger) Execute(ctx context.Context, op Operation) (Outcome, error) {
	if op.Decide == nil {
		return Outcome{}, fmt.Errorf("ledger: operation without Decide: %w", domain.ErrInvalidArgument)
	}
	if err := ctx.Err(); err != nil {
		return Outcome{}, err
	}
	select {
	case l.lock <- struct{}{}:
	case <-ctx.Done():
		return Outcome{}, ctx.Err()
	}
	defer func() { <-l.lock }()

	declared := make(map[domain.AccountID]struct{}, len(op.Accounts))
	v := domain.NewView()
	for _, id := range op.Accounts {
		declared[id] = struct{}{}
		if st, ok := l.accounts[id]; ok {
			v.LoadAccount(id, st)
		}
	}
	for _, k := range op.Records {
		if rec, ok := l.records[k]; ok {
			v.LoadRecord(cloneRecord(rec)) // as fresh as one read from a database
		}
	}
	out, err := decideGuarded(v, op)
	if err != nil {
		return Outcome{}, err
	}
	e := out.Event
	if e == nil {
		return out, nil // a replay or a read: nothing to write
	}
	if err := l.checkChange(v, e, declared); err != nil {
		return Outcome{}, err
	}
	pos := int64(len(l.events)) + 1
	e.Position = pos
	body, err := domain.EncodeBody(*e)
	if err != nil {
		return Outcome{}, fmt.Errorf("encode event %s: %w", e.ID, err)
	}
	hash := domain.ChainHash(l.head, body)

	// Nothing below fails: the operation commits whole.
	maps.Copy(l.accounts, v.DirtyAccounts())
	recs, _ := v.DirtyRecords()
	for _, rec := range recs {
		if rec.EventID == e.ID && rec.Position == 0 {
			rec.Position = pos
		}
		l.records[rec.Key] = cloneRecord(rec)
	}
	if out.Record.EventID == e.ID && out.Record.Position == 0 {
		out.Record.Position = pos
	}
	l.events = append(l.events, StoredEvent{Event: cloneEvent(*e), Body: body, PrevHash: l.head, Hash: hash})
	l.head = hash
	return out, nil
}

// decideGuarded runs op.Decide, turning a panic into the operation's error.
// The view is thrown away either way, so a half-applied change is lost.
func decideGuarded(v *domain.View, op Operation) (out Outcome, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = Outcome{}, fmt.Errorf("ledger: operation panicked: %v", p)
		}
	}()
	return op.Decide(v)
}

// checkChange refuses what the Postgres writer refuses: an event on, or a
// posting to, an account the operation did not declare; a stream whose
// version moved other than by the one event; a new record under a key the
// store already holds (the operation did not declare it, so it was not
// loaded and would be overwritten blindly).
func (l *MemoryLedger) checkChange(v *domain.View, e *domain.Event, declared map[domain.AccountID]struct{}) error {
	if _, ok := declared[e.StreamID]; !ok {
		return fmt.Errorf("ledger: event %s on stream %s the operation did not declare: %w",
			e.Type, e.StreamID, domain.ErrInvalidArgument)
	}
	for _, p := range e.Data.Postings {
		if _, ok := declared[p.Account]; !ok {
			return fmt.Errorf("ledger: event %s posts to %s the operation did not declare: %w",
				e.Type, p.Account, domain.ErrInvalidArgument)
		}
	}
	for id, st := range v.DirtyAccounts() {
		if _, ok := declared[id]; !ok {
			return fmt.Errorf("ledger: account %s changed without being declared: %w", id, domain.ErrInvalidArgument)
		}
		want := l.accounts[id].Version
		if id == e.StreamID {
			want++
		}
		if st.Version != want {
			return fmt.Errorf("ledger: account %s at version %d, expected %d: an operation applied a change it did not return: %w",
				id, st.Version, want, domain.ErrInvalidArgument)
		}
	}
	recs, isNew := v.DirtyRecords()
	for i, rec := range recs {
		if _, exists := l.records[rec.Key]; isNew[i] && exists {
			return fmt.Errorf("ledger: record %s already exists but was not declared: %w", rec.Key, domain.ErrInvalidArgument)
		}
	}
	return nil
}

// Account returns the committed state of id; an account never written is
// empty. It is the Balances port of this ledger.
func (l *MemoryLedger) Account(ctx context.Context, id domain.AccountID) (domain.AccountState, error) {
	select {
	case l.lock <- struct{}{}:
	case <-ctx.Done():
		return domain.AccountState{}, ctx.Err()
	}
	defer func() { <-l.lock }()
	return l.accounts[id], nil
}

// TxRecord returns the committed idempotency record under key (the
// wallet core's TxRecords port of this ledger).
func (l *MemoryLedger) TxRecord(ctx context.Context, key string) (domain.TxRecord, bool, error) {
	select {
	case l.lock <- struct{}{}:
	case <-ctx.Done():
		return domain.TxRecord{}, false, ctx.Err()
	}
	defer func() { <-l.lock }()
	r, ok := l.records[key]
	return r, ok, nil
}

// Events returns a copy of every committed event in position order.
func (l *MemoryLedger) Events() []StoredEvent {
	l.lock <- struct{}{}
	defer func() { <-l.lock }()
	out := make([]StoredEvent, len(l.events))
	for i, s := range l.events {
		out[i] = StoredEvent{Event: cloneEvent(s.Event), Body: slices.Clone(s.Body),
			PrevHash: slices.Clone(s.PrevHash), Hash: slices.Clone(s.Hash)}
	}
	return out
}

// cloneEvent copies the postings, so a caller holding the outcome's event
// cannot change the stored one.
func cloneEvent(e domain.Event) domain.Event {
	e.Data.Postings = slices.Clone(e.Data.Postings)
	return e
}

// cloneRecord copies the request map, so neither a decision nor a caller
// shares it with the stored record.
func cloneRecord(r domain.TxRecord) domain.TxRecord {
	r.Request = maps.Clone(r.Request)
	return r
}
