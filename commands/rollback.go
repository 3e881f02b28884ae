package commands

import (
	"context"
	"slices"

	"github.com/pitboss/pitboss/domain"
)

// Rollback undoes the provider transaction ref (a bet is refunded, a win
// reversed). g.ExternalTxID is the rollback's own id. A rollback of an
// unknown transaction moves no money and makes the late original fail.
//
// The round record of the original is loaded too, whatever round (if any)
// the rollback names, so the round's open-bet count stays right, a later
// win on a round whose bets were all rolled back is refused, and a bet its
// round's win settled is not refunded. A win's reversal loads the record
// the win settled (its bet or its round), which may then be rolled back.
func (h *Handler) Rollback(ctx context.Context, g domain.GameTx, ref string) (Result, error) {
	req := gameRequest(g, domain.TxRollback, "")
	delete(req, "amount")
	delete(req, "promo")
	req["reference_transaction_id"] = ref
	refKey := domain.GameTxKey(g.Client, g.Provider, ref)
	refs := append([]string{refKey}, roundRefs(g)...)
	return h.run(ctx, gameKey(g), req, gameAccounts(g), refs,
		func(r domain.Reader, env domain.Env) (domain.Change, error) {
			// The original's round and what it settled are only known once
			// the original is read. Both records exist whenever the
			// original names them (they were booked in its change), so one
			// missing from view was not loaded: ask for it.
			if orig, ok := r.Record(refKey); ok {
				var missing []string
				if orig.RoundID != "" {
					missing = append(missing, domain.RoundKey(g.Client, g.Provider, orig.RoundID))
				}
				if orig.Settles != "" && !slices.Contains(missing, orig.Settles) {
					missing = append(missing, orig.Settles)
				}
				if orig.Kind == domain.TxBet && orig.Reward != "" {
					missing = append(missing, domain.RewardKey(g.Client, orig.Reward))
				}
				missing = slices.DeleteFunc(missing, func(k string) bool { _, loaded := r.Record(k); return loaded })
				if len(missing) > 0 {
					return domain.Change{}, &needRecords{keys: missing}
				}
			}
			return domain.DecideRollback(r, g, ref, env)
		})
}
