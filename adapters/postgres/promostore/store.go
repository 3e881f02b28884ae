// Package promostore keeps free-bet campaigns and the providers' grants
// (migration 00031), and reads the ledger's reward records and the history
// read model for the campaign report (promo.Store, promo.ReportStore;
// docs/promotions.md).
package promostore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/promo"
)

// Store is the PostgreSQL promo.Store.
type Store struct{ pool *pgxpool.Pool }

var _ promo.Store = (*Store)(nil)

// New returns a Store over pool.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

const campaignCols = `client_id, id, name, provider_id, game_ids, currency, bet_value::text, free_bets,
	valid_from, valid_until, provider_refs, request, created_at`

func scanCampaign(row pgx.Row) (promo.Campaign, error) {
	var c promo.Campaign
	var cur, bet string
	var refs []byte
	var req map[string]string
	if err := row.Scan(&c.ClientID, &c.ID, &c.Name, &c.ProviderID, &c.Games, &cur, &bet, &c.FreeBets, &c.ValidFrom,
		&c.ValidUntil, &refs, &req, &c.CreatedAt); err != nil {
		return c, err
	}
	currency, err := domain.ParseCurrency(cur)
	if err != nil {
		return c, fmt.Errorf("campaign %s: %w", c.ID, err)
	}
	if c.BetValue, err = domain.ParseMoney(trimZeros(bet, currency.Exponent()), currency); err != nil {
		return c, fmt.Errorf("campaign %s bet value %q: %w", c.ID, bet, err)
	}
	if err := json.Unmarshal(refs, &c.ProviderRefs); err != nil {
		return c, fmt.Errorf("campaign %s provider refs: %w", c.ID, err)
	}
	c.Recorded = req["recorded"] == "true"
	c.ValidFrom, c.ValidUntil, c.CreatedAt = c.ValidFrom.UTC(), c.ValidUntil.UTC(), c.CreatedAt.UTC()
	return c, nil
}

// trimZeros drops the decimals a numeric column may carry beyond the
// currency's (they are zeros: the value was written at its precision).
func trimZeros(s string, exp int) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			for len(s) > i+1+exp && s[len(s)-1] == '0' {
				s = s[:len(s)-1]
			}
			if s[len(s)-1] == '.' {
				s = s[:len(s)-1]
			}
			break
		}
	}
	return s
}

// CreateCampaign implements promo.Store.
func (s *Store) CreateCampaign(ctx context.Context, c promo.Campaign) (promo.Campaign, bool, error) {
	refs, err := json.Marshal(c.ProviderRefs)
	if err != nil {
		return promo.Campaign{}, false, err
	}
	req := c.Request()
	if c.Recorded {
		req["recorded"] = "true"
	}
	row := s.pool.QueryRow(ctx, `INSERT INTO campaigns (client_id, id, name, provider_id, game_ids, currency, bet_value,
		free_bets, valid_from, valid_until, provider_refs, request)
		VALUES ($1, $2, $3, $4, $5, $6, $7::numeric, $8, $9, $10, $11, $12)
		ON CONFLICT (client_id, id) DO NOTHING RETURNING `+campaignCols,
		c.ClientID, c.ID, c.Name, c.ProviderID, c.Games, c.BetValue.Currency().Code(), c.BetValue.String(), c.FreeBets,
		c.ValidFrom, c.ValidUntil, refs, req)
	stored, err := scanCampaign(row)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		old, err := s.Campaign(ctx, c.ClientID, c.ID)
		return old, false, err
	case err != nil:
		return promo.Campaign{}, false, fmt.Errorf("create campaign %s: %w", c.ID, err)
	}
	return stored, true, nil
}

