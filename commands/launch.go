package commands

import (
	"context"

	"github.com/pitboss/pitboss/domain"
)

// RecordLaunch appends a game.launched event: a game session was opened for
// a player. It moves no money; l.ExternalTxID makes it idempotent.
func (h *Handler) RecordLaunch(ctx context.Context, l domain.Launch) (Result, error) {
	req := map[string]string{
		"kind": string(domain.TxLaunch), "player_id": l.Player, "provider": l.Provider, "game_id": l.Game,
		"currency": l.Currency.Code(), "session_id": l.Session, "transaction_id": l.ExternalTxID,
	}
	accounts := []domain.AccountID{domain.PlayerWallet(l.Client, l.Player, l.Currency)}
	return h.run(ctx, domain.ClientTxKey(l.Client, l.ExternalTxID), req, accounts, nil,
		func(r domain.Reader, env domain.Env) (domain.Change, error) {
			return domain.DecideLaunch(r, l, env)
		})
}

// SyncBalance sets a player's game wallet to the balance the client sent at
// a signed launch (the difference is posted against the client's external
// account). c.ExternalTxID makes it idempotent; at names the provider, game
// and session of the launch (its other fields are not used).
func (h *Handler) SyncBalance(ctx context.Context, c domain.ClientTx, target domain.Money, at domain.GameTx) (Result, error) {
	req := clientRequest(c, domain.TxSync, target.String())
	req["game_id"], req["session_id"] = at.Game, at.Session
	return h.run(ctx, clientKey(c), req, clientAccounts(c), nil,
		func(r domain.Reader, env domain.Env) (domain.Change, error) {
			return domain.DecideBalanceSync(r, c, target,
				domain.GameTx{Provider: at.Provider, Game: at.Game, Session: at.Session}, env)
		})
}
