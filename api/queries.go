package api

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/projections"
)

// HeaderLedgerPosition is on every read answer: the ledger position the
// answer reflects at least (every event at or below it is in it). A write
// answers the position of its event; a read with ?min_position= that
// position waits until the read model has reached it.
const HeaderLedgerPosition = "X-Ledger-Position"

// Paging of GET /api/v1/transactions.
const (
	DefaultPerPage = 50
	MaxPerPage     = 500
	MaxPage        = 1_000_000
)

// MaxReportDays bounds the days one report covers.
const MaxReportDays = 1096

// registerQueryRoutes adds the read-model queries to the /api/v1 group.
func (s *Server) registerQueryRoutes(v1 *echo.Group) {
	v1.GET("/transactions", s.listTransactions, requireScope(gateway.ScopeTransactionsRead))
	v1.GET("/rounds/:round_id", s.roundDetail, requireScope(gateway.ScopeTransactionsRead))
	v1.GET("/reports/ggr", s.ggrReport, requireScope(gateway.ScopeReportsRead))
	v1.GET("/reports/commission", s.commissionReport, requireScope(gateway.ScopeReportsRead))
	v1.POST("/reconciliations", s.reconcile, requireScope(gateway.ScopeReportsRead))
}

// queryParamError is a 400 naming the query parameter.
func queryParamError(field, format string, args ...any) *wire.Error {
	return wire.InvalidField(field, fmt.Sprintf(format, args...))
}

func (s *Server) queries() (*projections.Queries, error) {
	if s.deps.Queries == nil {
		return nil, wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "read models are not configured on this server")
	}
	return s.deps.Queries, nil
}

// minPosition reads ?min_position=: a position from a write's answer.
func minPosition(c echo.Context) (int64, error) {
	v, ok := wire.QueryValue(c, "min_position")
	if !ok {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, queryParamError("min_position", "min_position must be a non-negative integer (a ledger position)")
	}
	return n, nil
}

func setPosition(c echo.Context, pos int64) {
	c.Response().Header().Set(HeaderLedgerPosition, strconv.FormatInt(pos, 10))
}

// ledgerPosition sets X-Ledger-Position on a read of committed state (the
// accounts table, which every commit updates): the chain head, read before
// the state so the state reflects at least it, after waiting for
// ?min_position= if the head is below it. Without Queries it does nothing.
func (s *Server) ledgerPosition(c echo.Context) error {
	if s.deps.Queries == nil {
		return nil
	}
	minPos, err := minPosition(c)
	if err != nil {
		return err
	}
	pos, err := s.deps.Queries.LedgerPosition(c.Request().Context(), wire.Principal(c).ClientID, minPos)
	if err != nil {
		return err
	}
	setPosition(c, pos)
	return nil
}

// idParam reads an optional identifier filter.
func idParam(c echo.Context, name string) (string, error) {
	v, ok := wire.QueryValue(c, name)
	if !ok {
		return "", nil
	}
	if err := domain.ValidateID(name, v); err != nil {
		return "", queryParamError(name, "%s must be 1 to %d characters of A-Z a-z 0-9 . _ - @", name, domain.MaxIDLength)
	}
	return v, nil
}

func enumParam[T ~string](c echo.Context, name string, allowed []T) (T, error) {
	v, ok := wire.QueryValue(c, name)
	if !ok {
		return "", nil
	}
	if !slices.Contains(allowed, T(v)) {
		names := make([]string, len(allowed))
		for i, a := range allowed {
			names[i] = string(a)
		}
		return "", queryParamError(name, "%s must be one of %s", name, strings.Join(names, ", "))
	}
	return T(v), nil
}

func timeParam(c echo.Context, name string) (time.Time, error) {
	v, ok := wire.QueryValue(c, name)
	if !ok {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, queryParamError(name, "%s must be an RFC 3339 time such as 2025-01-31T00:00:00Z", name)
	}
	return t.UTC(), wire.CheckTimeRange(name, t)
}

