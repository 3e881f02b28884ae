package gatewaystore

import (
	"context"
	"fmt"
	"time"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/wallet"
)

// SeamlessMovements are the movements the ledger booked for the seamless
// client in [from, to): its events that carry the operator's id, oldest
// first, each with its session's operator token, provider and game.
func (g *Gateway) SeamlessMovements(ctx context.Context, clientID string, from, to time.Time) ([]wallet.SeamlessMovement, error) {
	rows, err := g.pool.Query(ctx, `
		SELECT e.body::text, coalesce(s.operator_token, '')
		FROM events e LEFT JOIN game_sessions s ON s.id = e.body->'data'->>'session_id'
		WHERE e.occurred_at >= $2 AND e.occurred_at < $3
		  AND e.event_type IN ('wallet.bet_placed.v1', 'wallet.win_credited.v1', 'wallet.bet_rolled_back.v1',
		                       'wallet.win_reversed.v1')
		  AND e.body->'data'->>'client_id' = $1 AND e.body->'data'->>'operator_tx_id' IS NOT NULL
		ORDER BY e.position`, clientID, from, to)
	if err != nil {
		return nil, fmt.Errorf("seamless movements of %s: %w", clientID, err)
	}
	defer rows.Close()
	var out []wallet.SeamlessMovement
	for rows.Next() {
		var body, token string
		if err := rows.Scan(&body, &token); err != nil {
			return nil, err
		}
		e, err := domain.DecodeBody([]byte(body))
		if err != nil {
			return nil, fmt.Errorf("decode an event of %s: %w", clientID, err)
		}
		cur, err := domain.ParseCurrency(e.Data.Currency)
		if err != nil {
			return nil, fmt.Errorf("event %s: %w", e.ID, err)
		}
		amount, err := domain.ParseMoney(e.Data.Amount, cur)
		if err != nil {
			return nil, fmt.Errorf("event %s amount: %w", e.ID, err)
		}
		out = append(out, wallet.SeamlessMovement{EventID: e.ID, Type: e.Type, ID: e.Data.ExternalTxID,
			Ref: e.Data.ReferenceTx, Player: e.Data.PlayerID, Token: token, Provider: e.Data.Provider, Game: e.Data.GameID,
			Amount: amount, Promo: e.Data.Promo, OperatorTxID: e.Data.OperatorTxID})
	}
	return out, rows.Err()
}
