package readstore_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/postgres/readstore"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/projections"
	"github.com/pitboss/pitboss/projections/projectionstest"
)

// The Postgres read models keep the read-model store contract, and answer
// its queries.
func TestReadModelsContract(t *testing.T) {
	t.Parallel()
	projectionstest.Run(t, func(t *testing.T) projectionstest.Store {
		pool, _ := pgtest.NewDatabase(t)
		return &pgReadStore{ReadModels: readstore.NewReadModels(pool), pool: pool, events: map[int64]domain.Event{}}
	})
}

// pgReadStore drives readstore.ReadModels as the suite's Store. Its
// watermark reads the event store (the first event not yet applied stops
// it), so Settle first writes the events given to the store into the
// events table, as the ledger would have.
type pgReadStore struct {
	*readstore.ReadModels
	pool    *pgxpool.Pool
	events  map[int64]domain.Event // by position: applied or dead-lettered
	written int64                  // events written up to this position
}

var (
	_ projectionstest.Store   = (*pgReadStore)(nil)
	_ projectionstest.Queries = (*pgReadStore)(nil)
)

func (s *pgReadStore) Apply(ctx context.Context, p projections.Projection, e domain.Event) (bool, error) {
	applied, err := s.ReadModels.Apply(ctx, p, e)
	if err == nil {
		s.events[e.Position] = e
	}
	return applied, err
}

func (s *pgReadStore) DeadLetter(ctx context.Context, p projections.Name, e domain.Event) error {
	err := s.RecordDeadLetter(ctx, projections.DeadLetter{Projection: p, EventID: e.ID, StreamID: string(e.StreamID),
		Version: e.Version, Position: e.Position, Reason: "the contract suite gave up on it"})
	if err == nil {
		s.events[e.Position] = e
	}
	return err
}

func (s *pgReadStore) Settle(ctx context.Context, p projections.Name) (int64, error) {
	var rows [][]any
	for pos, e := range s.events {
		if pos <= s.written {
			continue
		}
		body, err := domain.EncodeBody(e)
		if err != nil {
			return 0, fmt.Errorf("encode event %d: %w", pos, err)
		}
		hash := sha256.Sum256(body)
		rows = append(rows, []any{e.Position, e.ID, string(e.StreamID), e.Version, string(e.Type), e.OccurredAt,
			string(body), domain.GenesisHash, hash[:]})
		s.written = max(s.written, pos)
	}
	if _, err := s.pool.CopyFrom(ctx, pgx.Identifier{"events"}, []string{"position", "event_id", "stream_id",
		"stream_version", "event_type", "occurred_at", "body", "prev_hash", "hash"}, pgx.CopyFromRows(rows)); err != nil {
		return 0, fmt.Errorf("write the events: %w", err)
	}
	return s.Advance(ctx, p)
}

