package readstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pitboss/pitboss/projections"
)

// Transactions returns one page of a client's history, newest first
// ((seq, sub) descending).
//
// Unfiltered, the page is found by row number: rows at or below the
// watermark are numbered per client (tx_order), rows above it (the few the
// watermark has not reached) come first, so any page costs one index range
// and the total is a maintained counter plus those few. Filtered, the page
// is an index walk with OFFSET and the total is counted up to
// projections.MaxExactTotal.
func (m *ReadModels) Transactions(ctx context.Context, f projections.TransactionFilter, p projections.Page) (projections.TransactionPage, error) {
	if p.Number < 1 || p.Size < 1 {
		return projections.TransactionPage{}, fmt.Errorf("page %d of %d rows: %w", p.Number, p.Size, errBadPage)
	}
	tx, err := m.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return projections.TransactionPage{}, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(ctx)
	// Paging queries touch few rows; parallel workers only add start-up.
	// Custom plans always: a generic plan cannot see how narrow a filter
	// is. Measured at 4.4M rows: the one-day page's generic plan (a
	// BitmapAnd of the created_at and seq indexes) took 380–4,000 ms, the
	// custom one (the client's seq index range) 0.8 ms; the player filter
	// gets the same plan either way.
	if _, err := tx.Exec(ctx, `SELECT set_config('max_parallel_workers_per_gather', '0', true),
		set_config('plan_cache_mode', 'force_custom_plan', true)`); err != nil {
		return projections.TransactionPage{}, fmt.Errorf("set up read: %w", err)
	}
	var page projections.TransactionPage
	if f.Filtered() {
		page, err = m.filteredPage(ctx, tx, f, p)
	} else {
		page, err = m.numberedPage(ctx, tx, f.ClientID, p)
	}
	if err != nil {
		return projections.TransactionPage{}, err
	}
	if page.Rows == nil {
		page.Rows = []projections.Transaction{}
	}
	return page, tx.Commit(ctx)
}

var errBadPage = errors.New("page and size must be positive")

func (m *ReadModels) t(name string) string { return pgx.Identifier{m.schema, name}.Sanitize() }

func (m *ReadModels) numberedPage(ctx context.Context, tx pgx.Tx, client string, p projections.Page) (projections.TransactionPage, error) {
	var watermark, numbered, unnumbered int64
	// The watermark is read first and passed as a value: inside one
	// statement (seq > a subquery's result) the planner cannot know how
	// few rows lie above it, and counted the client's whole history with a
	// sequential scan — about 1 s at 4M rows, on every first page (make
	// bench). As a parameter it is an index range scan of a few rows.
	err := tx.QueryRow(ctx, `SELECT coalesce((SELECT position FROM `+m.t("positions")+` WHERE projection = $1), 0)`,
		string(projections.History)).Scan(&watermark)
	if err != nil {
		return projections.TransactionPage{}, fmt.Errorf("history watermark: %w", err)
	}
	err = tx.QueryRow(ctx, `
		SELECT coalesce((SELECT rows FROM `+m.t("tx_counts")+` WHERE client_id = $1), 0),
		       (SELECT count(*) FROM `+m.t("transactions")+` WHERE client_id = $1 AND seq > $2)`,
		client, watermark).Scan(&numbered, &unnumbered)
	if err != nil {
		return projections.TransactionPage{}, fmt.Errorf("count history of %s: %w", client, err)
	}
	page := projections.TransactionPage{Total: numbered + unnumbered, TotalExact: true}
	off, size := p.Offset(), int64(p.Size)
	if off < unnumbered {
		rows, _ := tx.Query(ctx, `SELECT `+TxCols("")+` FROM `+m.t("transactions")+`
			WHERE client_id = $1 AND seq > $2 ORDER BY seq DESC, sub DESC LIMIT $3 OFFSET $4`, client, watermark, size, off)
		if page.Rows, err = pgx.CollectRows(rows, ScanTx); err != nil {
			return projections.TransactionPage{}, fmt.Errorf("newest history of %s: %w", client, err)
		}
		size -= int64(len(page.Rows))
		off = unnumbered
	}
	hi := numbered - (off - unnumbered)
	lo := max(hi-size+1, 1)
	if size > 0 && hi >= 1 {
		rows, _ := tx.Query(ctx, `SELECT `+TxCols("t.")+` FROM `+m.t("tx_order")+` o
			JOIN `+m.t("transactions")+` t ON t.id = o.id
			WHERE o.client_id = $1 AND o.rn BETWEEN $2 AND $3 ORDER BY o.rn DESC`, client, lo, hi)
		more, err := pgx.CollectRows(rows, ScanTx)
		if err != nil {
			return projections.TransactionPage{}, fmt.Errorf("history rows %d..%d of %s: %w", lo, hi, client, err)
		}
		page.Rows = append(page.Rows, more...)
	}
	return page, nil
}

