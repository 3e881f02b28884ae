package audit

import (
	"context"

	"github.com/pitboss/pitboss/projections"
)

// The ports below are what the audit and console routes read; the audit
// store implements them (adapters/postgres/auditstore). They live here,
// beside the records they carry, so that neither the HTTP layer nor the
// gateway model has to import the other's rooms to name them.

// Log pages the event log for GET /api/v1/audit/events.
type Log interface {
	// ClientEvents returns up to limit events of clientID (its streams, and
	// data.client_id is clientID) with a position above after, in position
	// order, and the client's own head (its last event), all read in one
	// snapshot. The platform's head is never shown to a client: it would
	// show every other client's volume.
	ClientEvents(ctx context.Context, clientID string, after int64, limit int) (Page, error)
}

// Page is one page of a client's events.
type Page struct {
	Events       []Record
	HeadPosition int64  // the position of the client's last event; 0 when it has none
	HeadHash     []byte // the chain's hash at that position; nil when it has none
}

// Runs reads the verification runs recorded in audit_runs.
type Runs interface {
	// LastRun is the most recent run; ok is false when there is none.
	LastRun(ctx context.Context) (rep Report, ok bool, err error)
}

// TransactionDetail is one row of a client's transaction history with the
// ledger events behind it.
type TransactionDetail struct {
	Transaction projections.Transaction
	// Events are, in position order: for a game result, every bet, win and
	// rollback event of its round; for any other row, its own event and
	// the rollback events that reference it.
	Events []Record
}

// TransactionDetails reads history rows with their events.
type TransactionDetails interface {
	// TransactionDetail returns the client's row id. A row that does not
	// exist or is another client's is domain.ErrNotFound.
	TransactionDetail(ctx context.Context, clientID, id string) (TransactionDetail, error)
}

// Checkpoints lists the signed checkpoints and their public keys for
// GET /api/v1/audit/checkpoints and /api/v1/audit/checkpoint-keys.
type Checkpoints interface {
	// ClientCheckpoints returns up to limit of clientID's own checkpoints
	// with an id above after, in id order: never the platform's, never
	// another client's.
	ClientCheckpoints(ctx context.Context, clientID string, after int64, limit int) ([]SignedCheckpoint, error)
	// Keys lists every signing key's public half, oldest first.
	Keys(ctx context.Context) ([]CheckpointKey, error)
}
