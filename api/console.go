package api

import (
	"encoding/hex"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/deliveries"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/audit"
	"github.com/pitboss/pitboss/console"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/projections"
)

// The console (docs/console.md): the static pages at /console/ and the
// few JSON routes they need that the rest of the API does not give.

// ConsolePath is where the console is served.
const ConsolePath = "/console/"

// overviewFailedDeliveries is how many parked deliveries the overview lists.
const overviewFailedDeliveries = 5

// registerConsoleRoutes adds the console's pages to e and its JSON routes
// to the authenticated /api/v1 group.
func (s *Server) registerConsoleRoutes(e *echo.Echo, v1 *echo.Group) {
	v1.GET("/me", s.consoleMe)
	v1.GET("/console/overview", s.consoleOverview, requireScope(gateway.ScopeReportsRead))
	v1.GET("/transactions/:id", s.transactionDetail, requireScope(gateway.ScopeTransactionsRead))
	v1.GET("/audit/head", s.auditHead, requireScope(gateway.ScopeAuditRead))

	e.GET("/console", func(c echo.Context) error { return c.Redirect(http.StatusMovedPermanently, ConsolePath) })
	e.GET(ConsolePath+"*", echo.WrapHandler(http.StripPrefix("/console", console.Handler())))
}

// meView is GET /api/v1/me: who the key is and what it may do, so the
// console shows only the pages the key's scopes allow.
type meView struct {
	ClientID    string   `json:"client_id"`
	KeyID       string   `json:"key_id"`
	Environment string   `json:"environment"`
	Plan        string   `json:"plan"`
	Scopes      []string `json:"scopes"`
}

// consoleMe answers GET /api/v1/me. Any valid key may ask; no scope.
func (s *Server) consoleMe(c echo.Context) error {
	p := wire.Principal(c)
	scopes := p.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	return wire.OK(c, meView{ClientID: p.ClientID, KeyID: p.KeyID, Environment: p.Environment, Plan: p.Plan, Scopes: scopes})
}

// overviewDay is one currency's totals of the day: gross bets and wins,
// GGR (net bets less net wins, real money), rounds and players.
type overviewDay struct {
	Currency string      `json:"currency"`
	Bets     wire.Number `json:"bets"`
	Wins     wire.Number `json:"wins"`
	GGR      wire.Number `json:"ggr"`
	Rounds   int64       `json:"rounds"`
	Players  int64       `json:"players"`
}

type overviewRelayLag struct {
	Name                string      `json:"name"`
	Position            int64       `json:"position"`
	BehindEvents        int64       `json:"behind_events"`
	LagSeconds          wire.Number `json:"lag_seconds"`
	OldestUnpublishedAt *string     `json:"oldest_unpublished_at"`
}

type overviewProjectionLag struct {
	Name              string      `json:"name"`
	Position          int64       `json:"position"`
	BehindEvents      int64       `json:"behind_events"`
	LagSeconds        wire.Number `json:"lag_seconds"`
	OldestUnappliedAt *string     `json:"oldest_unapplied_at"`
}

type overviewLag struct {
	Head        int64                   `json:"head"`
	Relays      []overviewRelayLag      `json:"relays"`
	Projections []overviewProjectionLag `json:"projections"`
}

// overviewView is GET /api/v1/console/overview. A part the key's scopes
// do not cover is null: balances need wallet:read, failed deliveries
// deliveries:read.
type overviewView struct {
	Day      string        `json:"day"`
	Position int64         `json:"position"`
	Today    []overviewDay `json:"today"`
	// Balances are the client's own wallets (not its players').
	Balances              []currencyTotal   `json:"balances"`
	Lag                   *overviewLag      `json:"lag"`
	FailedDeliveries      []deliveries.View `json:"failed_deliveries"`
	FailedDeliveriesTotal *int64            `json:"failed_deliveries_total"`
}

// lagSeconds formats a wait as seconds with millisecond precision (text,
// like every other number the API computes).
func lagSeconds(now time.Time, since *time.Time) wire.Number {
	if since == nil {
		return "0.000"
	}
	ms := max(0, now.Sub(*since).Milliseconds())
	return wire.Number(strconv.FormatInt(ms/1000, 10) + "." + strconv.FormatInt(1000+ms%1000, 10)[1:])
}