// transactionItem is the spec's transaction shape (id, type, amount,
// currency, status, created_at) plus what an operator reconciles with.
type transactionItem struct {
	ID           string      `json:"id"`
	Type         string      `json:"type"`
	Amount       wire.Number `json:"amount"`
	Currency     string      `json:"currency"`
	Status       string      `json:"status"`
	CreatedAt    string      `json:"created_at"`
	Provider     *string     `json:"provider"`
	Game         *string     `json:"game"`
	PlayerID     *string     `json:"player_id"`
	RoundID      *string     `json:"round_id"`
	ExternalTxID *string     `json:"external_id"`
	ReferenceTx  *string     `json:"reference_id"`
	BalanceAfter wire.Number `json:"balance_after"`
	Promo        bool        `json:"promo"`
	// Jackpot is a win's jackpot part (a reversal's: the part it took
	// back); null when none. CampaignID and RewardID name a free bet's.
	Jackpot    *wire.Number `json:"jackpot"`
	CampaignID *string      `json:"campaign_id"`
	RewardID   *string      `json:"reward_id"`
	Position   int64        `json:"position"`
}

type transactionList struct {
	Success    bool              `json:"success"`
	Data       []transactionItem `json:"data"`
	Pagination listPagination    `json:"pagination"`
}

// listPagination is the spec's pagination object; total_exact is false when
// a filtered total was only counted up to projections.MaxExactTotal.
type listPagination struct {
	Page       int   `json:"page"`
	PerPage    int   `json:"per_page"`
	Total      int64 `json:"total"`
	TotalExact bool  `json:"total_exact"`
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// listTransactions answers GET /api/v1/transactions: the client's history,
// newest first, paged and filtered.
func (s *Server) listTransactions(c echo.Context) error {
	q, err := s.queries()
	if err != nil {
		return err
	}
	f := projections.TransactionFilter{ClientID: wire.Principal(c).ClientID}
	page, err := wire.QueryInt(c, "page", 1, MaxPage)
	if err != nil {
		return err
	}
	perPage, err := wire.QueryInt(c, "per_page", DefaultPerPage, MaxPerPage)
	if err != nil {
		return err
	}
	minPos, err := minPosition(c)
	if err != nil {
		return err
	}
	for _, p := range []struct {
		name string
		dst  *string
	}{{"player_id", &f.PlayerID}, {"provider", &f.Provider}, {"game", &f.Game}} {
		if *p.dst, err = idParam(c, p.name); err != nil {
			return err
		}
	}
	if f.Type, err = enumParam(c, "type", projections.TxTypes); err != nil {
		return err
	}
	if f.Status, err = enumParam(c, "status", projections.Statuses); err != nil {
		return err
	}
	if v, ok := wire.QueryValue(c, "currency"); ok {
		cur, err := domain.ParseCurrency(v)
		if err != nil {
			return &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeUnknownCurrency, Message: err.Error(),
				Details: map[string]any{"field": "currency"}}
		}
		f.Currency = cur.Code()
	}
	if f.From, err = timeParam(c, "from"); err != nil {
		return err
	}
	if f.To, err = timeParam(c, "to"); err != nil {
		return err
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.From.Before(f.To) {
		return queryParamError("to", "to must be after from")
	}
	res, pos, err := q.History(c.Request().Context(), f, projections.Page{Number: page, Size: perPage}, minPos)
	if err != nil {
		return err
	}
	body := transactionList{Success: true, Data: make([]transactionItem, 0, len(res.Rows)),
		Pagination: listPagination{Page: page, PerPage: perPage, Total: res.Total, TotalExact: res.TotalExact}}
	for _, t := range res.Rows {
		body.Data = append(body.Data, itemOfTransaction(t))
	}
	setPosition(c, pos)
	return c.JSON(http.StatusOK, body)
}

// reportQuery reads from, to (UTC days, both included; by default the 30
// days up to today) and group_by (comma-separated or repeated).
func (s *Server) reportQuery(c echo.Context, allowed []projections.Dimension) (projections.ReportQuery, error) {
	q := projections.ReportQuery{ClientID: wire.Principal(c).ClientID}
	day := func(name string, def time.Time) (time.Time, error) {
		t, ok, err := wire.QueryDay(c, name)
		if !ok {
			return def, err
		}
		return t, err
	}
	now := time.Now()
	if s.deps.Clock != nil {
		now = s.deps.Clock.Now()
	}
	now = now.UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	var err error
	if q.To, err = day("to", today); err != nil {
		return q, err
	}
	if q.From, err = day("from", q.To.AddDate(0, 0, -29)); err != nil {
		return q, err
	}
	if q.From.After(q.To) {
		return q, queryParamError("from", "from must not be after to")
	}
	if q.To.Sub(q.From) >= MaxReportDays*24*time.Hour {
		return q, queryParamError("to", "a report covers at most %d days", MaxReportDays)
	}
	names := make([]string, len(allowed))
	for i, d := range allowed {
		names[i] = string(d)
	}
	for _, v := range c.QueryParams()["group_by"] {
		if v == "" { // an empty value is the parameter left out
			continue
		}
		for _, g := range strings.Split(v, ",") {
			d := projections.Dimension(strings.TrimSpace(g))
			if !slices.Contains(allowed, d) {
				return q, queryParamError("group_by", "group_by takes %s (comma-separated)", strings.Join(names, ", "))
			}
			if !q.Has(d) {
				q.GroupBy = append(q.GroupBy, d)
			}
		}
	}
	if q.Has(projections.DimDay) && q.Has(projections.DimMonth) {
		return q, queryParamError("group_by", "group_by takes day or month, not both")
	}
	return q, nil
}

// wantsCSV reports whether the Accept header asks for text/csv.
func wantsCSV(c echo.Context) bool { return wire.Accepted(c, "text/csv") != "" }

func writeCSV(c echo.Context, name string, header []string, rows [][]string) error {
	w := wire.StartCSV(c, name)
	if err := w.Write(header); err != nil {
		return err
	}
	for _, r := range rows {
		if err := w.Write(r); err != nil {
			return err
		}
	}
	return w.Close()
}

// periodColumns are the time column's name and value of a report row.
func periodColumn(q projections.ReportQuery, t time.Time) (name, value string) {
	switch {
	case q.Has(projections.DimDay):
		return "day", t.Format(time.DateOnly)
	case q.Has(projections.DimMonth):
		return "month", t.Format("2006-01")
	}
	return "", ""
}

// ggrItem is one row of GET /api/v1/reports/ggr. Amounts are decimal JSON
// numbers in the row's currency.
type ggrItem struct {
	Day               *string     `json:"day,omitempty"`
	Month             *string     `json:"month,omitempty"`
	Provider          *string     `json:"provider,omitempty"`
	Game              *string     `json:"game,omitempty"`
	Currency          string      `json:"currency"`
	Bets              wire.Number `json:"bets"`
	BetRefunds        wire.Number `json:"bet_refunds"`
	NetBets           wire.Number `json:"net_bets"`
	Wins              wire.Number `json:"wins"`
	WinReversals      wire.Number `json:"win_reversals"`
	NetWins           wire.Number `json:"net_wins"`
	GGR               wire.Number `json:"ggr"`
	PromoBets         wire.Number `json:"promo_bets"`
	PromoBetRefunds   wire.Number `json:"promo_bet_refunds"`
	PromoWins         wire.Number `json:"promo_wins"`
	PromoWinReversals wire.Number `json:"promo_win_reversals"`
	PromoGGR          wire.Number `json:"promo_ggr"`
	// Jackpot money: the jackpot parts of wins, apart from wins and
	// promo_wins (docs/finance.md).
	JackpotWins         wire.Number `json:"jackpot_wins"`
	JackpotWinReversals wire.Number `json:"jackpot_win_reversals"`
	JackpotGGR          wire.Number `json:"jackpot_ggr"`
	Rounds              int64       `json:"rounds"`
	Players             int64       `json:"players"`
	// Reporting is the row in ?reporting_currency=, when asked.
	Reporting *reportingView `json:"reporting,omitempty"`
}

// reportingView is a row's (or a total's) amounts in the reporting
// currency; the amounts are null when a day had no rate (complete false,
// missing_rate_days naming the days, or missing_rates per currency on a
// total): a gap, never a zero.
type reportingView struct {
	Currency        string        `json:"currency"`
	Complete        bool          `json:"complete"`
	NetBets         *wire.Number  `json:"net_bets"`
	NetWins         *wire.Number  `json:"net_wins"`
	GGR             *wire.Number  `json:"ggr"`
	PromoGGR        *wire.Number  `json:"promo_ggr"`
	JackpotGGR      *wire.Number  `json:"jackpot_ggr"`
	MissingRateDays []string      `json:"missing_rate_days,omitempty"`
	MissingRates    []missingView `json:"missing_rates,omitempty"`
}

type missingView struct {
	Currency string   `json:"currency"`
	Days     []string `json:"days"`
}

func days(ts []time.Time) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Format(time.DateOnly)
	}
	return out
}

