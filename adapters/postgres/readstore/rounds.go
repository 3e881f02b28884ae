package readstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pitboss/pitboss/projections"
)

var _ projections.RoundReader = (*ReadModels)(nil)

// RoundRowsWhere selects the history rows of one round: $1 client, $2
// player, $3 provider, $4 round id; every bet, win and rollback carrying
// the round's id (a booked rollback carries the round of what it undid)
// and the ledger's close of it, never the game result itself. Every row of
// a round is its player's, so the lookup takes the (client_id, player_id,
// seq, sub) index and reads only that player's rows. The console's
// transaction detail reads a game result's events by it too
// (adapters/postgres/auditstore).
const RoundRowsWhere = `client_id = $1 AND player_id = $2 AND provider = $3 AND round_id = $4 AND type <> 'game_result'`

// Rounds implements projections.RoundReader in one read-only snapshot.
//
// A round's game_result row has a name-based id of client, provider and
// round (projections.GameResultID), so a round of a named provider is one
// primary-key probe. Without a provider, the candidates are the providers
// the client has placed bets with, read from ggr_rounds's primary key
// (client_id, provider, ...) by a skip scan: one index probe per provider,
// however many rounds each has, instead of a walk over every one of the
// client's game results (round_id has no index of its own).
func (m *ReadModels) Rounds(ctx context.Context, q projections.RoundQuery) ([]projections.Round, error) {
	tx, err := m.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(ctx)
	providers := []string{q.Provider}
	if q.Provider == "" {
		rows, _ := tx.Query(ctx, `
			WITH RECURSIVE p(provider) AS (
				(SELECT provider FROM `+m.t("ggr_rounds")+` WHERE client_id = $1 ORDER BY provider LIMIT 1)
				UNION ALL
				SELECT (SELECT g.provider FROM `+m.t("ggr_rounds")+` g
				         WHERE g.client_id = $1 AND g.provider > p.provider ORDER BY g.provider LIMIT 1)
				  FROM p WHERE p.provider IS NOT NULL)
			SELECT provider FROM p WHERE provider IS NOT NULL`, q.ClientID)
		if providers, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return nil, fmt.Errorf("providers of %s: %w", q.ClientID, err)
		}
	}
	ids := make([]string, len(providers))
	for i, p := range providers {
		ids[i] = projections.GameResultID(q.ClientID, p, q.RoundID)
	}
	rows, _ := tx.Query(ctx, `SELECT `+TxCols("")+` FROM `+m.t("transactions")+`
		WHERE id = ANY($1::uuid[]) AND client_id = $2 AND type = 'game_result' AND round_id = $3
		ORDER BY provider`, ids, q.ClientID, q.RoundID)
	results, err := pgx.CollectRows(rows, ScanTx)
	if err != nil {
		return nil, fmt.Errorf("round %s of %s: %w", q.RoundID, q.ClientID, err)
	}
	out := make([]projections.Round, len(results))
	for i, r := range results {
		out[i].Result = r
	}
	if len(out) == 1 {
		r := out[0].Result
		rows, _ := tx.Query(ctx, `SELECT `+TxCols("")+` FROM `+m.t("transactions")+` WHERE `+RoundRowsWhere+`
			ORDER BY seq, sub`, r.ClientID, r.PlayerID, r.Provider, r.RoundID)
		if out[0].Rows, err = pgx.CollectRows(rows, ScanTx); err != nil {
			return nil, fmt.Errorf("rows of round %s of %s: %w", q.RoundID, q.ClientID, err)
		}
	}
	return out, tx.Commit(ctx)
}
