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
// Amounts are domain.Money: the API formats them as decimal text at its
// edge. Both carry the call's currency.
type Result struct {
	EventID      string // our id: the id of the event that recorded the call
	ExternalTxID string // the caller's id of the call: its idempotency key
	Kind         domain.TxKind
	Account      domain.AccountID
	// Amount is what the call moved: a rollback's is the amount it undid,
	// a launch's is zero, an adjustment's is signed.
	Amount       domain.Money
	BalanceAfter domain.Money // of the wallet the call booked on
	Position     int64
	Replayed     bool
	OccurredAt   time.Time
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
		return resultOf(out, request)
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

// resultOf reads the answer of a call out of its outcome. The record keeps
// the balance after the call as decimal text (it is stored as JSON in that
// form), and the amount is the event's, or on a replay the request's; both
// were formatted from a domain.Money of the record's currency, so parsing
// them back is exact. A replayed rollback or launch has no amount in its
// request: the record holds it in minor units.
func resultOf(out Outcome, request map[string]string) (Result, error) {
	r := out.Record
	cur, err := domain.ParseCurrency(r.Currency)
	if err != nil {
		return Result{}, fmt.Errorf("answer of %s: %w", r.Key, err)
	}
	res := Result{
		EventID: r.EventID, ExternalTxID: request["transaction_id"], Kind: r.Kind, Account: r.Account,
		Amount: domain.FromMinor(r.Amount, cur), Position: r.Position, Replayed: out.Replayed, OccurredAt: r.CreatedAt,
	}
	amount := request["amount"]
	if out.Event != nil {
		amount = out.Event.Data.Amount
	}
	if amount != "" {
		if res.Amount, err = domain.ParseMoney(amount, cur); err != nil {
			return Result{}, fmt.Errorf("amount of %s: %w", r.Key, err)
		}
	}
	if res.BalanceAfter, err = domain.ParseMoney(r.BalanceAfter, cur); err != nil {
		return Result{}, fmt.Errorf("balance after %s: %w", r.Key, err)
	}
	return res, nil
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
