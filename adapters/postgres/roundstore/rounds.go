// Package roundstore reads a provider's daily round export from the
// history read model (docs/reconciliation.md#the-providers-daily-round-export).
package roundstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/projections"
)

// roundsSQL adds up, per round (a bet without a round id is a round of
// its own, "tx:" and its id, as the GGR's round counts have it), game and
// currency, a provider's bets, wins and rollbacks of one UTC day [$2, $3)
// across the clients that played its games that day (ggr_daily knows
// them, so each client's history is read by its (client_id, created_at)
// index, not the whole table). A rollback is booked against what it undid
// (its round, game and promo kind), found by the provider's transaction
// id like the projection does. One that undid nothing (discarded: the
// transaction it names was never booked) moves nothing and is counted
// apart, in the round it names; without a round id it is left out. A win's
// jackpot part (a reversal's: its win's) is jackpot money, apart from the
// game and promo columns, as in the GGR. The player is that of the round's
// first event of the day.
const roundsSQL = `
WITH clients AS (
	SELECT DISTINCT client_id FROM %[1]s WHERE provider = $1 AND day = ($2::timestamptz AT TIME ZONE 'UTC')::date
), r AS (
	SELECT t.client_id, t.seq, t.type, t.amount, t.created_at, t.currency, t.scale, t.player_id,
	       coalesce(o.type, t.type) AS kind,
	       CASE WHEN o.type IS NOT NULL THEN o.promo ELSE t.promo END AS promo,
	       CASE WHEN o.type IS NOT NULL THEN o.jackpot ELSE t.jackpot END AS jackpot,
	       CASE WHEN o.type IS NOT NULL THEN coalesce(o.round_id, 'tx:' || o.external_id)
	            ELSE coalesce(t.round_id, 'tx:' || t.external_id) END AS round,
	       coalesce(CASE WHEN o.type IS NOT NULL THEN o.game ELSE t.game END, '') AS game,
	       CASE WHEN o.type IS NOT NULL THEN o.round_id IS NULL ELSE t.round_id IS NULL END AS single
	FROM clients c
	JOIN %[2]s t ON t.client_id = c.client_id
	LEFT JOIN %[2]s o ON t.type = 'rollback' AND o.client_id = t.client_id AND o.provider = t.provider
	                  AND o.external_id = t.reference_id AND o.type IN ('bet', 'win')
	WHERE t.created_at >= $2 AND t.created_at < $3 AND t.provider = $1
	  AND t.type IN ('bet', 'win', 'rollback')
	  AND (t.type <> 'rollback' OR o.type IS NOT NULL OR (t.base_status = 'discarded' AND t.round_id IS NOT NULL))
)
SELECT client_id, round, single, game, currency, max(scale),
       (array_agg(coalesce(player_id, '') ORDER BY seq))[1],
       count(*) FILTER (WHERE type = 'bet'), count(*) FILTER (WHERE type = 'win'),
       count(*) FILTER (WHERE type = 'bet' AND promo), count(*) FILTER (WHERE type = 'rollback' AND kind <> 'rollback'),
       count(*) FILTER (WHERE kind = 'rollback'),
       coalesce(sum(-amount) FILTER (WHERE type = 'bet' AND NOT promo), 0)::bigint,
       coalesce(sum(amount) FILTER (WHERE type = 'rollback' AND kind = 'bet' AND NOT promo), 0)::bigint,
       coalesce(sum(amount - jackpot) FILTER (WHERE type = 'win' AND NOT promo), 0)::bigint,
       coalesce(sum(-amount - jackpot) FILTER (WHERE type = 'rollback' AND kind = 'win' AND NOT promo), 0)::bigint,
       coalesce(sum(-amount) FILTER (WHERE type = 'bet' AND promo), 0)::bigint,
       coalesce(sum(amount) FILTER (WHERE type = 'rollback' AND kind = 'bet' AND promo), 0)::bigint,
       coalesce(sum(amount - jackpot) FILTER (WHERE type = 'win' AND promo), 0)::bigint,
       coalesce(sum(-amount - jackpot) FILTER (WHERE type = 'rollback' AND kind = 'win' AND promo), 0)::bigint,
       coalesce(sum(jackpot) FILTER (WHERE type = 'win'), 0)::bigint,
       coalesce(sum(jackpot) FILTER (WHERE type = 'rollback' AND kind = 'win'), 0)::bigint,
       min(created_at), max(created_at)
FROM r
GROUP BY client_id, round, single, game, currency
ORDER BY client_id, round, single, game, currency`

