package api

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/projections"
	"github.com/pitboss/pitboss/reconcile"
)

// Reconciliation of a provider's or an operator's daily file with the
// ledger (docs/reconciliation.md).

// MaxReconcileFileBytes bounds a reconciliation's file.
const MaxReconcileFileBytes = 16 << 20

// maxReconcileLedgerRows bounds the ledger's rows of one day read for a
// reconciliation.
const maxReconcileLedgerRows = 2 * reconcile.MaxFileRows

type reconcileSide struct {
	Line     int         `json:"line,omitempty"`
	ID       string      `json:"id,omitempty"`
	Amount   wire.Number `json:"amount"`
	Currency string      `json:"currency"`
	Type     string      `json:"type,omitempty"`
	Status   string      `json:"status,omitempty"`
	Position int64       `json:"position,omitempty"`
}

type reconcileDiff struct {
	Kind          string         `json:"kind"`
	TransactionID string         `json:"transaction_id"`
	File          *reconcileSide `json:"file"`
	Ledger        *reconcileSide `json:"ledger"`
}

type currencyAmount struct {
	Currency string      `json:"currency"`
	Amount   wire.Number `json:"amount"`
}

type reconcileView struct {
	Day          string           `json:"day"`
	Provider     *string          `json:"provider"`
	FileRows     int64            `json:"file_rows"`
	LedgerRows   int64            `json:"ledger_rows"`
	Matched      int64            `json:"matched"`
	Counts       map[string]int64 `json:"counts"`
	FileTotals   []currencyAmount `json:"file_totals"`
	LedgerTotals []currencyAmount `json:"ledger_totals"`
	Differences  []reconcileDiff  `json:"differences"`
	Truncated    bool             `json:"truncated"`
}

// POST /api/v1/reconciliations?day=&provider=&columns=&statuses=&currency=&signed=
// with the file as text/csv: the differences between the file and the
// client's ledger of that UTC day.
func (s *Server) reconcile(c echo.Context) error {
	q, err := s.queries()
	if err != nil {
		return err
	}
	day, ok, err := wire.QueryDay(c, "day")
	if err != nil {
		return err
	}
	if !ok {
		return queryParamError("day", "day is required: the file's UTC day, such as 2026-11-25")
	}
	provider, _ := wire.QueryValue(c, "provider")
	if provider != "" {
		if err := domain.ValidateID("provider", provider); err != nil {
			return queryParamError("provider", "%v", err)
		}
	}
	signed := false
	if v, ok := wire.QueryValue(c, "signed"); ok {
		if signed, err = strconv.ParseBool(v); err != nil {
			return queryParamError("signed", "signed must be true or false")
		}
	}
	columns, _ := wire.QueryValue(c, "columns")
	statuses, _ := wire.QueryValue(c, "statuses")
	currency, _ := wire.QueryValue(c, "currency")
	m, err := reconcile.ParseMapping(columns, statuses, currency, signed)
	if err != nil {
		return err
	}
	if mt, _, _ := mime.ParseMediaType(c.Request().Header.Get(echo.HeaderContentType)); mt != "text/csv" {
		return &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidRequest,
			Message: "send the file as Content-Type: text/csv", Details: map[string]any{"header": echo.HeaderContentType}}
	}
	releaseClient, err := s.uploads.client(wire.Principal(c).ClientID)
	if err != nil {
		return err
	}
	defer releaseClient()
	releaseCompare, err := s.uploads.compare()
	if err != nil {
		return err
	}
	defer releaseCompare()
	minPos, err := minPosition(c)
	if err != nil {
		return err
	}
	ledger, pos, err := s.ledgerOfDay(c, q, day, provider, minPos)
	if err != nil {
		return err
	}
	// The file is compared as it is read, a row at a time: never held
	// whole (docs/reconciliation.md).
	cmp := reconcile.NewComparer(ledger, m)
	_, err = reconcile.ReadFile(http.MaxBytesReader(c.Response(), c.Request().Body, MaxReconcileFileBytes), m, cmp.Add)
	if err != nil {
		return reconcileReadError(err)
	}
	setPosition(c, pos)
	return wire.OK(c, viewOfReconciliation(cmp.Report(), day.Format(time.DateOnly), provider))
}

