package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/statements"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/projections"
	"github.com/pitboss/pitboss/statement"
)

// StatementCloser closes a period into a statement (statement.Closer).
type StatementCloser interface {
	Close(ctx context.Context, r statement.Request) (statement.Signed, error)
}

// Providers knows the providers a statement may be closed for.
type Providers interface {
	Provider(ctx context.Context, id string) (gateway.Provider, error)
}

func (s *server) requireStatements() error {
	if s.deps.Statements == nil || s.deps.StatementStore == nil || s.deps.Providers == nil {
		return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "statements are not configured on this server")
	}
	return nil
}

type closeRequest struct {
	Provider          string `json:"provider"`
	Period            string `json:"period"`
	Start             string `json:"start"`
	ReportingCurrency string `json:"reporting_currency"`
}

// closeStatement answers POST /admin/v1/clients/{client}/statements: it
// closes a period (a month or a day that has ended, UTC) of the client at
// a provider into a signed statement (docs/statements.md).
func (s *server) closeStatement(c echo.Context) error {
	if err := s.requireStatements(); err != nil {
		return err
	}
	client, err := s.knownClient(c)
	if err != nil {
		return err
	}
	var req closeRequest
	if err := wire.BindJSON(c, &req); err != nil {
		return err
	}
	for _, f := range []struct{ name, v string }{{"provider", req.Provider}, {"period", req.Period}, {"start", req.Start}} {
		if err := wire.RequireField(f.name, f.v); err != nil {
			return err
		}
	}
	if _, err := s.deps.Providers.Provider(c.Request().Context(), req.Provider); errors.Is(err, domain.ErrNotFound) ||
		domain.ValidateID("provider", req.Provider) != nil {
		return wire.InvalidField("provider", fmt.Sprintf("provider %q is not a known provider", gateway.ClipValue(req.Provider)))
	} else if err != nil {
		return err
	}
	if req.Period != statement.PeriodMonth && req.Period != statement.PeriodDay {
		return wire.InvalidField("period", "period must be month or day")
	}
	from, to, err := statement.ParsePeriod(req.Period, req.Start)
	if err != nil {
		return wire.InvalidField("start", err.Error())
	}
	// A period the database cannot hold (year 0) is the caller's error,
	// never a 500 from the query (SQLSTATE 22008).
	if err := wire.CheckTimeRange("start", from); err != nil {
		return err
	}
	if err := wire.CheckTimeRange("start", to); err != nil {
		return err
	}
	r := statement.Request{ClientID: client, Provider: req.Provider, Period: req.Period, Start: req.Start, Actor: s.actor}
	if req.ReportingCurrency != "" {
		cur, err := domain.ParseCurrency(req.ReportingCurrency)
		if err != nil {
			return wire.InvalidField("reporting_currency", fmt.Sprintf("reporting_currency %q is not a configured currency",
				gateway.ClipValue(req.ReportingCurrency)))
		}
		r.Reporting = &cur
	}
	signed, err := s.deps.Statements.Close(c.Request().Context(), r)
	switch {
	case errors.Is(err, statement.ErrNotEnded):
		return wire.NewError(http.StatusConflict, wire.CodePeriodNotEnded, err.Error())
	case errors.Is(err, statement.ErrClosed):
		return wire.NewError(http.StatusConflict, wire.CodePeriodClosed, err.Error())
	case errors.Is(err, statement.ErrOutOfOrder):
		return wire.NewError(http.StatusConflict, wire.CodePeriodOutOfOrder, err.Error())
	case errors.Is(err, statement.ErrConcurrent):
		return wire.NewError(http.StatusConflict, wire.CodeStatementConcurrent, err.Error())
	case errors.Is(err, statement.ErrSigningKey):
		return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, err.Error())
	case errors.Is(err, projections.ErrNoRates):
		return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "exchange rates are not configured on this server")
	case err != nil:
		return err
	}
	v, err := statements.ViewOf(signed)
	if err != nil {
		return err
	}
	s.log.Info("statement closed", "client", client, "provider", req.Provider, "period", req.Period, "start", req.Start,
		"statement", signed.ID, "actor", s.actor)
	return c.JSON(http.StatusCreated, struct {
		Success bool            `json:"success"`
		Data    statements.View `json:"data"`
	}{true, v})
}

// listStatements answers GET /admin/v1/clients/{client}/statements.
func (s *server) listStatements(c echo.Context) error {
	if err := s.requireStatements(); err != nil {
		return err
	}
	client, err := s.knownClient(c)
	if err != nil {
		return err
	}
	return statements.Handlers{Store: s.deps.StatementStore}.List(c, client)
}

// getStatement answers GET /admin/v1/clients/{client}/statements/{id}.
func (s *server) getStatement(c echo.Context) error {
	if err := s.requireStatements(); err != nil {
		return err
	}
	client, err := s.knownClient(c)
	if err != nil {
		return err
	}
	return statements.Handlers{Store: s.deps.StatementStore}.Get(c, client)
}