// roundStatusSQL reads the status of the rounds of roundsSQL: a round
// with an id from its game_result row (by its name-based id), a round of
// one bet from that bet's row.
// A settled round the ledger closed as stale (a round_close row of its
// client, provider and round) is auto_closed.
const roundStatusSQL = `
SELECT g.id::text, '',
       CASE WHEN g.status = 'settled' AND EXISTS (
                SELECT 1 FROM %[1]s c WHERE c.client_id = g.client_id AND c.type = 'round_close'
                                        AND c.provider = g.provider AND c.round_id = g.round_id)
            THEN 'auto_closed' ELSE g.status END
FROM %[1]s g WHERE g.id = ANY($1::uuid[])
UNION ALL
SELECT client_id, external_id, status FROM %[1]s
WHERE provider = $2 AND type = 'bet' AND (client_id, external_id) IN (SELECT * FROM unnest($3::text[], $4::text[]))`

// Rounds reads the export from the live read models (schema readmodels).
type Rounds struct{ pool *pgxpool.Pool }

// NewRounds returns the export's reader.
func NewRounds(pool *pgxpool.Pool) *Rounds { return &Rounds{pool: pool} }

func (m *Rounds) t(name string) string { return pgx.Identifier{"readmodels", name}.Sanitize() }

// ProviderRounds returns provider's rounds of the UTC day day, in client,
// round, game and currency order, read in one snapshot of the read models.
func (m *Rounds) ProviderRounds(ctx context.Context, provider string, day time.Time) ([]projections.ProviderRound, error) {
	from := time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, time.UTC)
	tx, err := m.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("provider rounds: begin: %w", err)
	}
	defer tx.Rollback(ctx)
	rows, err := tx.Query(ctx, fmt.Sprintf(roundsSQL, m.t("ggr_daily"), m.t("transactions")), provider, from, from.AddDate(0, 0, 1))
	if err != nil {
		return nil, fmt.Errorf("provider rounds: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (projections.ProviderRound, error) {
		var (
			r     projections.ProviderRound
			scale int16
		)
		err := row.Scan(&r.ClientID, &r.RoundID, &r.NoRoundID, &r.Game, &r.Currency, &scale, &r.PlayerID,
			&r.BetCount, &r.WinCount, &r.FreeBetCount, &r.RollbackCount, &r.DiscardedCount,
			&r.Bets, &r.BetRefunds, &r.Wins, &r.WinReversals,
			&r.PromoBets, &r.PromoBetRefunds, &r.PromoWins, &r.PromoWinReversals, &r.JackpotWins, &r.JackpotWinReversals,
			&r.First, &r.Last)
		r.Scale, r.First, r.Last = int(scale), r.First.UTC(), r.Last.UTC()
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("provider rounds: %w", err)
	}
	if err := m.roundStatuses(ctx, tx, provider, out); err != nil {
		return nil, err
	}
	return out, nil
}

// roundStatuses fills in the Status of each round of rs.
func (m *Rounds) roundStatuses(ctx context.Context, tx pgx.Tx, provider string, rs []projections.ProviderRound) error {
	type roundKey struct{ id, tx string } // a game_result's id, or a bet's client and id
	key := make([]roundKey, len(rs))
	var ids, clients, txIDs []string
	for i, r := range rs {
		if r.NoRoundID {
			id := strings.TrimPrefix(r.RoundID, "tx:")
			key[i] = roundKey{r.ClientID, id}
			clients, txIDs = append(clients, r.ClientID), append(txIDs, id)
			continue
		}
		key[i] = roundKey{id: projections.GameResultID(r.ClientID, provider, r.RoundID)}
		ids = append(ids, key[i].id)
	}
	rows, err := tx.Query(ctx, fmt.Sprintf(roundStatusSQL, m.t("transactions")), ids, provider, clients, txIDs)
	if err != nil {
		return fmt.Errorf("provider rounds: statuses: %w", err)
	}
	status := map[roundKey]projections.Status{}
	var (
		k roundKey
		s projections.Status
	)
	if _, err := pgx.ForEachRow(rows, []any{&k.id, &k.tx, &s}, func() error {
		status[k] = s
		return nil
	}); err != nil {
		return fmt.Errorf("provider rounds: statuses: %w", err)
	}
	for i := range rs {
		rs[i].Status = status[key[i]]
		// A round of nothing but discarded transactions has no game
		// result: nothing of it was ever booked.
		if rs[i].Status == "" && rs[i].DiscardedCount > 0 {
			rs[i].Status = projections.StatusDiscarded
		}
	}
	return nil
}
