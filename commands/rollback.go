package commands

import (
	"context"

	"github.com/pitboss/pitboss/domain"
)

// Rollback undoes the provider transaction ref (a bet is refunded, a win
// reversed). g.ExternalTxID is the rollback's own id. A rollback of an
// unknown transaction moves no money and makes the late original fail.
//
// The round record of the original is loaded too, whatever round (if any)
// the rollback names, so the round's open-bet count stays right and a later
// win on a round whose bets were all rolled back is refused.
func (h *Handler) Rollback(ctx context.Context, g domain.GameTx, ref string) (Result, error) {
	req := gameRequest(g, domain.TxRollback, "")
	delete(req, "amount")
	delete(req, "promo")
	req["reference_transaction_id"] = ref
	refKey := domain.GameTxKey(g.Client, g.Provider, ref)
	refs := append([]string{refKey}, roundRefs(g)...)
	return h.run(ctx, gameKey(g), req, gameAccounts(g), refs,
		func(r domain.Reader, env domain.Env) (domain.Change, error) {
			// The original's round is only known once the original is read.
			// A bet in a round always books its round record in the same
			// change, so a round record missing from view was not loaded:
			// ask for it.
			if orig, ok := r.Record(refKey); ok && orig.RoundID != "" {
				roundKey := domain.RoundKey(g.Client, g.Provider, orig.RoundID)
				if _, loaded := r.Record(roundKey); !loaded {
					return domain.Change{}, &needRecords{keys: []string{roundKey}}
				}
			}
			return domain.DecideRollback(r, g, ref, env)
		})
}