// prefixed qualifies a comma-separated list of column names.
func prefixed(alias, cols string) string {
	parts := strings.Split(cols, ", ")
	for i, c := range parts {
		parts[i] = alias + c
	}
	return strings.Join(parts, ", ")
}

// DefaultCountBudget bounds the time spent counting a filtered history: a
// selective filter over a long history may have to look at every row to
// find MaxExactTotal matches. Past it the total is given as a lower bound
// (TotalExact false).
const DefaultCountBudget = 250 * time.Millisecond

// filteredPage walks the history in order with the filter, in two regions:
// the rows above the watermark (few; counted exactly), then the numbered
// rows, whose seq span a time filter narrows through tx_days (seq and
// created_at go together, so a day's rows lie in the day's seq span, and
// the walk starts and stops there instead of at the newest row).
func (m *ReadModels) filteredPage(ctx context.Context, tx pgx.Tx, f projections.TransactionFilter, p projections.Page) (projections.TransactionPage, error) {
	where := []string{"client_id = $1"}
	args := []any{f.ClientID}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if f.PlayerID != "" {
		add("player_id = ?", f.PlayerID)
	}
	if f.Type != "" {
		add("type = ?", string(f.Type))
	}
	if f.Status != "" {
		add("status = ?", string(f.Status))
	}
	if f.Currency != "" {
		add("currency = ?", f.Currency)
	}
	if f.Provider != "" {
		add("provider = ?", f.Provider)
	}
	if f.Game != "" {
		add("game = ?", f.Game)
	}
	var timeConds []int // where's time bounds
	if !f.From.IsZero() {
		add("created_at >= ?", f.From)
		timeConds = append(timeConds, len(where)-1)
	}
	if !f.To.IsZero() {
		add("created_at < ?", f.To)
		timeConds = append(timeConds, len(where)-1)
	}
	var watermark int64
	if err := tx.QueryRow(ctx, m.sql.position, string(projections.History)).Scan(&watermark); err != nil {
		return projections.TransactionPage{}, fmt.Errorf("watermark: %w", err)
	}
	newest := append(append([]string(nil), where...), "seq > "+strconv.FormatInt(watermark, 10))
	numbered := append(append([]string(nil), where...), "seq <= "+strconv.FormatInt(watermark, 10))
	if len(timeConds) > 0 {
		lo, hi, ok, err := m.seqSpan(ctx, tx, f)
		if err != nil {
			return projections.TransactionPage{}, err
		}
		if ok {
			numbered = append(numbered, fmt.Sprintf("seq BETWEEN %d AND %d", lo, hi))
			// Within the span the time bounds only recheck rows, in the
			// form no index takes: PostgreSQL takes them as independent of
			// the span (they are the same rows) and, estimating a few
			// hundred matches, AND-ed a bitmap of the day with one of the
			// span and sorted all of them (2M events: 28,606 rows, 99 ms
			// for the first page of a day) instead of walking the span in
			// order and stopping at the page (0.3 ms). The counts keep
			// the indexable form (where).
			for _, i := range timeConds {
				numbered[i] = "(" + numbered[i] + ") IS TRUE"
			}
		} else {
			numbered = nil // no numbered row falls in the time range
		}
	}

	var newestCount int64
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM `+m.t("transactions")+` WHERE `+strings.Join(newest, " AND "),
		args...).Scan(&newestCount); err != nil {
		return projections.TransactionPage{}, fmt.Errorf("count newest history of %s: %w", f.ClientID, err)
	}
	off, size := p.Offset(), int64(p.Size)
	page := projections.TransactionPage{Rows: []projections.Transaction{}}
	read := func(cond []string, limit, offset int64) error {
		n := len(args)
		// The offset is walked on (seq, sub) alone, which an index on
		// the filter's columns answers without visiting the table (a
		// "deferred join"); only the page's rows are read in full.
		rows, _ := tx.Query(ctx, `SELECT `+TxCols("t.")+` FROM `+m.t("transactions")+` t JOIN (
			SELECT seq, sub FROM `+m.t("transactions")+` WHERE `+strings.Join(cond, " AND ")+`
			ORDER BY seq DESC, sub DESC LIMIT $`+strconv.Itoa(n+1)+` OFFSET $`+strconv.Itoa(n+2)+`) k
			ON t.client_id = $1 AND t.seq = k.seq AND t.sub = k.sub
			ORDER BY t.seq DESC, t.sub DESC`, append(args, limit, offset)...)
		list, err := pgx.CollectRows(rows, ScanTx)
		if err != nil {
			return fmt.Errorf("filtered history of %s: %w", f.ClientID, err)
		}
		page.Rows = append(page.Rows, list...)
		return nil
	}
	if off < newestCount {
		if err := read(newest, size, off); err != nil {
			return projections.TransactionPage{}, err
		}
		size -= int64(len(page.Rows))
		off = newestCount
	}
	if numbered == nil {
		page.Total, page.TotalExact = newestCount, true
		return page, nil
	}
	switch f {
	case projections.TransactionFilter{ClientID: f.ClientID, Type: f.Type}:
		return m.markedPage(ctx, tx, f.ClientID, projections.FilterType, string(f.Type), watermark, page, newestCount, size,
			off-newestCount)
	case projections.TransactionFilter{ClientID: f.ClientID, PlayerID: f.PlayerID}:
		return m.markedPage(ctx, tx, f.ClientID, projections.FilterPlayer, f.PlayerID, watermark, page, newestCount, size,
			off-newestCount)
	}
	if size > 0 {
		if err := read(numbered, size, off-newestCount); err != nil {
			return projections.TransactionPage{}, err
		}
	}
	// The numbered rows matching the filter are all its rows less the
	// newest. Counted that way the count needs the filter's columns only
	// (no seq span, no watermark), which an index answers without the
	// table: at 3M events a day's count went from 188 ms (a bitmap of two
	// indexes, then 8,600 table pages) to 4 ms (index only).
	all, counted, err := m.boundedCount(ctx, tx, where, args, newestCount+projections.MaxExactTotal+1)
	if err != nil {
		return projections.TransactionPage{}, err
	}
	count := max(all-newestCount, 0)
	// What this page shows to exist: a lower bound of the total.
	seen := newestCount
	if len(page.Rows) > 0 {
		seen = p.Offset() + int64(len(page.Rows))
	}
	switch {
	case !counted: // counting took too long
		page.Total = seen
	case count > projections.MaxExactTotal:
		page.Total = max(newestCount+projections.MaxExactTotal, seen)
	default:
		page.Total, page.TotalExact = newestCount+count, true
	}
	return page, nil
}

// seqSpan turns f's time range into the seq span of the numbered rows in
// it, from the per-day bounds; ok is false when no numbered row can be in
// the range.
func (m *ReadModels) seqSpan(ctx context.Context, tx pgx.Tx, f projections.TransactionFilter) (lo, hi int64, ok bool, err error) {
	cond := []string{"client_id = $1"}
	args := []any{f.ClientID}
	if !f.From.IsZero() {
		args = append(args, f.From.UTC().Format(time.DateOnly))
		cond = append(cond, "day >= $"+strconv.Itoa(len(args))+"::date")
	}
	if !f.To.IsZero() {
		// created_at < To: the last day is the one of the instant before.
		args = append(args, f.To.UTC().Add(-time.Microsecond).Format(time.DateOnly))
		cond = append(cond, "day <= $"+strconv.Itoa(len(args))+"::date")
	}
	var l, h *int64
	if err := tx.QueryRow(ctx, `SELECT min(min_seq), max(max_seq) FROM `+m.t("tx_days")+` WHERE `+strings.Join(cond, " AND "),
		args...).Scan(&l, &h); err != nil {
		return 0, 0, false, fmt.Errorf("seq span of %s: %w", f.ClientID, err)
	}
	if l == nil || h == nil {
		return 0, 0, false, nil
	}
	return *l, *h, true, nil
}

// boundedCount counts the rows matching cond up to limit, within
// m.countBudget; counted is false when the budget ran out.
func (m *ReadModels) boundedCount(ctx context.Context, tx pgx.Tx, cond []string, args []any, limit int64) (n int64, counted bool, err error) {
	sp, err := tx.Begin(ctx) // a savepoint: a cancelled count leaves the transaction usable
	if err != nil {
		return 0, false, fmt.Errorf("savepoint: %w", err)
	}
	defer sp.Rollback(ctx)
	budget := max(m.countBudget.Milliseconds(), 1) // 0 would be no limit at all
	if _, err := sp.Exec(ctx, fmt.Sprintf("SET LOCAL statement_timeout = %d", budget)); err != nil {
		return 0, false, fmt.Errorf("count budget: %w", err)
	}
	err = sp.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM `+m.t("transactions")+` WHERE `+strings.Join(cond, " AND ")+`
		LIMIT $`+strconv.Itoa(len(args)+1)+`) x`, append(args, limit)...).Scan(&n)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "57014" { // query_canceled: the budget ran out
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("count filtered history: %w", err)
	}
	// Releasing the savepoint would keep the timeout for the rest of the
	// transaction; rolling back to it undoes the SET as well.
	return n, true, nil
}

