package commands

import (
	"context"

	"github.com/pitboss/pitboss/domain"
)

// Transfer moves money between the client's wallet and a player's game
// wallet; direction is domain.ToPlayer or domain.FromPlayer.
func (h *Handler) Transfer(ctx context.Context, c domain.ClientTx, amount domain.Money, direction string) (Result, error) {
	req := clientRequest(c, domain.TxTransfer, amount.String())
	req["direction"] = direction
	return h.run(ctx, clientKey(c), req, clientAccounts(c), nil,
		func(r domain.Reader, env domain.Env) (domain.Change, error) {
			return domain.DecideTransfer(r, c, amount, direction, env)
		})
}