func viewOfReporting(r projections.ReportingGGR) *reportingView {
	v := &reportingView{Currency: r.Currency, Complete: r.Complete, MissingRateDays: days(r.MissingDays)}
	if len(v.MissingRateDays) == 0 {
		v.MissingRateDays = nil
	}
	for _, m := range r.Missing {
		v.MissingRates = append(v.MissingRates, missingView{Currency: m.Currency, Days: days(m.Days)})
	}
	if r.Complete {
		n := func(x int64) *wire.Number { w := wire.Number(domain.FormatMinor(x, r.Scale)); return &w }
		v.NetBets, v.NetWins, v.GGR, v.PromoGGR = n(r.NetBets), n(r.NetWins), n(r.GGR), n(r.PromoGGR)
		v.JackpotGGR = n(r.JackpotGGR)
	}
	return v
}

// groupColumns are a GGR group's day or month, provider and game as the
// report is grouped (nil when not).
func groupColumns(rq projections.ReportQuery, period time.Time, provider, game string) (day, month, prov, gm *string) {
	switch name, v := periodColumn(rq, period); name {
	case "day":
		day = &v
	case "month":
		month = &v
	}
	if rq.Has(projections.DimProvider) || rq.Has(projections.DimGame) {
		prov = &provider
	}
	if rq.Has(projections.DimGame) {
		gm = &game
	}
	return day, month, prov, gm
}

