package commands

import (
	"context"
	"time"

	"github.com/pitboss/pitboss/domain"
)

// Launch records that a game session was opened for a player. It moves no
// money; TransactionID makes it idempotent.
type Launch struct {
	ClientID, PlayerID, Provider, GameID, SessionID, TransactionID string
	Currency                                                       domain.Currency
	ExpiresAt                                                      time.Time
}

// RecordLaunch appends a game.launched event.
func (h *Handler) RecordLaunch(ctx context.Context, l Launch) (Result, error) {
	req := map[string]string{
		"kind": string(domain.TxLaunch), "player_id": l.PlayerID, "provider": l.Provider, "game_id": l.GameID,
		"currency": l.Currency.Code(), "session_id": l.SessionID, "transaction_id": l.TransactionID,
	}
	accounts := []domain.AccountID{domain.PlayerWallet(l.ClientID, l.PlayerID, l.Currency)}
	return h.run(ctx, domain.ClientTxKey(l.ClientID, l.TransactionID), req, accounts, nil,
		func(r domain.Reader, env domain.Env) (domain.Change, error) {
			return domain.DecideLaunch(r, domain.Launch{Client: l.ClientID, Player: l.PlayerID, Provider: l.Provider,
				Game: l.GameID, Session: l.SessionID, ExternalTx: l.TransactionID, Currency: l.Currency,
				ExpiresAt: l.ExpiresAt}, env)
		})
}

// SyncBalance sets a player's game wallet to the balance the client sent at
// a signed launch (the difference is posted against the client's external
// account). TransactionID makes it idempotent.
func (h *Handler) SyncBalance(ctx context.Context, c ClientCall, target domain.Money, provider, game, session string) (Result, error) {
	req := c.request(domain.TxSync, target.String())
	req["game_id"], req["session_id"] = game, session
	return h.run(ctx, c.key(), req, c.accounts(), nil,
		func(r domain.Reader, env domain.Env) (domain.Change, error) {
			return domain.DecideBalanceSync(r, c.tx(), target,
				domain.GameTx{Provider: provider, Game: game, Session: session}, env)
		})
}