// consoleOverview answers GET /api/v1/console/overview?day=: the day's
// (UTC, default today) bets, wins and GGR per currency, the client's
// wallet balances, the relay and projection lag, and the latest parked
// deliveries.
func (s *Server) consoleOverview(c echo.Context) error {
	q, err := s.queries()
	if err != nil {
		return err
	}
	now := s.now().UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	if vs, ok := c.QueryParams()["day"]; ok {
		if day, err = wire.ParseDay("day", vs[0]); err != nil {
			return err
		}
	}
	minPos, err := minPosition(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	p := wire.Principal(c)
	rows, pos, err := q.GGR(ctx, projections.ReportQuery{ClientID: p.ClientID, From: day, To: day,
		GroupBy: []projections.Dimension{projections.DimCurrency}}, minPos)
	if err != nil {
		return err
	}
	v := overviewView{Day: day.Format(time.DateOnly), Position: pos, Today: make([]overviewDay, 0, len(rows))}
	for _, r := range rows {
		v.Today = append(v.Today, overviewDay{Currency: r.Currency, Bets: wire.Number(domain.FormatMinor(r.Bets, r.Scale)),
			Wins: wire.Number(domain.FormatMinor(r.Wins, r.Scale)), GGR: wire.Number(domain.FormatMinor(r.GGR(), r.Scale)),
			Rounds: r.Rounds, Players: r.Players})
	}
	if p.Has(gateway.ScopeWalletRead) && s.deps.Wallets != nil {
		bals, err := s.deps.Wallets.WalletBalances(ctx, p.ClientID, "")
		if err != nil {
			return err
		}
		v.Balances = make([]currencyTotal, 0, len(bals))
		for _, b := range bals {
			cur, err := domain.ParseCurrency(b.Currency)
			if err != nil {
				return err
			}
			v.Balances = append(v.Balances, currencyTotal{Currency: b.Currency,
				Balance: wire.Number(domain.FromMinor(b.Minor, cur).String()), Position: b.LastPosition})
		}
	}
	if s.deps.Console.Lag != nil {
		lag, err := s.deps.Console.Lag.ClientLag(ctx, p.ClientID)
		if err != nil {
			return err
		}
		ov := &overviewLag{Head: lag.Head, Relays: []overviewRelayLag{}, Projections: []overviewProjectionLag{}}
		for _, r := range lag.Relays {
			ov.Relays = append(ov.Relays, overviewRelayLag{Name: r.Name, Position: r.Position,
				BehindEvents: r.BehindEvents, LagSeconds: lagSeconds(now, r.OldestUnpublishedAt),
				OldestUnpublishedAt: wire.OptionalTime(r.OldestUnpublishedAt)})
		}
		for _, pr := range lag.Projections {
			ov.Projections = append(ov.Projections, overviewProjectionLag{Name: pr.Name, Position: pr.Position,
				BehindEvents: pr.BehindEvents, LagSeconds: lagSeconds(now, pr.OldestUnappliedAt),
				OldestUnappliedAt: wire.OptionalTime(pr.OldestUnappliedAt)})
		}
		v.Lag = ov
	}
	if p.Has(gateway.ScopeDeliveriesRead) && s.deps.Deliveries != nil {
		list, total, err := s.deps.Deliveries.ListDeliveries(ctx, p.ClientID,
			gateway.DeliveryFilter{State: gateway.DeliveryParked, Page: 1, PerPage: overviewFailedDeliveries})
		if err != nil {
			return err
		}
		v.FailedDeliveries = make([]deliveries.View, 0, len(list))
		for _, d := range list {
			v.FailedDeliveries = append(v.FailedDeliveries, deliveries.ViewOf(d, false))
		}
		v.FailedDeliveriesTotal = &total
	}
	setPosition(c, pos)
	return wire.OK(c, v)
}

// transactionDetailView is GET /api/v1/transactions/{id}: the row as the
// list shows it, with the ledger events behind it (the export's record
// shape: exact body, prev_hash and hash).
type transactionDetailView struct {
	transactionItem
	Events []audit.Record `json:"events"`
}

func itemOfTransaction(t projections.Transaction) transactionItem {
	it := transactionItem{ID: t.ID, Type: string(t.Type), Amount: wire.Number(domain.FormatMinor(t.Amount, t.Scale)),
		Currency: t.Currency, Status: string(t.Status), CreatedAt: t.CreatedAt.UTC().Format(time.RFC3339Nano),
		Provider: optional(t.Provider), Game: optional(t.Game), PlayerID: optional(t.PlayerID),
		RoundID: optional(t.RoundID), ExternalTxID: optional(t.ExternalTxID), ReferenceTx: optional(t.ReferenceTx),
		Promo: t.Promo, CampaignID: optional(t.CampaignID), RewardID: optional(t.RewardID), Position: t.Position}
	if t.Jackpot != 0 {
		j := wire.Number(domain.FormatMinor(t.Jackpot, t.Scale))
		it.Jackpot = &j
	}
	if t.HasBalanceAfter {
		it.BalanceAfter = wire.Number(domain.FormatMinor(t.BalanceAfter, t.Scale))
	}
	return it
}

// transactionDetail answers GET /api/v1/transactions/{id}. The id is the
// row's id from the list (a UUID); anything else is 400.
func (s *Server) transactionDetail(c echo.Context) error {
	if s.deps.Console.Details == nil {
		return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "transaction details are not configured on this server")
	}
	id := c.Param("id")
	if !wire.IsUUID(id) {
		return queryParamError("id", "id must be a transaction id from GET /api/v1/transactions (a UUID)")
	}
	if err := s.ledgerPosition(c); err != nil {
		return err
	}
	d, err := s.deps.Console.Details.TransactionDetail(c.Request().Context(), wire.Principal(c).ClientID, id)
	if err != nil {
		// The position describes an answer; an error has none.
		c.Response().Header().Del(HeaderLedgerPosition)
		return err
	}
	v := transactionDetailView{transactionItem: itemOfTransaction(d.Transaction), Events: d.Events}
	if v.Events == nil {
		v.Events = []audit.Record{}
	}
	return wire.OK(c, v)
}