// ggrTotalItem is one total of a report in a reporting currency: a group
// over every currency.
type ggrTotalItem struct {
	Day        *string        `json:"day,omitempty"`
	Month      *string        `json:"month,omitempty"`
	Provider   *string        `json:"provider,omitempty"`
	Game       *string        `json:"game,omitempty"`
	Currencies []string       `json:"currencies"`
	Reporting  *reportingView `json:"reporting"`
}

// ggrInPage is GET /api/v1/reports/ggr with ?reporting_currency=.
type ggrInPage struct {
	Success bool           `json:"success"`
	Data    []ggrItem      `json:"data"`
	Totals  []ggrTotalItem `json:"totals"`
}

// reportingCurrency reads ?reporting_currency=: ok false when left out.
func (s *Server) reportingCurrency(c echo.Context) (domain.Currency, bool, error) {
	v, ok := wire.QueryValue(c, "reporting_currency")
	if !ok {
		return domain.Currency{}, false, nil
	}
	cur, err := domain.ParseCurrency(v)
	if err != nil {
		return cur, false, queryParamError("reporting_currency", "reporting_currency %q is not a configured currency", gateway.ClipValue(v))
	}
	if s.deps.FXRates == nil {
		return cur, false, wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "exchange rates are not configured on this server")
	}
	return cur, true, nil
}

var ggrAmountColumns = []string{"bets", "bet_refunds", "net_bets", "wins", "win_reversals", "net_wins", "ggr",
	"promo_bets", "promo_bet_refunds", "promo_wins", "promo_win_reversals", "promo_ggr",
	"jackpot_wins", "jackpot_win_reversals", "jackpot_ggr"}

func ggrAmounts(r projections.GGRRow) []string {
	f := func(v int64) string { return domain.FormatMinor(v, r.Scale) }
	return []string{f(r.Bets), f(r.BetRefunds), f(r.NetBets()), f(r.Wins), f(r.WinReversals), f(r.NetWins()),
		f(r.GGR()), f(r.PromoBets), f(r.PromoBetRefunds), f(r.PromoWins), f(r.PromoWinReversals), f(r.PromoGGR()),
		f(r.JackpotWins), f(r.JackpotWinReversals), f(r.JackpotGGR())}
}

