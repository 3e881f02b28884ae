package promostore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pitboss/pitboss/promo"
)

var _ promo.ReportStore = (*Store)(nil)

// RewardCounts implements promo.ReportStore: the reward records of each
// campaign, by the index on (client, campaign) of migration 00031.
func (s *Store) RewardCounts(ctx context.Context, clientID string, campaignIDs []string) (map[string]promo.RewardCounts, error) {
	rows, err := s.pool.Query(ctx, `
SELECT r.record ->> 'campaign', count(*),
       sum((r.record ->> 'free_bets')::bigint),
       sum(coalesce((r.record ->> 'used')::bigint, 0)),
       sum(CASE WHEN r.record ->> 'state' = 'cancelled'
                THEN (r.record ->> 'free_bets')::bigint - coalesce((r.record ->> 'used')::bigint, 0) ELSE 0 END),
       sum(CASE WHEN r.record ->> 'state' = 'expired'
                THEN (r.record ->> 'free_bets')::bigint - coalesce((r.record ->> 'used')::bigint, 0) ELSE 0 END),
       sum(CASE WHEN r.record ->> 'state' = 'active'
                THEN (r.record ->> 'free_bets')::bigint - coalesce((r.record ->> 'used')::bigint, 0) ELSE 0 END)
  FROM tx_records r
 WHERE r.kind = 'reward' AND split_part(r.key, '|', 2) = $1 AND r.record ->> 'campaign' = ANY($2)
 GROUP BY 1`, clientID, campaignIDs)
	if err != nil {
		return nil, fmt.Errorf("reward counts: %w", err)
	}
	out := map[string]promo.RewardCounts{}
	var id string
	var c promo.RewardCounts
	_, err = pgx.ForEachRow(rows, []any{&id, &c.Rewards, &c.Granted, &c.Used, &c.Cancelled, &c.Expired, &c.Left}, func() error {
		out[id] = c
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reward counts: %w", err)
	}
	return out, nil
}

// campaignMoneySQL adds up a client's promo bets and wins of the campaigns
// named, per campaign and UTC day, and the rollbacks of them on the
// rollback's day (found by the provider's transaction id, as the GGR
// projection finds them). A win's jackpot part is jackpot money, not the
// campaign's, as in the GGR's promo columns. History amounts are signed
// as the player's wallet moved.
const campaignMoneySQL = `
WITH own AS (
	SELECT campaign_id, type, amount, jackpot, provider, external_id,
	       (created_at AT TIME ZONE 'UTC')::date AS day
	  FROM readmodels.transactions
	 WHERE client_id = $1 AND promo AND type IN ('bet', 'win') AND campaign_id = ANY($2)
), undone AS (
	SELECT o.campaign_id, o.type, o.jackpot, r.amount, (r.created_at AT TIME ZONE 'UTC')::date AS day
	  FROM readmodels.transactions r
	  JOIN own o ON o.provider = r.provider AND o.external_id = r.reference_id
	 WHERE r.client_id = $1 AND r.type = 'rollback' AND r.reference_id IS NOT NULL
), days AS (
	SELECT campaign_id, day, -amount AS bets, 0::bigint AS bet_refunds, 0::bigint AS wins, 0::bigint AS win_reversals
	  FROM own WHERE type = 'bet'
	UNION ALL
	SELECT campaign_id, day, 0, 0, amount - jackpot, 0 FROM own WHERE type = 'win'
	UNION ALL
	SELECT campaign_id, day, 0, amount, 0, 0 FROM undone WHERE type = 'bet'
	UNION ALL
	SELECT campaign_id, day, 0, 0, 0, -amount - jackpot FROM undone WHERE type = 'win'
)
SELECT campaign_id, day::timestamp, sum(bets)::bigint, sum(bet_refunds)::bigint, sum(wins)::bigint,
       sum(win_reversals)::bigint
  FROM days
 WHERE ($3::date IS NULL OR day >= $3::date) AND ($4::date IS NULL OR day <= $4::date)
 GROUP BY campaign_id, day
 ORDER BY day, campaign_id`

// CampaignMoney implements promo.ReportStore.
func (s *Store) CampaignMoney(ctx context.Context, clientID string, campaignIDs []string, from, to time.Time) ([]promo.DayMoney, error) {
	var f, t *time.Time
	if !from.IsZero() {
		f = &from
	}
	if !to.IsZero() {
		t = &to
	}
	rows, err := s.pool.Query(ctx, campaignMoneySQL, clientID, campaignIDs, f, t)
	if err != nil {
		return nil, fmt.Errorf("campaign money: %w", err)
	}
	out := []promo.DayMoney{}
	var d promo.DayMoney
	_, err = pgx.ForEachRow(rows, []any{&d.CampaignID, &d.Day, &d.PromoBets, &d.PromoBetRefunds, &d.PromoWins,
		&d.PromoWinReversals}, func() error {
		d.Day = time.Date(d.Day.Year(), d.Day.Month(), d.Day.Day(), 0, 0, 0, 0, time.UTC)
		out = append(out, d)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("campaign money: %w", err)
	}
	return out, nil
}