// verifyCheckView is one check of a verification as a client is shown it:
// its outcome, without the platform's row counts and notes (they would
// show every client's volume).
type verifyCheckView struct {
	Name     string `json:"name"`
	OK       bool   `json:"ok"`
	Failures int64  `json:"failures"`
	Skipped  string `json:"skipped,omitempty"`
}

// verifyRunView is the last verification as a client is shown it: the
// verdict of the whole chain, and the client's own part of it (how many of
// its events were verified and its last one there). The part is null for a
// run recorded before per-client parts existed.
type verifyRunView struct {
	OK           bool              `json:"ok"`
	StartedAt    string            `json:"started_at"`
	FinishedAt   string            `json:"finished_at"`
	Events       *int64            `json:"events"`
	HeadPosition *int64            `json:"head_position"`
	HeadHash     *string           `json:"head_hash"`
	Checks       []verifyCheckView `json:"checks"`
}

// verifyRunOf is rep as clientID is shown it.
func verifyRunOf(rep audit.Report, clientID string) *verifyRunView {
	run := &verifyRunView{OK: rep.OK, StartedAt: wire.FormatTime(rep.StartedAt),
		FinishedAt: wire.FormatTime(rep.FinishedAt), Checks: []verifyCheckView{}}
	if span, found := rep.Client(clientID); found {
		run.Events, run.HeadPosition = &span.Events, &span.HeadPosition
		if span.Events > 0 {
			run.HeadHash = &span.HeadHash
		} else {
			empty := ""
			run.HeadHash = &empty
		}
	}
	for _, ch := range rep.Checks {
		run.Checks = append(run.Checks, verifyCheckView{Name: ch.Name, OK: ch.OK, Failures: ch.Failures, Skipped: ch.Skipped})
	}
	return run
}

// auditHeadView is GET /api/v1/audit/head.
type auditHeadView struct {
	// Position and Hash are the client's own head: its last event's
	// position and the chain's hash there. Record them to anchor a later
	// verification.
	Position int64  `json:"position"`
	Hash     string `json:"hash"`
	// LastVerify is the latest recorded `pitboss verify` run, as the
	// client is shown it (verifyRunView); null when none was recorded.
	LastVerify *verifyRunView `json:"last_verify"`
	// EventsPath is where the client's own events are exported from
	// (GET /api/v1/audit/events, paged by position).
	EventsPath string `json:"events_path"`
}

// auditHead answers GET /api/v1/audit/head: the chain head, the last
// verification and where the export is.
func (s *Server) auditHead(c echo.Context) error {
	if s.deps.Audit == nil {
		return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "the audit log is not configured on this server")
	}
	ctx := c.Request().Context()
	// A page after the last possible position: no events, just the head.
	page, err := s.deps.Audit.ClientEvents(ctx, wire.Principal(c).ClientID, math.MaxInt64, 1)
	if err != nil {
		return err
	}
	v := auditHeadView{Position: page.HeadPosition, Hash: hex.EncodeToString(page.HeadHash), EventsPath: "/api/v1/audit/events"}
	if s.deps.Console.Verifications != nil {
		rep, found, err := s.deps.Console.Verifications.LastRun(ctx)
		if err != nil {
			return err
		}
		if found {
			v.LastVerify = verifyRunOf(rep, wire.Principal(c).ClientID)
		}
	}
	setPosition(c, page.HeadPosition)
	return wire.OK(c, v)
}