// ggrReport answers GET /api/v1/reports/ggr: GGR per UTC day (or month),
// provider, game and currency, as JSON or, with Accept: text/csv, CSV.
func (s *Server) ggrReport(c echo.Context) error {
	q, err := s.queries()
	if err != nil {
		return err
	}
	rq, err := s.reportQuery(c, projections.Dimensions)
	if err != nil {
		return err
	}
	minPos, err := minPosition(c)
	if err != nil {
		return err
	}
	to, converted, err := s.reportingCurrency(c)
	if err != nil {
		return err
	}
	var (
		rows      []projections.GGRRow
		reporting []projections.ReportingGGR
		totals    []projections.GGRTotal
		pos       int64
	)
	if converted {
		rows, reporting, totals, pos, err = q.GGRIn(c.Request().Context(), rq, minPos, to, s.deps.FXRates)
	} else {
		rows, pos, err = q.GGR(c.Request().Context(), rq, minPos)
	}
	if err != nil {
		return err
	}
	setPosition(c, pos)
	if wantsCSV(c) {
		var header []string
		if name, _ := periodColumn(rq, time.Time{}); name != "" {
			header = append(header, name)
		}
		if rq.Has(projections.DimProvider) || rq.Has(projections.DimGame) {
			header = append(header, "provider")
		}
		if rq.Has(projections.DimGame) {
			header = append(header, "game")
		}
		header = append(append(header, "currency"), ggrAmountColumns...)
		header = append(header, "rounds", "players")
		if converted {
			header = append(header, "reporting_currency", "reporting_net_bets", "reporting_net_wins", "reporting_ggr",
				"reporting_promo_ggr", "reporting_jackpot_ggr", "missing_rate_days")
		}
		out := make([][]string, 0, len(rows))
		for i, r := range rows {
			var rec []string
			if name, v := periodColumn(rq, r.Period); name != "" {
				rec = append(rec, v)
			}
			if rq.Has(projections.DimProvider) || rq.Has(projections.DimGame) {
				rec = append(rec, r.Provider)
			}
			if rq.Has(projections.DimGame) {
				rec = append(rec, r.Game)
			}
			rec = append(append(rec, r.Currency), ggrAmounts(r)...)
			rec = append(rec, strconv.FormatInt(r.Rounds, 10), strconv.FormatInt(r.Players, 10))
			if converted {
				// A row without every day's rate has empty amounts, and
				// names the days: a gap, never a zero.
				v := viewOfReporting(reporting[i])
				amount := func(n *wire.Number) string {
					if n == nil {
						return ""
					}
					return string(*n)
				}
				rec = append(rec, v.Currency, amount(v.NetBets), amount(v.NetWins), amount(v.GGR), amount(v.PromoGGR),
					amount(v.JackpotGGR), strings.Join(v.MissingRateDays, ";"))
			}
			out = append(out, rec)
		}
		return writeCSV(c, "ggr", header, out)
	}
	items := make([]ggrItem, 0, len(rows))
	for i, r := range rows {
		a := ggrAmounts(r)
		it := ggrItem{Currency: r.Currency, Bets: wire.Number(a[0]), BetRefunds: wire.Number(a[1]), NetBets: wire.Number(a[2]),
			Wins: wire.Number(a[3]), WinReversals: wire.Number(a[4]), NetWins: wire.Number(a[5]), GGR: wire.Number(a[6]),
			PromoBets: wire.Number(a[7]), PromoBetRefunds: wire.Number(a[8]), PromoWins: wire.Number(a[9]),
			PromoWinReversals: wire.Number(a[10]), PromoGGR: wire.Number(a[11]), JackpotWins: wire.Number(a[12]),
			JackpotWinReversals: wire.Number(a[13]), JackpotGGR: wire.Number(a[14]), Rounds: r.Rounds, Players: r.Players}
		it.Day, it.Month, it.Provider, it.Game = groupColumns(rq, r.Period, r.Provider, r.Game)
		if converted {
			it.Reporting = viewOfReporting(reporting[i])
		}
		items = append(items, it)
	}
	if !converted {
		return wire.OK(c, items)
	}
	page := ggrInPage{Success: true, Data: items, Totals: make([]ggrTotalItem, 0, len(totals))}
	for _, t := range totals {
		ti := ggrTotalItem{Currencies: t.Currencies, Reporting: viewOfReporting(t.Reporting)}
		ti.Day, ti.Month, ti.Provider, ti.Game = groupColumns(rq, t.Period, t.Provider, t.Game)
		page.Totals = append(page.Totals, ti)
	}
	return c.JSON(http.StatusOK, page)
}

// commissionItem is one row of GET /api/v1/reports/commission.
type commissionItem struct {
	Day         *string     `json:"day,omitempty"`
	Month       *string     `json:"month,omitempty"`
	Provider    string      `json:"provider"`
	Currency    string      `json:"currency"`
	GGR         wire.Number `json:"ggr"`
	Rate        wire.Number `json:"rate"`
	RateChanged bool        `json:"rate_changed"`
	Commission  wire.Number `json:"commission"`
	// DealID and DealKind are the deal version of the period's last day
	// (left out when no deal applied).
	DealID   int64  `json:"deal_id,omitempty"`
	DealKind string `json:"deal_kind,omitempty"`
	// Reporting is the row in ?reporting_currency=, when asked.
	Reporting *commissionReporting `json:"reporting,omitempty"`
}

