package commands

import (
	"context"

	"github.com/pitboss/pitboss/domain"
)

// ClientCall is the part every operator money command shares.
type ClientCall struct {
	ClientID      string
	PlayerID      string // empty: the client's own wallet
	TransactionID string // the client's id: the idempotency key
	Currency      domain.Currency
	Reason        string
}

func (c ClientCall) tx() domain.ClientTx {
	return domain.ClientTx{Client: c.ClientID, Player: c.PlayerID, ExternalTx: c.TransactionID,
		Currency: c.Currency, Reason: c.Reason}
}

func (c ClientCall) key() string { return domain.ClientTxKey(c.ClientID, c.TransactionID) }

func (c ClientCall) request(kind domain.TxKind, amount string) map[string]string {
	return map[string]string{
		"kind": string(kind), "player_id": c.PlayerID, "currency": c.Currency.Code(), "amount": amount,
		"transaction_id": c.TransactionID,
	}
}

func (c ClientCall) accounts() []domain.AccountID {
	ids := []domain.AccountID{
		domain.ClientWallet(c.ClientID, c.Currency),
		domain.ExternalAccount(c.ClientID, c.Currency),
	}
	if c.PlayerID != "" {
		ids = append(ids, domain.PlayerWallet(c.ClientID, c.PlayerID, c.Currency))
	}
	return ids
}

// Deposit brings money into the client's wallet, or a player's when
// PlayerID is set.
func (h *Handler) Deposit(ctx context.Context, c ClientCall, amount domain.Money) (Result, error) {
	return h.run(ctx, c.key(), c.request(domain.TxDeposit, amount.String()), c.accounts(), nil,
		func(r domain.Reader, env domain.Env) (domain.Change, error) {
			return domain.DecideDeposit(r, c.tx(), amount, env)
		})
}
