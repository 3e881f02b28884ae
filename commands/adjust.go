package commands

import (
	"context"

	"github.com/pitboss/pitboss/domain"
)

// Adjust applies a signed correction to a wallet (the client's, or a
// player's) against the client's external account.
func (h *Handler) Adjust(ctx context.Context, c ClientCall, delta domain.Money) (Result, error) {
	req := c.request(domain.TxAdjustment, delta.String())
	req["reason"] = c.Reason
	return h.run(ctx, c.key(), req, c.accounts(), nil,
		func(r domain.Reader, env domain.Env) (domain.Change, error) {
			return domain.DecideAdjustment(r, c.tx(), delta, env)
		})
}
