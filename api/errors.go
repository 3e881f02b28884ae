package api

import (
	"errors"
	"maps"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// Error codes of the structured error body. They are part of the contract:
// add new ones, never rename.
const (
	CodeInvalidRequest      = "INVALID_REQUEST"
	CodeInvalidJSON         = "INVALID_JSON"
	CodeBodyTooLarge        = "BODY_TOO_LARGE"
	CodeInvalidAmount       = "INVALID_AMOUNT"
	CodeAmountTooPrecise    = "AMOUNT_TOO_PRECISE"
	CodeUnknownCurrency     = "UNKNOWN_CURRENCY"
	CodeCurrencyMismatch    = "CURRENCY_MISMATCH"
	CodeInsufficientFunds   = "INSUFFICIENT_FUNDS"
	CodeIdempotencyConflict = "IDEMPOTENCY_CONFLICT"
	CodeTransactionUnknown  = "TRANSACTION_NOT_FOUND"
	CodeAlreadyRolledBack   = "ALREADY_ROLLED_BACK"
	CodeRolledBackEarlier   = "ROLLED_BACK_BEFORE_ARRIVAL"
	CodeBetRolledBack       = "BET_ROLLED_BACK"
	CodePlayerMismatch      = "PLAYER_MISMATCH"
	CodeNotRollbackable     = "NOT_ROLLBACKABLE"
	CodeDuplicateTx         = "DUPLICATE_TRANSACTION"
	CodeSessionExpired      = "SESSION_EXPIRED"
	CodeInvalidSignature    = "INVALID_SIGNATURE"
	CodeUnauthorized        = "UNAUTHORIZED"
	CodeForbidden           = "FORBIDDEN"
	CodeNotFound            = "NOT_FOUND"
	CodeMethodNotAllowed    = "METHOD_NOT_ALLOWED"
	CodeRateLimited         = "RATE_LIMITED"
	CodeUnavailable         = "SERVICE_UNAVAILABLE"
	CodeInternal            = "INTERNAL_ERROR"

	// Signed launch (GET /v1/launch), see docs/signed-launch.md.
	CodeSignatureRequired   = "SIGNATURE_REQUIRED"
	CodeTimestampOutOfRange = "TIMESTAMP_OUT_OF_RANGE"
	CodeIPNotAllowed        = "IP_NOT_ALLOWED"
	CodeReturnURLNotAllowed = "RETURN_URL_NOT_ALLOWED"

	// Deliveries (docs/callbacks-and-webhooks.md).
	CodeDeliveryInProgress = "DELIVERY_IN_PROGRESS"

	// Read models (docs/read-models.md): the read model had not reached
	// the min_position asked for within the wait.
	CodeReadModelBehind = "READ_MODEL_BEHIND"
	// min_position is past the event store's head: no event has it yet,
	// so no wait can satisfy it (a position from a write never is).
	CodePositionBeyondHead = "POSITION_BEYOND_HEAD"

	// Key management and the admin API (docs/keys-and-admin.md).
	CodeClientExists      = "CLIENT_EXISTS"
	CodeKeyNotActive      = "KEY_NOT_ACTIVE"
	CodeKeyAlreadyRotated = "KEY_ALREADY_ROTATED"

	// Providers and launches (docs/providers-and-games.md): the provider
	// answered the launch with a refusal (502). A provider that cannot be
	// reached is SERVICE_UNAVAILABLE (503 with Retry-After).
	CodeProviderRejected = "PROVIDER_REJECTED"
)

// retryableCodes are the codes whose request may succeed when repeated
// unchanged: the failure was ours or temporary, and every money call is
// idempotent, so a retry never moves money twice. Every other code is final
// for that request. Routes that promise it (the provider wallet) add
// details.retryable to their error bodies through withRetryable.
var retryableCodes = map[string]bool{
	CodeInternal:        true,
	CodeUnavailable:     true,
	CodeReadModelBehind: true,
	CodeRateLimited:     true,
}

// Retryable reports whether a request that failed with code may be retried
// unchanged.
func Retryable(code string) bool { return retryableCodes[code] }

const retryableKey = "retryable_details"

// withRetryable marks a route group whose error bodies carry
// details.retryable.
func withRetryable(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Set(retryableKey, true)
		return next(c)
	}
}

// Error is an API error with its status and code. Handlers return it (or a
// domain error) and errorHandler writes the one error shape.
type Error struct {
	Status  int
	Code    string
	Message string
	Details map[string]any
	Err     error
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Err }

func apiError(status int, code, msg string) *Error {
	return &Error{Status: status, Code: code, Message: msg}
}

// fieldError answers a rule's verdict on one field (package gateway's
// rules): 400 INVALID_REQUEST with details.field and the rule's other
// details. The one place a *gateway.FieldError becomes HTTP.
func fieldError(fe *gateway.FieldError) *Error {
	d := make(map[string]any, len(fe.Details)+1)
	maps.Copy(d, fe.Details)
	d["field"] = fe.Field
	return &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest, Message: fe.Message, Details: d}
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