// markedPage ends filteredPage for a filter of one type alone or one
// player alone: the numbered rows of each are counted (tx_filter_counts)
// and every projections.MarkEvery-th is marked (tx_filter_marks), so the
// page's walk starts at the nearest mark below it instead of at the newest
// row — at most MarkEvery rows plus the page at any depth — and the total
// is exact. page holds the rows above the watermark already shown; size
// and off are what is left to show and the offset into the numbered rows.
func (m *ReadModels) markedPage(ctx context.Context, tx pgx.Tx, client, filter, value string, watermark int64,
	page projections.TransactionPage, newestCount, size, off int64) (projections.TransactionPage, error) {
	column := map[string]string{projections.FilterType: "type", projections.FilterPlayer: "player_id"}[filter]
	var n int64
	if err := tx.QueryRow(ctx, `SELECT coalesce((SELECT rows FROM `+m.t("tx_filter_counts")+`
		WHERE client_id = $1 AND filter = $2 AND value = $3), 0)`, client, filter, value).Scan(&n); err != nil {
		return projections.TransactionPage{}, fmt.Errorf("count history of %s with %s %s: %w", client, filter, value, err)
	}
	page.Total, page.TotalExact = newestCount+n, true
	// The page is the rows ranked lo..hi, counted from the oldest.
	hi := n - off
	lo := max(hi-size+1, 1)
	if size <= 0 || hi < 1 {
		return page, nil
	}
	var (
		rank, seq int64
		sub       int16
	)
	err := tx.QueryRow(ctx, `SELECT rn, seq, sub FROM `+m.t("tx_filter_marks")+`
		WHERE client_id = $1 AND filter = $2 AND value = $3 AND rn <= $4 ORDER BY rn DESC LIMIT 1`,
		client, filter, value, lo).Scan(&rank, &seq, &sub)
	switch {
	case errors.Is(err, pgx.ErrNoRows): // no mark below lo: walk from the oldest
		rank, seq, sub = 1, -1, 0
	case err != nil:
		return projections.TransactionPage{}, fmt.Errorf("mark of history of %s with %s %s: %w", client, filter, value, err)
	}
	rows, _ := tx.Query(ctx, `SELECT `+TxCols("t.")+` FROM `+m.t("transactions")+` t JOIN (
			SELECT seq, sub FROM `+m.t("transactions")+`
			WHERE client_id = $1 AND `+column+` = $2 AND seq <= $3 AND seq >= $4 AND (seq > $4 OR sub >= $5)
			ORDER BY seq, sub LIMIT $6 OFFSET $7) k
		ON t.client_id = $1 AND t.seq = k.seq AND t.sub = k.sub
		ORDER BY t.seq DESC, t.sub DESC`, client, value, watermark, seq, sub, hi-lo+1, lo-rank)
	list, err := pgx.CollectRows(rows, ScanTx)
	if err != nil {
		return projections.TransactionPage{}, fmt.Errorf("history of %s with %s %s, rows %d..%d: %w", client, filter, value, lo, hi, err)
	}
	page.Rows = append(page.Rows, list...)
	return page, nil
}

