package commands

import (
	"context"

	"github.com/pitboss/pitboss/domain"
)

// CreditWin credits a player's wallet (a provider's credit call). betRef,
// when not empty, is the provider's id of the bet the win settles.
func (h *Handler) CreditWin(ctx context.Context, g GameCall, amount domain.Money, betRef string) (Result, error) {
	req := g.request(domain.TxWin, amount.String())
	req["reference_transaction_id"] = betRef
	refs := g.roundRefs()
	if betRef != "" {
		refs = append(refs, domain.GameTxKey(g.ClientID, g.Provider, betRef))
	}
	return h.run(ctx, g.key(), req, g.accounts(), refs,
		func(r domain.Reader, env domain.Env) (domain.Change, error) {
			return domain.DecideWin(r, g.tx(), amount, betRef, env)
		})
}