// reconcileReadError is the answer to a file that could not be read: 413
// naming the limit it passed, else the file's own error (400 naming the
// line).
func reconcileReadError(err error) error {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return &wire.Error{Status: http.StatusRequestEntityTooLarge, Code: wire.CodeBodyTooLarge,
			Message: fmt.Sprintf("the file is larger than %d bytes: split it", MaxReconcileFileBytes),
			Details: map[string]any{"limit_bytes": MaxReconcileFileBytes}}
	case errors.Is(err, reconcile.ErrTooManyRows):
		return &wire.Error{Status: http.StatusRequestEntityTooLarge, Code: wire.CodeBodyTooLarge,
			Message: fmt.Sprintf("the file has more than %d rows: split it", reconcile.MaxFileRows),
			Details: map[string]any{"limit_rows": reconcile.MaxFileRows}}
	}
	var fe *domain.FieldError
	if errors.As(err, &fe) {
		return err
	}
	return wire.NewError(http.StatusBadRequest, wire.CodeInvalidRequest, "could not read the file: "+err.Error())
}

// ledgerOfDay reads the client's history rows of day (of provider, if
// given) that carry a transaction id of the provider's or the operator's.
func (s *Server) ledgerOfDay(c echo.Context, q *projections.Queries, day time.Time, provider string, minPos int64) (
	[]reconcile.LedgerRow, int64, error) {
	f := projections.TransactionFilter{ClientID: wire.Principal(c).ClientID, Provider: provider, From: day, To: day.AddDate(0, 0, 1)}
	var (
		out []reconcile.LedgerRow
		pos int64
	)
	for page := 1; ; page++ {
		res, p, err := q.History(c.Request().Context(), f, projections.Page{Number: page, Size: MaxPerPage}, minPos)
		if err != nil {
			return nil, 0, err
		}
		if page == 1 {
			pos = p
		}
		for _, t := range res.Rows {
			if t.ExternalTxID == "" || t.Type == projections.TypeGameResult || t.Position > pos {
				continue // not a transaction of theirs, or after the position the answer reports
			}
			out = append(out, reconcile.LedgerRow{ID: t.ID, TransactionID: t.ExternalTxID, Amount: t.Amount,
				Currency: t.Currency, Type: string(t.Type), Status: string(t.Status), Position: t.Position})
		}
		if len(out) > maxReconcileLedgerRows {
			return nil, 0, queryParamError("day", "the ledger has more than %d transactions that day: reconcile per provider", maxReconcileLedgerRows)
		}
		if len(res.Rows) < MaxPerPage {
			return out, pos, nil
		}
	}
}

func viewOfReconciliation(rep reconcile.Report, day, provider string) reconcileView {
	v := reconcileView{Day: day, FileRows: rep.FileRows, LedgerRows: rep.LedgerRows, Matched: rep.Matched,
		Counts: rep.Counts, FileTotals: totalsView(rep.FileTotals), LedgerTotals: totalsView(rep.LedgerTotals),
		Differences: make([]reconcileDiff, 0, len(rep.Differences)), Truncated: rep.Truncated}
	if provider != "" {
		v.Provider = &provider
	}
	for _, d := range rep.Differences {
		rd := reconcileDiff{Kind: d.Kind, TransactionID: d.TransactionID}
		if f := d.File; f != nil {
			rd.File = &reconcileSide{Line: f.Line, Amount: wire.Number(formatIn(f.Amount, f.Currency)), Currency: f.Currency,
				Type: f.Type, Status: f.Status}
		}
		if l := d.Ledger; l != nil {
			rd.Ledger = &reconcileSide{ID: l.ID, Amount: wire.Number(formatIn(l.Amount, l.Currency)), Currency: l.Currency,
				Type: l.Type, Status: l.Status, Position: l.Position}
		}
		v.Differences = append(v.Differences, rd)
	}
	return v
}

func totalsView(m map[string]int64) []currencyAmount {
	out := make([]currencyAmount, 0, len(m))
	for cur, v := range m {
		out = append(out, currencyAmount{Currency: cur, Amount: wire.Number(formatIn(v, cur))})
	}
	slices.SortFunc(out, func(a, b currencyAmount) int { return strings.Compare(a.Currency, b.Currency) })
	return out
}

// formatIn formats minor units of a configured currency code.
func formatIn(minor int64, code string) string {
	cur, err := domain.ParseCurrency(code)
	if err != nil {
		return strconv.FormatInt(minor, 10)
	}
	return domain.FormatMinor(minor, cur.Exponent())
}
