package commands

import (
	"context"

	"github.com/pitboss/pitboss/domain"
)

// Adjust applies a signed correction to a wallet (the client's, or a
// player's) against the client's external account.
func (h *Handler) Adjust(ctx context.Context, c domain.ClientTx, delta domain.Money) (Result, error) {
	req := clientRequest(c, domain.TxAdjustment, delta.String())
	req["reason"] = c.Reason
	return h.run(ctx, clientKey(c), req, clientAccounts(c), nil,
		func(r domain.Reader, env domain.Env) (domain.Change, error) {
			return domain.DecideAdjustment(r, c, delta, env)
		})
}