func (s *pgReadStore) State(ctx context.Context) (projectionstest.State, error) {
	st := projectionstest.NewState()
	// The history through the store's own reader: every row of every
	// client, numbered or not.
	clients, err := s.strings(ctx, `SELECT DISTINCT client_id FROM readmodels.transactions`)
	if err != nil {
		return st, err
	}
	for _, c := range clients {
		page, err := s.Transactions(ctx, projections.TransactionFilter{ClientID: c}, projections.Page{Number: 1, Size: 1 << 20})
		if err != nil {
			return st, fmt.Errorf("history of %s: %w", c, err)
		}
		for _, r := range page.Rows {
			st.Rows[r.ID] = r
		}
	}
	var (
		b    projections.Balance
		g    projections.GGRDelta
		m    projections.GGRMember
		pm   projections.PlayerMonth
		n    int64
		rk   projections.RoundKey
		rs   projections.RoundStart
		sk   projections.StreamKey
		cp   projections.StreamCheckpoint
		name string
		fv   projections.FilterValue
		cd   projections.ClientDay
		sr   projections.SeqRange
		rn   int64
		id   string
	)
	reads := []struct {
		sql  string
		dest []any
		row  func() error
	}{
		{`SELECT account_id, kind, client_id, coalesce(player_id, ''), currency, scale, balance, position
			FROM readmodels.balances`,
			[]any{&b.Account, &b.Kind, &b.ClientID, &b.PlayerID, &b.Currency, &b.Scale, &b.Balance, &b.Position},
			func() error { st.Balances[b.Account] = b; return nil }},
		{`SELECT client_id, day, provider, game, currency, scale, bets, bet_refunds, wins, win_reversals, promo_bets,
			promo_bet_refunds, promo_wins, promo_win_reversals, rounds, jackpot_wins, jackpot_win_reversals
			FROM readmodels.ggr_daily`,
			[]any{&g.ClientID, &g.Day, &g.Provider, &g.Game, &g.Currency, &g.Scale, &g.Bets, &g.BetRefunds, &g.Wins,
				&g.WinReversals, &g.PromoBets, &g.PromoBetRefunds, &g.PromoWins, &g.PromoWinReversals, &g.Rounds, &g.JackpotWins,
				&g.JackpotWinReversals},
			func() error { st.GGR[g.GGRKey] = g; return nil }},
		{`SELECT client_id, day, provider, game, currency, player_id FROM readmodels.ggr_players`,
			[]any{&m.ClientID, &m.Day, &m.Provider, &m.Game, &m.Currency, &m.Member},
			func() error { st.Players[m] = true; return nil }},
		{`SELECT client_id, month, currency, player_id, days FROM readmodels.ggr_player_months`,
			[]any{&pm.ClientID, &pm.Month, &pm.Currency, &pm.PlayerID, &n},
			func() error { st.PlayerMonths[pm] = n; return nil }},
		{`SELECT client_id, provider, currency, round_key, day, game FROM readmodels.ggr_rounds`,
			[]any{&rk.ClientID, &rk.Provider, &rk.Currency, &rk.Round, &rs.Day, &rs.Game},
			func() error { st.Rounds[rk] = rs; return nil }},
		{`SELECT projection, stream_id, version, position FROM readmodels.checkpoints WHERE version > 0`,
			[]any{&name, &sk.StreamID, &cp.Version, &cp.Position},
			func() error { sk.Projection = projections.Name(name); st.Checkpoints[sk] = cp; return nil }},
		{`SELECT projection, position FROM readmodels.positions WHERE position > 0`,
			[]any{&name, &n},
			func() error { st.Positions[projections.Name(name)] = n; return nil }},
		{`SELECT client_id, rn, id::text FROM readmodels.tx_order ORDER BY client_id, rn`,
			[]any{&fv.ClientID, &rn, &id},
			func() error {
				if rn != int64(len(st.Order[fv.ClientID])+1) {
					return fmt.Errorf("%s's numbered row %d follows row %d", fv.ClientID, rn, len(st.Order[fv.ClientID]))
				}
				st.Order[fv.ClientID] = append(st.Order[fv.ClientID], id)
				return nil
			}},
		{`SELECT client_id, filter, value, rows FROM readmodels.tx_filter_counts`,
			[]any{&fv.ClientID, &fv.Filter, &fv.Value, &n},
			func() error { st.FilterCounts[fv] = n; return nil }},
		{`SELECT client_id, day, min_seq, max_seq FROM readmodels.tx_days`,
			[]any{&cd.ClientID, &cd.Day, &sr.Min, &sr.Max},
			func() error { st.Days[cd] = sr; return nil }},
	}
	for _, r := range reads {
		rows, _ := s.pool.Query(ctx, r.sql)
		if _, err := pgx.ForEachRow(rows, r.dest, r.row); err != nil {
			return st, fmt.Errorf("%s: %w", r.sql, err)
		}
	}
	return st, nil
}

func (s *pgReadStore) strings(ctx context.Context, sql string) ([]string, error) {
	rows, _ := s.pool.Query(ctx, sql)
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sql, err)
	}
	return out, nil
}