// Campaign implements promo.Store.
func (s *Store) Campaign(ctx context.Context, clientID, id string) (promo.Campaign, error) {
	c, err := scanCampaign(s.pool.QueryRow(ctx, `SELECT `+campaignCols+` FROM campaigns WHERE client_id = $1 AND id = $2`,
		clientID, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return c, fmt.Errorf("campaign %s: %w", id, domain.ErrNotFound)
	}
	if err != nil {
		return c, fmt.Errorf("read campaign %s: %w", id, err)
	}
	return c, nil
}

// Campaigns implements promo.Store.
func (s *Store) Campaigns(ctx context.Context, clientID string) ([]promo.Campaign, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+campaignCols+` FROM campaigns WHERE client_id = $1
		ORDER BY created_at DESC, id`, clientID)
	if err != nil {
		return nil, fmt.Errorf("list campaigns: %w", err)
	}
	defer rows.Close()
	out := []promo.Campaign{}
	for rows.Next() {
		c, err := scanCampaign(rows)
		if err != nil {
			return nil, fmt.Errorf("list campaigns: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// SaveGrant implements promo.Store.
func (s *Store) SaveGrant(ctx context.Context, g promo.Grant) (promo.Grant, error) {
	if _, err := s.pool.Exec(ctx, `INSERT INTO promo_grants (client_id, reward_id, campaign_id, request, provider_ref)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (client_id, reward_id) DO NOTHING`,
		g.ClientID, g.RewardID, g.CampaignID, g.Request, g.ProviderRef); err != nil {
		return promo.Grant{}, fmt.Errorf("keep grant %s: %w", g.RewardID, err)
	}
	kept, ok, err := s.Grant(ctx, g.ClientID, g.RewardID)
	if err == nil && !ok {
		err = fmt.Errorf("grant %s vanished", g.RewardID)
	}
	return kept, err
}

// Grant implements promo.Store.
func (s *Store) Grant(ctx context.Context, clientID, rewardID string) (promo.Grant, bool, error) {
	g := promo.Grant{ClientID: clientID, RewardID: rewardID}
	err := s.pool.QueryRow(ctx, `SELECT campaign_id, request, provider_ref FROM promo_grants
		WHERE client_id = $1 AND reward_id = $2`, clientID, rewardID).Scan(&g.CampaignID, &g.Request, &g.ProviderRef)
	if errors.Is(err, pgx.ErrNoRows) {
		return promo.Grant{}, false, nil
	}
	if err != nil {
		return promo.Grant{}, false, fmt.Errorf("read grant %s: %w", rewardID, err)
	}
	return g, true, nil
}

// rewardSQL reads reward records with their grant's position and the
// provider's id of the reward.
const rewardSQL = `SELECT r.record, coalesce(g.provider_ref, '') FROM tx_records r
	LEFT JOIN promo_grants g ON g.client_id = split_part(r.key, '|', 2) AND g.reward_id = r.record ->> 'reward'
	WHERE r.kind = 'reward' AND `

func scanRewards(rows pgx.Rows) ([]promo.Reward, error) {
	defer rows.Close()
	out := []promo.Reward{}
	for rows.Next() {
		var raw []byte
		var ref string
		if err := rows.Scan(&raw, &ref); err != nil {
			return nil, err
		}
		var rec domain.TxRecord
		if err := domain.DecodeTxRecord(raw, &rec); err != nil {
			return nil, fmt.Errorf("reward record: %w", err)
		}
		r, err := rewardOf(rec)
		if err != nil {
			return nil, err
		}
		r.ProviderRef = ref
		out = append(out, r)
	}
	return out, rows.Err()
}

func rewardOf(rec domain.TxRecord) (promo.Reward, error) {
	cur, err := domain.ParseCurrency(rec.Currency)
	if err != nil {
		return promo.Reward{}, fmt.Errorf("reward %s: %w", rec.Reward, err)
	}
	until, err := time.Parse(time.RFC3339, rec.ValidUntil)
	if err != nil {
		return promo.Reward{}, fmt.Errorf("reward %s valid until %q: %w", rec.Reward, rec.ValidUntil, err)
	}
	client := ""
	if parts := splitKey(rec.Key); len(parts) == 3 {
		client = parts[1]
	}
	return promo.Reward{ClientID: client, ID: rec.Reward, CampaignID: rec.Campaign, PlayerID: rec.PlayerID,
		ProviderID: rec.Request["provider"], GameID: rec.Request["game_id"], BetValue: domain.FromMinor(rec.Amount, cur),
		FreeBets: rec.FreeBets, Used: rec.Used, State: rec.State, ValidUntil: until, GrantedAt: rec.CreatedAt.UTC(),
		Position: rec.Position}, nil
}

// splitKey splits reward|{client}|{reward}: ids never hold '|'.
func splitKey(k string) []string {
	var out []string
	start := 0
	for i := 0; i < len(k); i++ {
		if k[i] == '|' {
			out = append(out, k[start:i])
			start = i + 1
		}
	}
	return append(out, k[start:])
}

// Rewards implements promo.Store.
func (s *Store) Rewards(ctx context.Context, clientID, campaignID string) ([]promo.Reward, error) {
	rows, err := s.pool.Query(ctx, rewardSQL+`split_part(r.key, '|', 2) = $1 AND r.record ->> 'campaign' = $2
		ORDER BY (r.record ->> 'position')::bigint, r.key`, clientID, campaignID)
	if err != nil {
		return nil, fmt.Errorf("list rewards of %s: %w", campaignID, err)
	}
	out, err := scanRewards(rows)
	if err != nil {
		return nil, fmt.Errorf("list rewards of %s: %w", campaignID, err)
	}
	return out, nil
}

// Reward implements promo.Store.
func (s *Store) Reward(ctx context.Context, clientID, rewardID string) (promo.Reward, error) {
	rows, err := s.pool.Query(ctx, rewardSQL+`r.key = $1`, domain.RewardKey(clientID, rewardID))
	if err != nil {
		return promo.Reward{}, fmt.Errorf("read reward %s: %w", rewardID, err)
	}
	out, err := scanRewards(rows)
	if err != nil {
		return promo.Reward{}, fmt.Errorf("read reward %s: %w", rewardID, err)
	}
	if len(out) == 0 {
		return promo.Reward{}, fmt.Errorf("reward %s: %w", rewardID, domain.ErrNotFound)
	}
	return out[0], nil
}

// DueRewards implements promo.Store. valid_until is RFC 3339 in UTC with
// whole seconds, so text order is time order.
func (s *Store) DueRewards(ctx context.Context, now time.Time, limit int) ([]promo.Reward, error) {
	rows, err := s.pool.Query(ctx, rewardSQL+`r.record ->> 'state' = 'active' AND r.record ->> 'valid_until' <= $1
		ORDER BY r.record ->> 'valid_until', r.key LIMIT $2`, now.UTC().Format(time.RFC3339), limit)
	if err != nil {
		return nil, fmt.Errorf("due rewards: %w", err)
	}
	out, err := scanRewards(rows)
	if err != nil {
		return nil, fmt.Errorf("due rewards: %w", err)
	}
	return out, nil
}

// ActiveReward implements promo.Store.
func (s *Store) ActiveReward(ctx context.Context, clientID, providerID, playerID, gameID, currency string,
	now time.Time) (string, bool, error) {
	var id string
	err := s.pool.QueryRow(ctx, `SELECT r.record ->> 'reward' FROM tx_records r
		WHERE r.kind = 'reward' AND split_part(r.key, '|', 2) = $1 AND r.record ->> 'state' = 'active'
		  AND r.record -> 'request' ->> 'provider' = $2 AND r.record ->> 'player_id' = $3
		  AND r.record -> 'request' ->> 'game_id' = $4 AND r.record ->> 'currency' = $5
		  AND coalesce((r.record ->> 'used')::bigint, 0) < (r.record ->> 'free_bets')::bigint
		  AND r.record ->> 'valid_until' > $6
		ORDER BY (r.record ->> 'position')::bigint, r.key LIMIT 1`,
		clientID, providerID, playerID, gameID, currency, now.UTC().Format(time.RFC3339)).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("active reward of %s: %w", playerID, err)
	}
	return id, true, nil
}