// reportDims returns the select expressions and names of q's dimensions
// (time, provider, game), currency always last.
func reportDims(q projections.ReportQuery) (exprs, names []string) {
	switch {
	case q.Has(projections.DimDay):
		exprs, names = append(exprs, "day AS period"), append(names, "period")
	case q.Has(projections.DimMonth):
		exprs, names = append(exprs, "date_trunc('month', day)::date AS period"), append(names, "period")
	}
	if q.Has(projections.DimProvider) || q.Has(projections.DimGame) {
		exprs, names = append(exprs, "provider"), append(names, "provider")
	}
	// A game id is the provider's: grouping by game groups by provider too.
	if q.Has(projections.DimGame) {
		exprs, names = append(exprs, "game"), append(names, "game")
	}
	return append(exprs, "currency"), append(names, "currency")
}

// GGR sums the daily GGR of a client over q's days, grouped by q's
// dimensions and always by currency. Rounds are a sum too (each round is
// counted once, in the group it starts in: projections.RoundStart); players
// are counted distinct per group: by currency or month from the players'
// monthly day bitmaps (ggr_player_months; the players of a 30-day report
// at 10M events: 51 → 7 ms by EXPLAIN ANALYZE), otherwise from the daily sets of each game
// (ggr_players), as a DISTINCT (hashed) then a count — count(DISTINCT)
// sorts every member: 74 against 31 ms at 3M events.
func (m *ReadModels) GGR(ctx context.Context, q projections.ReportQuery) ([]projections.GGRRow, error) {
	exprs, names := reportDims(q)
	group := strings.Join(names, ", ")
	sel := strings.Join(exprs, ", ")
	where := `client_id = $1 AND day BETWEEN $2 AND $3`
	// A group of day and game (so provider) is ggr_players' own key less
	// the player: its rows are its distinct players.
	playersSQL := `SELECT ` + sel + `, count(*) AS n FROM ` + m.t("ggr_players") + ` WHERE ` + where + ` GROUP BY ` + group
	switch {
	case !q.Has(projections.DimDay) && !q.Has(projections.DimProvider) && !q.Has(projections.DimGame):
		// By currency or month: a player's bet days of a month are one row
		// of ggr_player_months, a bitmap (bit d-1 is day d); a row counts
		// when it has a day in [$2, $3]. The mask is the bits from the
		// first day of the range in the month to the last (the bits after
		// a month's last day are never set).
		inRange := `client_id = $1 AND month BETWEEN $2::date - (extract(day FROM $2::date)::int - 1) AND $3::date
			AND days & ((1::bigint << (least($3::date - month, 30) + 1)) - (1::bigint << greatest($2::date - month, 0))) <> 0`
		if q.Has(projections.DimMonth) {
			// One row per player and month: no duplicates to remove.
			playersSQL = `SELECT month AS period, currency, count(*) AS n FROM ` + m.t("ggr_player_months") + `
				WHERE ` + inRange + ` GROUP BY month, currency`
		} else {
			playersSQL = `SELECT currency, count(*) AS n FROM (
					SELECT DISTINCT currency, player_id FROM ` + m.t("ggr_player_months") + ` WHERE ` + inRange + `) d
				GROUP BY currency`
		}
	case !q.Has(projections.DimDay) || !q.Has(projections.DimGame):
		playersSQL = `SELECT ` + group + `, count(*) AS n FROM (
			SELECT DISTINCT ` + sel + `, player_id FROM ` + m.t("ggr_players") + ` WHERE ` + where + `) d
		GROUP BY ` + group
	}
	sql := `WITH sums AS (
		SELECT ` + sel + `, max(scale) AS scale,
		       sum(bets)::bigint AS bets, sum(bet_refunds)::bigint AS bet_refunds,
		       sum(wins)::bigint AS wins, sum(win_reversals)::bigint AS win_reversals,
		       sum(promo_bets)::bigint AS promo_bets, sum(promo_bet_refunds)::bigint AS promo_bet_refunds,
		       sum(promo_wins)::bigint AS promo_wins, sum(promo_win_reversals)::bigint AS promo_win_reversals,
		       sum(jackpot_wins)::bigint AS jackpot_wins, sum(jackpot_win_reversals)::bigint AS jackpot_win_reversals,
		       sum(rounds)::bigint AS rounds
		FROM ` + m.t("ggr_daily") + ` WHERE ` + where + ` GROUP BY ` + group + `),
	players AS (` + playersSQL + `)
	SELECT ` + prefixed("s.", group) + `, s.scale, s.bets, s.bet_refunds, s.wins, s.win_reversals, s.promo_bets,
	       s.promo_bet_refunds, s.promo_wins, s.promo_win_reversals, s.jackpot_wins, s.jackpot_win_reversals,
	       s.rounds, coalesce(p.n, 0)
	FROM sums s LEFT JOIN players p USING (` + group + `)
	ORDER BY ` + prefixed("s.", group)
	// Enough memory to hash a month of players without spilling to disk.
	tx, err := m.pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("ggr report: begin: %w", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT set_config('work_mem', '32MB', true)`); err != nil {
		return nil, fmt.Errorf("ggr report: %w", err)
	}
	rows, err := tx.Query(ctx, sql, q.ClientID, q.From, q.To)
	if err != nil {
		return nil, fmt.Errorf("ggr report: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (projections.GGRRow, error) {
		var (
			r     projections.GGRRow
			scale int16
		)
		dest := make([]any, 0, 16)
		for _, n := range names {
			switch n {
			case "period":
				dest = append(dest, &r.Period)
			case "provider":
				dest = append(dest, &r.Provider)
			case "game":
				dest = append(dest, &r.Game)
			case "currency":
				dest = append(dest, &r.Currency)
			}
		}
		dest = append(dest, &scale, &r.Bets, &r.BetRefunds, &r.Wins, &r.WinReversals, &r.PromoBets,
			&r.PromoBetRefunds, &r.PromoWins, &r.PromoWinReversals, &r.JackpotWins, &r.JackpotWinReversals,
			&r.Rounds, &r.Players)
		err := row.Scan(dest...)
		r.Scale = int(scale)
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("ggr report: %w", err)
	}
	return out, nil
}
