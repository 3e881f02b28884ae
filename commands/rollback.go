package commands

import (
	"context"

	"github.com/pitboss/pitboss/domain"
)

// Rollback undoes the provider transaction ref (a bet is refunded, a win
// reversed). g.TransactionID is the rollback's own id. A rollback of an
// unknown transaction moves no money and makes the late original fail.
//
// The round record loaded is the one the rollback names (providers send the
// round of the transaction they roll back); the domain updates the round's
// open-bet count only when that record is in view.
func (h *Handler) Rollback(ctx context.Context, g GameCall, ref string) (Result, error) {
	req := g.request(domain.TxRollback, "")
	delete(req, "amount")
	delete(req, "promo")
	req["reference_transaction_id"] = ref
	refs := append([]string{domain.GameTxKey(g.ClientID, g.Provider, ref)}, g.roundRefs()...)
	return h.run(ctx, g.key(), req, g.accounts(), refs,
		func(r domain.Reader, env domain.Env) (domain.Change, error) {
			return domain.DecideRollback(r, g.tx(), ref, env)
		})
}
