package commands

import (
	"context"
	"strconv"

	"github.com/pitboss/pitboss/domain"
)

// gameKey is the idempotency key of a provider's wallet call.
func gameKey(g domain.GameTx) string { return domain.GameTxKey(g.Client, g.Provider, g.ExternalTxID) }

// gameRequest is the fingerprint of a provider's wallet call: the fields a
// retry must repeat. The keys are stored with the original call, so they
// never change.
//
// The free-bet ids and the jackpot part are keys only when given, so the
// fingerprints of calls stored before they existed still match a retry.
func gameRequest(g domain.GameTx, kind domain.TxKind, amount string) map[string]string {
	req := map[string]string{
		"kind": string(kind), "player_id": g.Player, "game_id": g.Game, "round_id": g.Round,
		"currency": g.Currency.Code(), "amount": amount, "transaction_id": g.ExternalTxID,
		"promo": strconv.FormatBool(g.Promo),
	}
	for k, v := range map[string]string{"campaign_id": g.Campaign, "reward_id": g.Reward} {
		if v != "" {
			req[k] = v
		}
	}
	if !g.Jackpot.IsZero() {
		req["jackpot"] = g.Jackpot.String()
	}
	return req
}

func gameAccounts(g domain.GameTx) []domain.AccountID {
	ids := []domain.AccountID{
		domain.PlayerWallet(g.Client, g.Player, g.Currency),
		domain.HouseAccount(g.Client, g.Provider, g.Currency),
	}
	if g.Reported != nil { // a seamless call's mirror leg (domain.Reported)
		ids = append(ids, domain.ExternalAccount(g.Client, g.Currency))
	}
	return ids
}

func roundRefs(g domain.GameTx) []string {
	if g.Round == "" {
		return nil
	}
	return []string{domain.RoundKey(g.Client, g.Provider, g.Round)}
}

// betRefs are the records a bet reads besides its own: its round's and,
// for a free bet naming a reward, the reward's (domain.DecideBet spends it
// when the ledger granted it).
func betRefs(g domain.GameTx) []string {
	refs := roundRefs(g)
	if g.Promo && g.Reward != "" {
		refs = append(refs, domain.RewardKey(g.Client, g.Reward))
	}
	return refs
}

// PlaceBet debits a player's wallet for a bet (a provider's debit call).
// Retrying with the same g.ExternalTxID answers the original result.
func (h *Handler) PlaceBet(ctx context.Context, g domain.GameTx, amount domain.Money) (Result, error) {
	return h.run(ctx, gameKey(g), gameRequest(g, domain.TxBet, amount.String()), gameAccounts(g), betRefs(g),
		func(r domain.Reader, env domain.Env) (domain.Change, error) {
			return domain.DecideBet(r, g, amount, env)
		})
}
