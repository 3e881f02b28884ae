package commands

import (
	"context"

	"github.com/pitboss/pitboss/domain"
)

// Transfer moves money between the client's wallet and a player's game
// wallet; direction is domain.ToPlayer or domain.FromPlayer.
func (h *Handler) Transfer(ctx context.Context, c ClientCall, amount domain.Money, direction string) (Result, error) {
	req := c.request(domain.TxTransfer, amount.String())
	req["direction"] = direction
	return h.run(ctx, c.key(), req, c.accounts(), nil,
		func(r domain.Reader, env domain.Env) (domain.Change, error) {
			return domain.DecideTransfer(r, c.tx(), amount, direction, env)
		})
}
