package gateway

import (
	"context"

	"github.com/pitboss/pitboss/audit"
	"github.com/pitboss/pitboss/projections"
)

// VerifyRuns reads the verification runs recorded in audit_runs.
type VerifyRuns interface {
	// LastRun is the most recent run; ok is false when there is none.
	LastRun(ctx context.Context) (rep audit.Report, ok bool, err error)
}

// TransactionDetail is one row of a client's transaction history with the
// ledger events behind it.
type TransactionDetail struct {
	Transaction projections.Transaction
	// Events are, in position order: for a game result, every bet, win and
	// rollback event of its round; for any other row, its own event and
	// the rollback events that reference it.
	Events []audit.Record
}

// TransactionDetails reads history rows with their events.
type TransactionDetails interface {
	// TransactionDetail returns the client's row id. A row that does not
	// exist or is another client's is domain.ErrNotFound.
	TransactionDetail(ctx context.Context, clientID, id string) (TransactionDetail, error)
}
