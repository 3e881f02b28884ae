package api

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
)

const retryableKey = "retryable_details"

// withRetryable marks a route group whose error bodies carry
// details.retryable.
func withRetryable(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Set(retryableKey, true)
		return next(c)
	}
}

// errorBody is {success:false, error:{code,message,request_id,details?}}.
type errorBody struct {
	Success bool        `json:"success"`
	Error   errorDetail `json:"error"`
}

type errorDetail struct {
	Code      string         `json:"code"`
	Message   string         `json:"message"`
	RequestID string         `json:"request_id"`
	Details   map[string]any `json:"details,omitempty"`
}

// errorHandler is Echo's HTTPErrorHandler: every failure leaves here in the
// one shape.
func (s *Server) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	e, known := wire.Classify(err)
	rid := wire.RequestID(c)
	if !known {
		wire.LogFault(c, s.log, "request failed", err)
	}
	if e.Status == http.StatusTooManyRequests || e.Status == http.StatusServiceUnavailable {
		if ra, ok := e.Details["retry_after_seconds"]; ok {
			c.Response().Header().Set("Retry-After", toString(ra))
		}
	}
	details := e.Details
	if mark, _ := c.Get(retryableKey).(bool); mark {
		details = make(map[string]any, len(e.Details)+1)
		maps.Copy(details, e.Details)
		details["retryable"] = wire.Retryable(e.Code)
	}
	body := errorBody{Error: errorDetail{Code: e.Code, Message: e.Message, RequestID: rid, Details: details}}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(e.Status)
		return
	}
	_ = c.JSON(e.Status, body)
}

// routeMethods are the methods a route can be registered with; HEAD and
// OPTIONS are only listed when a route has them.
var routeMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace}

// methodNotAllowed turns the route groups' 404 for a known path with
// another method into 405 METHOD_NOT_ALLOWED with an Allow header. Echo
// answers 405 itself outside groups, but a group with middleware registers
// a catch-all not-found route ("/api/v1/*") that its router prefers to a
// 405, so DELETE /api/v1/transactions would be 404. Only the router's own
// echo.ErrNotFound is looked at (handlers answer *wire.Error), and only after
// the group's middleware ran: under /api/v1 an unauthenticated request is
// still 401 first.
func (s *Server) methodNotAllowed(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := next(c)
		if err == nil || !errors.Is(err, echo.ErrNotFound) {
			return err
		}
		allow := s.allowedMethods(c.Request())
		if len(allow) == 0 {
			return err
		}
		c.Response().Header().Set(echo.HeaderAllow, strings.Join(allow, ", "))
		return &wire.Error{Status: http.StatusMethodNotAllowed, Code: wire.CodeMethodNotAllowed,
			Message: c.Request().Method + " is not allowed on this route; allowed: " + strings.Join(allow, ", "), Err: err}
	}
}

// allowedMethods lists the methods with a real route (not a group's
// not-found route) for the request's path.
func (s *Server) allowedMethods(r *http.Request) []string {
	// Computed per call: this only runs on a 404, and routes other
	// packages add to the Echo instance later are seen.
	real := map[string]bool{}
	for _, rt := range s.echo.Routes() {
		if rt.Method != echo.RouteNotFound {
			real[rt.Method+" "+rt.Path] = true
		}
	}
	path := echo.GetPath(r)
	var allow []string
	for _, m := range routeMethods {
		if m == r.Method {
			continue
		}
		c := s.echo.NewContext(r, nil)
		s.echo.Router().Find(m, path, c)
		if real[m+" "+c.Path()] {
			allow = append(allow, m)
		}
	}
	return allow
}

// toString is a detail value as header text (Retry-After).
func toString(v any) string {
	switch x := v.(type) {
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case string:
		return x
	}
	return fmt.Sprint(v)
}
