package wire

import (
	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/gateway"
)

// Keys of what the server's middleware (package api) stores on a request
// for the handlers of every package.
const (
	requestIDKey = "request_id"
	principalKey = "principal"
)

// SetRequestID records the request's id (X-Request-Id) for RequestID.
func SetRequestID(c echo.Context, id string) { c.Set(requestIDKey, id) }

// RequestID is the request's id: in every error body and log line.
func RequestID(c echo.Context) string {
	rid, _ := c.Get(requestIDKey).(string)
	return rid
}

// SetPrincipal records the authenticated API key for Principal.
func SetPrincipal(c echo.Context, p gateway.Principal) { c.Set(principalKey, p) }

// Principal is the API key the request was authenticated with; the zero
// Principal on routes without key authentication.
func Principal(c echo.Context) gateway.Principal {
	p, _ := c.Get(principalKey).(gateway.Principal)
	return p
}
