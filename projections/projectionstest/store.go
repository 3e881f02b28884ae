// Package projectionstest is the contract suite of the read-model stores:
// the promises of package projections that every store keeps, checked
// the same way against each (projections.Memory, which a rebuild fills,
// and the Postgres store the projector writes), in the manner of
// Watermill's pubsub/tests. A store's test wraps it in a Store and calls
// Run.
package projectionstest

import (
	"context"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/projections"
)

// Store is a read-model store as the suite drives it. The write side is
// what the projector (or a rebuild) does to a store; State reads back every
// read model, so the suite can compare a store with what the events imply
// and with itself before and after a redelivery.
type Store interface {
	// Apply applies e to projection p under the per-stream checkpoint rule
	// (projections.Checkpoint): applied, skipped as a redelivery (false,
	// nil), or refused with a *projections.GapError or an
	// *projections.InvalidEventError that leaves everything unchanged.
	Apply(ctx context.Context, p projections.Projection, e domain.Event) (applied bool, err error)
	// DeadLetter gives up on e for p, as the projector does with an event
	// it cannot apply: e's stream checkpoint moves past it, nothing else.
	DeadLetter(ctx context.Context, p projections.Name, e domain.Event) error
	// Settle moves p's watermark over every event given to the store so
	// far (the suite settles only when each has been applied or dead
	// lettered), numbering the history rows under it, and returns the
	// watermark.
	Settle(ctx context.Context, p projections.Name) (int64, error)
	// State reads every read model back.
	State(ctx context.Context) (State, error)
}

// Queries are the query ports a store may answer too; the suite's query
// tests skip a store without them.
type Queries interface {
	projections.TransactionReader
	projections.ReportReader
}

// State is the content of every read model, in one shape for every store.
// Zero watermarks, and checkpoints at version 0, are left out (a store may
// keep them as rows, which say nothing).
type State struct {
	// Rows are the history rows (game results included) by id.
	Rows     map[string]projections.Transaction
	Balances map[domain.AccountID]projections.Balance
	GGR      map[projections.GGRKey]projections.GGRDelta
	// Players are the members of each GGR group's set of players.
	Players      map[projections.GGRMember]bool
	PlayerMonths map[projections.PlayerMonth]int64
	Rounds       map[projections.RoundKey]projections.RoundStart
	Checkpoints  map[projections.StreamKey]projections.StreamCheckpoint
	Positions    map[projections.Name]int64
	// Order is each client's numbered history rows, oldest first.
	Order        map[string][]string
	FilterCounts map[projections.FilterValue]int64
	Days         map[projections.ClientDay]projections.SeqRange
}

// NewState returns an empty State, every map made, for a store to fill.
func NewState() State {
	return State{
		Rows: map[string]projections.Transaction{}, Balances: map[domain.AccountID]projections.Balance{},
		GGR: map[projections.GGRKey]projections.GGRDelta{}, Players: map[projections.GGRMember]bool{},
		PlayerMonths: map[projections.PlayerMonth]int64{}, Rounds: map[projections.RoundKey]projections.RoundStart{},
		Checkpoints: map[projections.StreamKey]projections.StreamCheckpoint{}, Positions: map[projections.Name]int64{},
		Order: map[string][]string{}, FilterCounts: map[projections.FilterValue]int64{},
		Days: map[projections.ClientDay]projections.SeqRange{},
	}
}
