// Package statements serves the closed periods' statements
// (docs/statements.md): a client's list and each statement as JSON (with
// the signed record an auditor verifies), CSV, or a printable HTML page;
// and, for the admin API, closing a period.
package statements

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/statement"
)

// Reader reads stored statements (auditstore.Statements).
type Reader interface {
	List(ctx context.Context, client, provider string, page, perPage int) ([]statement.Signed, int, error)
	Get(ctx context.Context, client, id string) (statement.Signed, error)
}

// Paging of the lists.
const (
	defaultPerPage = 50
	maxPerPage     = 200
)

// View is a statement as the API answers it: the payload's figures as an
// object, and the signed record (the exact bytes, the signature and the
// key) to verify it with.
type View struct {
	ID        string            `json:"id"`
	ClientID  string            `json:"client_id"`
	Provider  string            `json:"provider"`
	Period    string            `json:"period"`
	From      string            `json:"from"`
	To        string            `json:"to"`
	ClosedAt  string            `json:"closed_at"`
	Statement statement.Payload `json:"statement"`
	Signed    statement.Record  `json:"signed"`
}

// ViewOf is s as the API answers it.
func ViewOf(s statement.Signed) (View, error) {
	p, err := statement.Parse(s.Payload)
	if err != nil {
		return View{}, err
	}
	return View{ID: s.ID, ClientID: s.ClientID, Provider: s.Provider, Period: s.Period, From: s.From.Format(time.DateOnly),
		To: s.To.Format(time.DateOnly), ClosedAt: wire.FormatTime(s.ClosedAt), Statement: p, Signed: s.Record()}, nil
}

// Handlers answer the statement routes of one client (the key's, or the
// admin path's).
type Handlers struct{ Store Reader }

func (h Handlers) available() error {
	if h.Store == nil {
		return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "statements are not configured on this server")
	}
	return nil
}

// List answers a page of client's statements, the latest closed first;
// ?provider= keeps one provider's.
func (h Handlers) List(c echo.Context, client string) error {
	if err := h.available(); err != nil {
		return err
	}
	page, err := wire.QueryInt(c, "page", 1, 1<<30)
	if err != nil {
		return err
	}
	perPage, err := wire.QueryInt(c, "per_page", defaultPerPage, maxPerPage)
	if err != nil {
		return err
	}
	provider, _ := wire.QueryValue(c, "provider")
	if provider != "" {
		if err := wire.CheckID("provider", provider); err != nil {
			return err
		}
	}
	list, total, err := h.Store.List(c.Request().Context(), client, provider, page, perPage)
	if err != nil {
		return err
	}
	out := make([]View, 0, len(list))
	for _, s := range list {
		v, err := ViewOf(s)
		if err != nil {
			return err
		}
		out = append(out, v)
	}
	return wire.OKPage(c, out, page, perPage, int64(total))
}

// Get answers client's statement :id as JSON, or as CSV (Accept:
// text/csv) or a printable HTML page (Accept: text/html).
func (h Handlers) Get(c echo.Context, client string) error {
	if err := h.available(); err != nil {
		return err
	}
	id := c.Param("id")
	if !wire.IsUUID(id) {
		return wire.NewError(http.StatusNotFound, wire.CodeNotFound, "no such statement")
	}
	s, err := h.Store.Get(c.Request().Context(), client, id)
	if errors.Is(err, domain.ErrNotFound) {
		return wire.NewError(http.StatusNotFound, wire.CodeNotFound, "no such statement")
	}
	if err != nil {
		return err
	}
	v, err := ViewOf(s)
	if err != nil {
		return err
	}
	switch wire.Accepted(c, "text/csv", "text/html") {
	case "text/csv":
		return writeCSV(c, v)
	case "text/html":
		return writeHTML(c, v)
	}
	return wire.OK(c, v)
}

// CSVColumns are a statement's CSV columns: one row per line (kind line),
// late change (late) and total (total); every row ends with the client's
// verifiable log at the statement's position (empty when it has none).
var CSVColumns = []string{"statement_id", "client_id", "provider", "from", "to", "kind", "currency", "of_statement", "of_from", "of_to",
	"bets", "bet_refunds", "wins", "win_reversals", "ggr", "promo_ggr", "jackpot_ggr", "rounds", "players", "rate", "rate_changed",
	"commission", "log_size", "log_root"}

func writeCSV(c echo.Context, v View) error {
	w := wire.StartCSV(c, "statement-"+v.ID)
	_ = w.Write(CSVColumns)
	p := v.Statement
	head := []string{p.ID, p.ClientID, p.Provider, p.From, p.To}
	logSize := ""
	if p.LogSize > 0 {
		logSize = itoa(p.LogSize)
	}
	row := func(rest ...string) {
		_ = w.Write(append(append(append([]string(nil), head...), rest...), logSize, p.LogRoot))
	}
	for _, l := range p.Lines {
		changed := "false"
		if l.RateChanged {
			changed = "true"
		}
		row("line", l.Currency, "", "", "", l.Bets, l.BetRefunds, l.Wins, l.WinReversals, l.GGR, l.PromoGGR, l.JackpotGGR,
			itoa(l.Rounds), itoa(l.Players), l.Rate, changed, l.Commission)
	}
	for _, l := range p.Late {
		row("late", l.Currency, l.StatementID, l.From, l.To, "", "", "", "", l.GGR, "", "", "", "", "", "", l.Commission)
	}
	for _, t := range p.Totals {
		row("total", t.Currency, "", "", "", "", "", "", "", t.GGR, "", "", "", "", "", "", t.Commission)
	}
	return w.Close()
}
