package commands

import (
	"context"

	"github.com/pitboss/pitboss/domain"
)

// Withdraw takes money out of the client's wallet, or a player's.
func (h *Handler) Withdraw(ctx context.Context, c domain.ClientTx, amount domain.Money) (Result, error) {
	return h.run(ctx, clientKey(c), clientRequest(c, domain.TxWithdrawal, amount.String()), clientAccounts(c), nil,
		func(r domain.Reader, env domain.Env) (domain.Change, error) {
			return domain.DecideWithdrawal(r, c, amount, env)
		})
}
