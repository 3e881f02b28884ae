package commands

import (
	"context"
	"strconv"

	"github.com/pitboss/pitboss/domain"
)

// GameCall is the part every provider wallet call shares.
type GameCall struct {
	ClientID, PlayerID, Provider, GameID, RoundID, SessionID string
	TransactionID                                            string // the provider's id: the idempotency key
	Currency                                                 domain.Currency
	RoundClosed, Promo                                       bool
}

func (g GameCall) tx() domain.GameTx {
	return domain.GameTx{Client: g.ClientID, Player: g.PlayerID, Provider: g.Provider, Game: g.GameID,
		Round: g.RoundID, Session: g.SessionID, ExternalTx: g.TransactionID, Currency: g.Currency,
		RoundClosed: g.RoundClosed, Promo: g.Promo}
}

func (g GameCall) key() string { return domain.GameTxKey(g.ClientID, g.Provider, g.TransactionID) }

func (g GameCall) request(kind domain.TxKind, amount string) map[string]string {
	return map[string]string{
		"kind": string(kind), "player_id": g.PlayerID, "game_id": g.GameID, "round_id": g.RoundID,
		"currency": g.Currency.Code(), "amount": amount, "transaction_id": g.TransactionID,
		"promo": strconv.FormatBool(g.Promo),
	}
}

func (g GameCall) accounts() []domain.AccountID {
	return []domain.AccountID{
		domain.PlayerWallet(g.ClientID, g.PlayerID, g.Currency),
		domain.HouseAccount(g.ClientID, g.Provider, g.Currency),
	}
}

func (g GameCall) roundRefs() []string {
	if g.RoundID == "" {
		return nil
	}
	return []string{domain.RoundKey(g.ClientID, g.Provider, g.RoundID)}
}

// PlaceBet debits a player's wallet for a bet (a provider's debit call).
// Retrying with the same transaction id answers the original result.
func (h *Handler) PlaceBet(ctx context.Context, g GameCall, amount domain.Money) (Result, error) {
	return h.run(ctx, g.key(), g.request(domain.TxBet, amount.String()), g.accounts(), g.roundRefs(),
		func(r domain.Reader, env domain.Env) (domain.Change, error) {
			return domain.DecideBet(r, g.tx(), amount, env)
		})
}
