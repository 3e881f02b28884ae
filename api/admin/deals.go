package admin

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// Commission deals as data (docs/finance.md): a deal is never changed in
// place; each change is a new version with its own valid_from, recorded
// with the admin actor. A version may not start before today (UTC) — that
// would change reports already read, perhaps already invoiced — unless the
// request says "backdate": true, which the history records; and never in
// a closed period (a statement's), which the store refuses.

type bandView struct {
	From string `json:"from"`
	To   string `json:"to,omitempty"`
	Rate string `json:"rate"`
}

type dealView struct {
	ID           int64      `json:"id"`
	Provider     string     `json:"provider"`
	ClientID     *string    `json:"client_id"` // null: the provider's default
	Currency     *string    `json:"currency"`  // null: every currency
	ValidFrom    string     `json:"valid_from"`
	Kind         string     `json:"kind"`
	Rate         *string    `json:"rate,omitempty"`
	Mode         *string    `json:"mode,omitempty"`
	Bands        []bandView `json:"bands,omitempty"`
	CarryForward bool       `json:"carry_forward"`
	CreatedAt    string     `json:"created_at"`
	Actor        string     `json:"actor"`
	Backdated    bool       `json:"backdated"`
	Note         string     `json:"note"`
	// Status is "current" or "scheduled" in the list of deals.
	Status string `json:"status,omitempty"`
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func viewOfDeal(v domain.DealVersion) dealView {
	s := v.Deal.Spec()
	out := dealView{ID: v.ID, Provider: s.Provider, ClientID: optional(s.ClientID), Currency: optional(s.Currency),
		ValidFrom: s.ValidFrom, Kind: s.Kind, Rate: optional(s.Rate), Mode: optional(s.Mode), CarryForward: s.CarryForward,
		CreatedAt: wire.FormatTime(v.CreatedAt), Actor: v.Actor, Backdated: v.Backdated, Note: v.Note}
	for _, b := range s.Bands {
		out.Bands = append(out.Bands, bandView(b))
	}
	return out
}

type dealRequest struct {
	Provider     string     `json:"provider"`
	ClientID     string     `json:"client_id"`
	Currency     string     `json:"currency"`
	ValidFrom    string     `json:"valid_from"`
	Kind         string     `json:"kind"`
	Rate         string     `json:"rate"`
	Mode         string     `json:"mode"`
	Bands        []bandView `json:"bands"`
	CarryForward bool       `json:"carry_forward"`
	Backdate     bool       `json:"backdate"`
	Note         string     `json:"note"`
}

// requireDeals answers 503 when the deal store is missing.
func (s *server) requireDeals() error {
	if s.deps.Deals == nil {
		return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "commission deals are not configured")
	}
	return nil
}

// POST /admin/v1/deals: a new deal version, answered as stored (200).
func (s *server) createDeal(c echo.Context) error {
	if err := s.requireDeals(); err != nil {
		return err
	}
	var req dealRequest
	if err := wire.BindJSON(c, &req); err != nil {
		return err
	}
	spec := domain.DealSpec{Provider: req.Provider, ClientID: req.ClientID, Currency: req.Currency, ValidFrom: req.ValidFrom,
		Kind: req.Kind, Rate: req.Rate, Mode: req.Mode, CarryForward: req.CarryForward}
	for _, b := range req.Bands {
		spec.Bands = append(spec.Bands, domain.BandSpec(b))
	}
	deal, err := domain.NewDeal(spec)
	if err != nil {
		return err
	}
	if err := domain.CheckText("note", req.Note, domain.MaxDealNoteLength); err != nil {
		return err
	}
	now := s.now().UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	backdated := deal.ValidFrom.Before(today)
	if backdated && !req.Backdate {
		return &domain.FieldError{Field: "valid_from", Message: fmt.Sprintf(
			"valid_from %s is before today (%s UTC): a deal version that starts in the past changes reports already read; send \"backdate\": true to mean it",
			req.ValidFrom, today.Format(time.DateOnly))}
	}
	ctx := c.Request().Context()
	if req.ClientID != "" && s.deps.Clients != nil {
		if _, err := s.deps.Clients.GetClient(ctx, req.ClientID); errors.Is(err, domain.ErrNotFound) {
			return &domain.FieldError{Field: "client_id", Message: fmt.Sprintf("no client %q", req.ClientID)}
		} else if err != nil {
			return err
		}
	}
	v, err := s.deps.Deals.AddDealVersion(ctx, domain.DealVersion{Deal: deal, Actor: s.actor, Backdated: backdated, Note: req.Note})
	if err != nil {
		return err
	}
	s.log.InfoContext(ctx, "admin: commission deal version added", "deal_version", v.ID, "provider", v.Deal.Provider,
		"client_id", v.Deal.ClientID, "currency", v.Deal.Currency, "valid_from", req.ValidFrom, "kind", req.Kind,
		"backdated", backdated, "actor", s.actor, "request_id", wire.RequestID(c))
	return wire.OK(c, viewOfDeal(v))
}

// dealFilter reads ?provider=&client_id=.
func dealFilter(c echo.Context) (gateway.DealFilter, error) {
	var f gateway.DealFilter
	f.Provider, _ = wire.QueryValue(c, "provider")
	f.ClientID, _ = wire.QueryValue(c, "client_id")
	if f.Provider != "" && domain.ValidateID("provider", f.Provider) != nil {
		return f, &domain.FieldError{Field: "provider", Message: "provider: 1 to 128 characters of A-Z a-z 0-9 . _ @ -"}
	}
	if f.ClientID != "" && domain.ValidateID("client_id", f.ClientID) != nil {
		return f, &domain.FieldError{Field: "client_id", Message: "client_id: 1 to 128 characters of A-Z a-z 0-9 . _ @ -"}
	}
	return f, nil
}

// GET /admin/v1/deals?provider=&client_id=&with_defaults=: the versions in
// effect today and the ones scheduled after it, per deal.
func (s *server) listDeals(c echo.Context) error {
	if err := s.requireDeals(); err != nil {
		return err
	}
	f, err := dealFilter(c)
	if err != nil {
		return err
	}
	if v, ok := wire.QueryValue(c, "with_defaults"); ok {
		switch v {
		case "true":
			f.WithDefaults = true
		case "false":
		default:
			return &domain.FieldError{Field: "with_defaults", Message: "with_defaults is true or false"}
		}
	}
	versions, err := s.deps.Deals.DealVersions(c.Request().Context(), f)
	if err != nil {
		return err
	}
	now := s.now().UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	out := []dealView{}
	for _, v := range domain.CurrentDeals(versions, today) {
		dv := viewOfDeal(v)
		dv.Status = "current"
		if v.Deal.ValidFrom.After(today) {
			dv.Status = "scheduled"
		}
		out = append(out, dv)
	}
	return wire.OK(c, out)
}

// GET /admin/v1/deals/history?provider=&client_id=&page=&per_page=: every
// version, newest first.
func (s *server) dealHistory(c echo.Context) error {
	if err := s.requireDeals(); err != nil {
		return err
	}
	f, err := dealFilter(c)
	if err != nil {
		return err
	}
	page, perPage, err := pageParams(c)
	if err != nil {
		return err
	}
	list, total, err := s.deps.Deals.DealHistory(c.Request().Context(), f, page, perPage)
	if err != nil {
		return err
	}
	out := make([]dealView, 0, len(list))
	for _, v := range list {
		out = append(out, viewOfDeal(v))
	}
	return wire.OKPage(c, out, page, perPage, total)
}
