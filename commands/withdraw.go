package commands

import (
	"context"

	"github.com/pitboss/pitboss/domain"
)

// Withdraw takes money out of the client's wallet, or a player's.
func (h *Handler) Withdraw(ctx context.Context, c ClientCall, amount domain.Money) (Result, error) {
	return h.run(ctx, c.key(), c.request(domain.TxWithdrawal, amount.String()), c.accounts(), nil,
		func(r domain.Reader, env domain.Env) (domain.Change, error) {
			return domain.DecideWithdrawal(r, c.tx(), amount, env)
		})
}
