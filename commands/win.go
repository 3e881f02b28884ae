package commands

import (
	"context"

	"github.com/pitboss/pitboss/domain"
)

// CreditWin credits a player's wallet (a provider's credit call). betRef,
// when not empty, is the provider's id of the bet the win settles.
func (h *Handler) CreditWin(ctx context.Context, g domain.GameTx, amount domain.Money, betRef string) (Result, error) {
	req := gameRequest(g, domain.TxWin, amount.String())
	req["reference_transaction_id"] = betRef
	refs := roundRefs(g)
	if betRef != "" {
		refs = append(refs, domain.GameTxKey(g.Client, g.Provider, betRef))
	}
	return h.run(ctx, gameKey(g), req, gameAccounts(g), refs,
		func(r domain.Reader, env domain.Env) (domain.Change, error) {
			return domain.DecideWin(r, g, amount, betRef, env)
		})
}
