package admin

import (
	"bytes"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// Exchange rates as data (docs/reporting-currency.md).

type fxRateView struct {
	Base  string `json:"base"`
	Quote string `json:"quote"`
	Day   string `json:"day"`
	Rate  string `json:"rate"`
}

type putFXRatesRequest struct {
	Rates []fxRateView `json:"rates"`
}

func (s *server) requireFX() error {
	if s.deps.FX == nil {
		return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "exchange rates are not configured")
	}
	return nil
}

// PUT /admin/v1/fx-rates: rates as JSON ({"rates":[{base, quote, day,
// rate}]}) or as CSV (Content-Type: text/csv, a header naming day, base,
// quote and rate); a pair's rate of a day given again replaces it. All or
// nothing: one bad rate refuses the call, naming it.
func (s *server) putFXRates(c echo.Context) error {
	if err := s.requireFX(); err != nil {
		return err
	}
	var rates []domain.FXRate
	if mt, _, _ := mime.ParseMediaType(c.Request().Header.Get(echo.HeaderContentType)); mt == "text/csv" {
		b, err := wire.ReadBody(c)
		if err != nil {
			return err
		}
		if rates, err = gateway.ParseFXRatesCSV(bytes.NewReader(b)); err != nil {
			return err
		}
	} else {
		var req putFXRatesRequest
		if err := wire.BindJSON(c, &req); err != nil {
			return err
		}
		rates = make([]domain.FXRate, 0, len(req.Rates))
		for i, v := range req.Rates {
			r, err := domain.NewFXRate(v.Base, v.Quote, v.Day, v.Rate)
			var fe *domain.FieldError
			if errors.As(err, &fe) {
				return &domain.FieldError{Field: fmt.Sprintf("rates[%d].%s", i, fe.Field), Message: fmt.Sprintf("rates[%d]: %s", i, fe.Message)}
			} else if err != nil {
				return err
			}
			rates = append(rates, r)
		}
		if err := gateway.CheckFXRates(rates); err != nil {
			return err
		}
	}
	n, err := s.deps.FX.UpsertFXRates(c.Request().Context(), rates)
	if err != nil {
		return err
	}
	s.log.InfoContext(c.Request().Context(), "admin: exchange rates stored", "received", len(rates), "written", n,
		"request_id", wire.RequestID(c))
	return wire.OK(c, map[string]int64{"received": int64(len(rates)), "written": n})
}

// GET /admin/v1/fx-rates?base=&quote=&from=&to=&page=&per_page=
func (s *server) listFXRates(c echo.Context) error {
	if err := s.requireFX(); err != nil {
		return err
	}
	page, perPage, err := pageParams(c)
	if err != nil {
		return err
	}
	var f gateway.FXRateFilter
	// Rates are stored for configured currencies only: anything else is a
	// bad filter, not an empty page (and text PostgreSQL cannot hold, such
	// as a NUL byte, was a 500).
	for _, q := range []struct {
		name string
		v    *string
	}{{"base", &f.Base}, {"quote", &f.Quote}} {
		v, ok := wire.QueryValue(c, q.name)
		if !ok {
			continue
		}
		if _, err := domain.ParseCurrency(v); err != nil {
			return &domain.FieldError{Field: q.name, Message: q.name + " must be a configured currency code, such as EUR"}
		}
		*q.v = v
	}
	if f.From, _, err = wire.QueryDay(c, "from"); err != nil {
		return err
	}
	if f.To, _, err = wire.QueryDay(c, "to"); err != nil {
		return err
	}
	list, total, err := s.deps.FX.ListFXRates(c.Request().Context(), f, page, perPage)
	if err != nil {
		return err
	}
	out := make([]fxRateView, 0, len(list))
	for _, r := range list {
		out = append(out, fxRateView{Base: r.Base, Quote: r.Quote, Day: r.Day.Format(time.DateOnly), Rate: r.Rate})
	}
	return wire.OKPage(c, out, page, perPage, total)
}
