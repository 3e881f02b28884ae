package api

import (
	"errors"
	"net"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// environmentOf tells which environment a request reached by its host:
// sandbox and production are served at different base addresses.
func (s *Server) environmentOf(r *http.Request) string {
	if env, ok := s.cfg.HostEnvironments[normalHost(r.Host)]; ok {
		return env
	}
	return s.cfg.DefaultEnvironment
}

// normalHost is a host as the environment table keys it: without a port,
// in lower case, without the trailing dot of a fully qualified name, so
// API.PITBOSS.LOCAL.:443 is api.pitboss.local. Every spelling of one host
// reaches one environment; none falls through to the default.
func normalHost(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// authMiddleware checks Authorization: Bearer <API_KEY>. A missing,
// malformed, unknown, revoked or expired key, or a key used at the other
// environment's address, is 401.
func (s *Server) authMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Request().Header.Get(echo.HeaderAuthorization)
		scheme, key, found := strings.Cut(h, " ")
		if !found || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(key) == "" {
			return wire.NewError(http.StatusUnauthorized, wire.CodeUnauthorized, "missing API key: send Authorization: Bearer <API_KEY>")
		}
		p, err := s.deps.Keys.AuthenticateKey(c.Request().Context(), gateway.HashKey(strings.TrimSpace(key)))
		if errors.Is(err, domain.ErrNotFound) {
			return wire.NewError(http.StatusUnauthorized, wire.CodeUnauthorized, "invalid API key")
		}
		if err != nil {
			return err
		}
		if env := s.environmentOf(c.Request()); p.Environment != env {
			return wire.NewError(http.StatusUnauthorized, wire.CodeUnauthorized,
				"this is a "+p.Environment+" key; it is not valid at the "+env+" address")
		}
		wire.SetPrincipal(c, p)
		return next(c)
	}
}

// requireScope answers 403 when the key lacks scope.
func requireScope(scope string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if !wire.Principal(c).Has(scope) {
				return &wire.Error{Status: http.StatusForbidden, Code: wire.CodeForbidden,
					Message: "this API key lacks the " + scope + " scope", Details: map[string]any{"scope": scope}}
			}
			return next(c)
		}
	}
}
