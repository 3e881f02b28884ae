package commands

import (
	"context"

	"github.com/pitboss/pitboss/domain"
)

// clientKey is the idempotency key of an operator's money command.
func clientKey(c domain.ClientTx) string { return domain.ClientTxKey(c.Client, c.ExternalTxID) }

// clientRequest is the fingerprint of an operator's money command: the
// fields a retry must repeat. The keys are stored with the original call,
// so they never change.
func clientRequest(c domain.ClientTx, kind domain.TxKind, amount string) map[string]string {
	return map[string]string{
		"kind": string(kind), "player_id": c.Player, "currency": c.Currency.Code(), "amount": amount,
		"transaction_id": c.ExternalTxID,
	}
}

func clientAccounts(c domain.ClientTx) []domain.AccountID {
	ids := []domain.AccountID{
		domain.ClientWallet(c.Client, c.Currency),
		domain.ExternalAccount(c.Client, c.Currency),
	}
	if c.Player != "" {
		ids = append(ids, domain.PlayerWallet(c.Client, c.Player, c.Currency))
	}
	return ids
}

// Deposit brings money into the client's wallet, or a player's when
// c.Player is set.
func (h *Handler) Deposit(ctx context.Context, c domain.ClientTx, amount domain.Money) (Result, error) {
	return h.run(ctx, clientKey(c), clientRequest(c, domain.TxDeposit, amount.String()), clientAccounts(c), nil,
		func(r domain.Reader, env domain.Env) (domain.Change, error) {
			return domain.DecideDeposit(r, c, amount, env)
		})
}