// commissionReport answers GET /api/v1/reports/commission: per provider,
// currency and period (a day with group_by=day, else a month), the
// commission on positive GGR. Provider and currency are always part of a
// row; game is not a dimension of a deal.
func (s *Server) commissionReport(c echo.Context) error {
	q, err := s.queries()
	if err != nil {
		return err
	}
	rq, err := s.reportQuery(c, []projections.Dimension{projections.DimDay, projections.DimMonth,
		projections.DimProvider, projections.DimCurrency})
	if err != nil {
		return err
	}
	if !rq.Has(projections.DimDay) && !rq.Has(projections.DimMonth) {
		rq.GroupBy = append(rq.GroupBy, projections.DimMonth)
	}
	minPos, err := minPosition(c)
	if err != nil {
		return err
	}
	to, converted, err := s.reportingCurrency(c)
	if err != nil {
		return err
	}
	var (
		rows      []projections.CommissionRow
		reporting []projections.ReportingCommission
		pos       int64
	)
	if converted {
		rows, reporting, pos, err = q.CommissionIn(c.Request().Context(), rq, minPos, to, s.deps.FXRates)
	} else {
		rows, pos, err = q.Commission(c.Request().Context(), rq, minPos)
	}
	if err != nil {
		return err
	}
	setPosition(c, pos)
	if wantsCSV(c) {
		name, _ := periodColumn(rq, time.Time{})
		header := []string{name, "provider", "currency", "ggr", "rate", "rate_changed", "commission"}
		if converted {
			header = append(header, "reporting_currency", "reporting_ggr", "reporting_commission", "missing_rate_days")
		}
		out := make([][]string, 0, len(rows))
		for i, r := range rows {
			_, p := periodColumn(rq, r.Period)
			rec := []string{p, r.Provider, r.Currency, domain.FormatMinor(r.GGR, r.Scale), r.Rate,
				strconv.FormatBool(r.RateChanged), domain.FormatMinor(r.Commission, r.Scale)}
			if converted {
				v := viewOfCommissionReporting(reporting[i])
				ggr, commission := "", ""
				if v.Complete {
					ggr, commission = string(*v.GGR), string(*v.Commission)
				}
				rec = append(rec, v.Currency, ggr, commission, strings.Join(v.MissingRateDays, ";"))
			}
			out = append(out, rec)
		}
		return writeCSV(c, "commission", header, out)
	}
	items := make([]commissionItem, 0, len(rows))
	for i, r := range rows {
		it := commissionItem{Provider: r.Provider, Currency: r.Currency, GGR: wire.Number(domain.FormatMinor(r.GGR, r.Scale)),
			Rate: wire.Number(r.Rate), RateChanged: r.RateChanged, Commission: wire.Number(domain.FormatMinor(r.Commission, r.Scale)),
			DealID: r.DealID, DealKind: r.DealKind}
		switch name, v := periodColumn(rq, r.Period); name {
		case "day":
			it.Day = &v
		case "month":
			it.Month = &v
		}
		if converted {
			it.Reporting = viewOfCommissionReporting(reporting[i])
		}
		items = append(items, it)
	}
	return wire.OK(c, items)
}

// commissionReporting is a commission row in the reporting currency; its
// amounts are null when a day had no rate (a gap, never a zero).
type commissionReporting struct {
	Currency        string       `json:"currency"`
	Complete        bool         `json:"complete"`
	GGR             *wire.Number `json:"ggr"`
	Commission      *wire.Number `json:"commission"`
	MissingRateDays []string     `json:"missing_rate_days,omitempty"`
}

func viewOfCommissionReporting(r projections.ReportingCommission) *commissionReporting {
	v := &commissionReporting{Currency: r.Currency, Complete: r.Complete}
	if len(r.MissingDays) > 0 {
		v.MissingRateDays = days(r.MissingDays)
	}
	if r.Complete {
		g, c := wire.Number(domain.FormatMinor(r.GGR, r.Scale)), wire.Number(domain.FormatMinor(r.Commission, r.Scale))
		v.GGR, v.Commission = &g, &c
	}
	return v
}
