package api

import (
	"github.com/labstack/echo/v4"
)

// Handlers of other packages mounted on Echo() — the built-in demo game
// (package demogame), which api does not import — answer in this server's
// shapes through the methods below: *Server implements the port they
// declare (demogame.Host). Errors they return go through errorHandler like
// any handler's.

// BindJSON strictly decodes the request's JSON body into v, with this
// server's answers to a bad body.
func (s *Server) BindJSON(c echo.Context, v any) error {
	_, err := bindJSON(c, v)
	return err
}

// OK answers data in the success envelope.
func (s *Server) OK(c echo.Context, data any) error { return ok(c, data) }

// HTTPError is an error answer in the one error shape: status, code (one
// of the Code constants), message and details; cause is logged, never
// sent.
func (s *Server) HTTPError(status int, code, message string, details map[string]any, cause error) error {
	return &Error{Status: status, Code: code, Message: message, Details: details, Err: cause}
}

// ErrorPage answers err as the small HTML page a player's browser shows,
// titled title, with the status, message and request id the error body
// would have. An unexpected error is logged and shown as 500 (internal
// error).
func (s *Server) ErrorPage(c echo.Context, title string, err error) error {
	e, known := classify(err)
	if !known {
		s.log.ErrorContext(c.Request().Context(), "player page", "title", title, "error", err, "request_id", requestID(c))
	}
	return htmlPage(c, e.Status, pageData{Title: title, Text: e.Message, RequestID: requestID(c)})
}
