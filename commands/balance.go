package commands

import (
	"context"

	"github.com/pitboss/pitboss/domain"
)

// Balances reads the current, committed state of accounts: what a provider's
// balance call must see (the read models may lag).
type Balances interface {
	Account(ctx context.Context, id domain.AccountID) (domain.AccountState, error)
}
