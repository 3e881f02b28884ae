// Package commands holds the write-side use cases of the ledger. Each
// handler turns a request into a domain decision and hands it to the Ledger
// port, which runs it atomically (and possibly batched) in the event store.
package commands

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/pitboss/pitboss/domain"
)

// Ledger runs operations against the event store. An implementation loads
// the accounts and records an operation names, calls its Decide with them
// while it holds the ledger's write lock, appends the events Decide applied,
// and persists the changed state, all in one transaction that may be shared
// with other operations (group commit). A rejection returned by Decide fails
// only that operation; a failed commit fails every operation in it.
type Ledger interface {
	Execute(ctx context.Context, op Operation) (Outcome, error)
}

// Operation is one command ready for the ledger.
type Operation struct {
	Accounts []domain.AccountID
	Records  []string
	// Decide runs with the loaded state. It must leave v unchanged when it
	// returns an error (domain.View.Apply is all-or-nothing).
	Decide func(v *domain.View) (Outcome, error)
}

// Outcome is what an operation did.
type Outcome struct {
	// Event is the appended event; nil when the call was a replay.
	Event *domain.Event
	// Record is the idempotency record of the call: new, or the original on
	// a replay. Its Position is set by the ledger.
	Record   domain.TxRecord
	Replayed bool
}

// Clock tells the time.
type Clock interface{ Now() time.Time }

// IDs makes new unique ids (event ids).
type IDs interface{ NewID() string }

// Result is what a money command answers, the same on every retry.
type Result struct {
	TransactionID string // our id: the id of the event that recorded it
	ExternalID    string
	Kind          domain.TxKind
	Account       domain.AccountID
	Currency      string
	Amount        string // decimal text
	BalanceAfter  string // decimal text
	Position      int64
	Replayed      bool
	OccurredAt    time.Time
}

// MaxConcurrencyRetries bounds how often a command is retried after another
// writer took the stream version it expected.
const MaxConcurrencyRetries = 5

// Handler runs every money command. It is safe for concurrent use.
type Handler struct {
	ledger Ledger
	clock  Clock
	ids    IDs
}

// NewHandler returns a handler over ledger.
func NewHandler(ledger Ledger, clock Clock, ids IDs) *Handler {
	return &Handler{ledger: ledger, clock: clock, ids: ids}
}

type metaKey struct{}

// WithMeta returns ctx carrying correlation metadata for the events the
// commands record.
func WithMeta(ctx context.Context, m domain.Metadata) context.Context {
	return context.WithValue(ctx, metaKey{}, m)
}

// MetaFrom returns the metadata carried by ctx.
func MetaFrom(ctx context.Context) domain.Metadata {
	m, _ := ctx.Value(metaKey{}).(domain.Metadata)
	return m
}

// decideFunc makes the domain decision of one command.
type decideFunc func(r domain.Reader, env domain.Env) (domain.Change, error)

// run executes one idempotent command. key is the command's idempotency
// key; request is its fingerprint (every field that must match on a retry).
func (h *Handler) run(ctx context.Context, key string, request map[string]string,
	accounts []domain.AccountID, refs []string, decide decideFunc) (Result, error) {
	meta := MetaFrom(ctx)
	op := Operation{
		Accounts: accounts,
		Records:  append([]string{key}, refs...),
		Decide: func(v *domain.View) (Outcome, error) {
			if rec, ok := v.Record(key); ok && rec.Kind != domain.TxTombstone {
				if err := sameRequest(key, rec.Request, request); err != nil {
					return Outcome{}, err
				}
				return Outcome{Record: rec, Replayed: true}, nil
			}
			env := domain.Env{Now: h.clock.Now(), EventID: h.ids.NewID(), Meta: meta}
			ch, err := decide(v, env)
			if err != nil {
				return Outcome{}, err
			}
			ch.Records[0].Request = request
			ch.Records[0].BalanceAfter = ch.Event.Data.BalanceAfter
			ch.Records[0].CreatedAt = env.Now.UTC()
			e, err := v.Apply(ch)
			if err != nil {
				return Outcome{}, err
			}
			return Outcome{Event: &e, Record: ch.Records[0]}, nil
		},
	}
	var err error
	widened := 0
	for attempt := range MaxConcurrencyRetries {
		var out Outcome
		out, err = h.ledger.Execute(ctx, op)
		if more := (*needRecords)(nil); errors.As(err, &more) && widened < maxWidenings {
			widened++
			// The decision found it needs state it could not name before
			// reading (the round of the transaction it rolls back).
			op.Records = append(op.Records, more.keys...)
			continue
		}
		if ce := (*domain.ConcurrencyError)(nil); errors.As(err, &ce) {
			if werr := backoff(ctx, attempt); werr != nil {
				return Result{}, werr
			}
			continue
		}
		if err != nil {
			return Result{}, err
		}
		return resultOf(out, request), nil
	}
	return Result{}, fmt.Errorf("after %d attempts: %w", MaxConcurrencyRetries, err)
}

// needRecords is returned by a decision that must see more records than
// its operation named; run executes the operation again with them loaded.
type needRecords struct{ keys []string }

func (e *needRecords) Error() string { return fmt.Sprintf("decision needs records %v", e.keys) }

// maxWidenings bounds how often an operation may ask for more records.
const maxWidenings = 2

func backoff(ctx context.Context, attempt int) error {
	t := time.NewTimer(time.Duration(1<<attempt) * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func resultOf(out Outcome, request map[string]string) Result {
	r := out.Record
	res := Result{
		TransactionID: r.EventID, Kind: r.Kind, Account: r.Account, Currency: r.Currency,
		Amount: request["amount"], BalanceAfter: r.BalanceAfter, Position: r.Position,
		Replayed: out.Replayed, ExternalID: request["transaction_id"], OccurredAt: r.CreatedAt,
	}
	if cur, err := domain.ParseCurrency(r.Currency); err == nil && res.Amount == "" {
		res.Amount = domain.FromMinor(r.Amount, cur).String()
	}
	if out.Event != nil {
		res.Amount = out.Event.Data.Amount
	}
	return res
}

// sameRequest compares a retry with the original request field by field, in
// a stable order, and names the first field that differs.
func sameRequest(key string, original, given map[string]string) error {
	fields := slices.Sorted(maps.Keys(given))
	for k := range original {
		if _, ok := given[k]; !ok {
			fields = append(fields, k)
		}
	}
	if k, ok := original["kind"]; ok && k != given["kind"] {
		return &domain.IdempotencyConflictError{Key: key, Field: "kind", Original: k, Given: given["kind"]}
	}
	for _, f := range fields {
		if original[f] != given[f] {
			return &domain.IdempotencyConflictError{Key: key, Field: f, Original: original[f], Given: given[f]}
		}
	}
	return nil
}