// domainErrors maps domain rules to status and code: the only place that
// does.
var domainErrors = []struct {
	err    error
	status int
	code   string
}{
	{domain.ErrTooPrecise, http.StatusBadRequest, CodeAmountTooPrecise},
	{domain.ErrAmountOverflow, http.StatusBadRequest, CodeInvalidAmount},
	{domain.ErrInvalidAmount, http.StatusBadRequest, CodeInvalidAmount},
	{domain.ErrUnknownCurrency, http.StatusBadRequest, CodeUnknownCurrency},
	{domain.ErrCurrencyMismatch, http.StatusBadRequest, CodeCurrencyMismatch},
	{domain.ErrInvalidArgument, http.StatusBadRequest, CodeInvalidRequest},
	{domain.ErrInsufficientFunds, http.StatusBadRequest, CodeInsufficientFunds},
	{domain.ErrTransactionUnknown, http.StatusNotFound, CodeTransactionUnknown},
	{domain.ErrAlreadyRolledBack, http.StatusConflict, CodeAlreadyRolledBack},
	{domain.ErrRolledBackEarlier, http.StatusConflict, CodeRolledBackEarlier},
	{domain.ErrBetRolledBack, http.StatusConflict, CodeBetRolledBack},
	{domain.ErrPlayerMismatch, http.StatusConflict, CodePlayerMismatch},
	{domain.ErrNotRollbackable, http.StatusConflict, CodeNotRollbackable},
	{domain.ErrDuplicateTransaction, http.StatusConflict, CodeDuplicateTx},
	{domain.ErrNotFound, http.StatusNotFound, CodeNotFound},
	{gateway.ErrDeliveryInProgress, http.StatusConflict, CodeDeliveryInProgress},
	{gateway.ErrKeyNotActive, http.StatusConflict, CodeKeyNotActive},
	{gateway.ErrKeyAlreadyRotated, http.StatusConflict, CodeKeyAlreadyRotated},
	{commands.ErrSessionExpired, http.StatusConflict, CodeSessionExpired},
}

// classify turns any error into the status, code, message and details the
// client sees. Unknown errors are 500 with a generic message; their text is
// logged, never sent.
func classify(err error) (*Error, bool) {
	var ae *Error
	if errors.As(err, &ae) {
		return ae, true
	}
	var fe *gateway.FieldError
	if errors.As(err, &fe) {
		return fieldError(fe), true
	}
	if be, ok := behindError(err); ok {
		return be, true
	}
	if pe, ok := providerError(err); ok {
		return pe, true
	}
	var ic *domain.IdempotencyConflictError
	if errors.As(err, &ic) {
		return &Error{Status: http.StatusConflict, Code: CodeIdempotencyConflict, Message: ic.Error(),
			Details: map[string]any{"field": ic.Field, "original": ic.Original, "given": ic.Given}}, true
	}
	var ce *gateway.ClientExistsError
	if errors.As(err, &ce) {
		return &Error{Status: http.StatusConflict, Code: CodeClientExists, Message: ce.Error(),
			Details: map[string]any{"field": ce.Field, "existing": ce.Existing, "given": ce.Given}}, true
	}
	for _, m := range domainErrors {
		if errors.Is(err, m.err) {
			return &Error{Status: m.status, Code: m.code, Message: err.Error()}, true
		}
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		switch he.Code {
		case http.StatusNotFound:
			return apiError(http.StatusNotFound, CodeNotFound, "no such route"), true
		case http.StatusMethodNotAllowed:
			return apiError(http.StatusMethodNotAllowed, CodeMethodNotAllowed, "method not allowed on this route"), true
		case http.StatusRequestEntityTooLarge:
			return apiError(http.StatusBadRequest, CodeBodyTooLarge, "request body is too large"), true
		case http.StatusUnauthorized:
			return apiError(http.StatusUnauthorized, CodeUnauthorized, "missing or invalid API key"), true
		}
		if he.Code < 500 {
			return apiError(he.Code, CodeInvalidRequest, http.StatusText(he.Code)), true
		}
	}
	return &Error{Status: http.StatusInternalServerError, Code: CodeInternal, Message: "internal error", Err: err}, false
}

// errorHandler is Echo's HTTPErrorHandler: every failure leaves here in the
// one shape.
func (s *Server) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	e, known := classify(err)
	rid := requestID(c)
	if !known {
		s.log.ErrorContext(c.Request().Context(), "request failed", "error", err, "request_id", rid,
			"method", c.Request().Method, "path", c.Path())
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
		details["retryable"] = Retryable(e.Code)
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
// echo.ErrNotFound is looked at (handlers answer *Error), and only after
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
		return &Error{Status: http.StatusMethodNotAllowed, Code: CodeMethodNotAllowed,
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
