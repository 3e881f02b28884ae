package wire

import (
	"errors"
	"maps"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/projections"
)

// fieldError answers a rule's verdict on one field (package gateway's
// rules): 400 INVALID_REQUEST with details.field and the rule's other
// details. The one place a *gateway.FieldError becomes HTTP.
func fieldError(fe *gateway.FieldError) *Error {
	d := make(map[string]any, len(fe.Details)+1)
	maps.Copy(d, fe.Details)
	d["field"] = fe.Field
	return &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest, Message: fe.Message, Details: d}
}

// domainErrors maps domain rules to status and code: the only place that
// does.
var domainErrors = []struct {
	err    error
	status int
	code   string
}{
	{domain.ErrRewardNotActive, http.StatusConflict, CodeRewardNotActive},
	{domain.ErrTooPrecise, http.StatusBadRequest, CodeAmountTooPrecise},
	{domain.ErrAmountOverflow, http.StatusBadRequest, CodeInvalidAmount},
	{domain.ErrBalanceLimit, http.StatusBadRequest, CodeInvalidAmount},
	{domain.ErrInvalidAmount, http.StatusBadRequest, CodeInvalidAmount},
	{domain.ErrUnknownCurrency, http.StatusBadRequest, CodeUnknownCurrency},
	{domain.ErrCurrencyMismatch, http.StatusBadRequest, CodeCurrencyMismatch},
	{domain.ErrInvalidArgument, http.StatusBadRequest, CodeInvalidRequest},
	{domain.ErrInsufficientFunds, http.StatusBadRequest, CodeInsufficientFunds},
	{domain.ErrTransactionUnknown, http.StatusNotFound, CodeTransactionUnknown},
	{domain.ErrAlreadyRolledBack, http.StatusConflict, CodeAlreadyRolledBack},
	{domain.ErrRolledBackEarlier, http.StatusConflict, CodeRolledBackEarlier},
	{domain.ErrBetRolledBack, http.StatusConflict, CodeBetRolledBack},
	{domain.ErrBetSettled, http.StatusConflict, CodeBetSettled},
	{domain.ErrPlayerMismatch, http.StatusConflict, CodePlayerMismatch},
	{domain.ErrNotRollbackable, http.StatusConflict, CodeNotRollbackable},
	{domain.ErrDuplicateTransaction, http.StatusConflict, CodeDuplicateTx},
	{domain.ErrNotFound, http.StatusNotFound, CodeNotFound},
	{gateway.ErrDeliveryInProgress, http.StatusConflict, CodeDeliveryInProgress},
	{gateway.ErrKeyNotActive, http.StatusConflict, CodeKeyNotActive},
	{gateway.ErrKeyAlreadyRotated, http.StatusConflict, CodeKeyAlreadyRotated},
	{gateway.ErrNoClientSecret, http.StatusConflict, CodeClientSecretNotIssued},
	{commands.ErrSessionExpired, http.StatusConflict, CodeSessionExpired},
}

// Classify turns any error into the status, code, message and details the
// client sees: the one mapping of errors to HTTP. Unknown errors are 500
// with a generic message and known is false; their text is for the log,
// never sent.
func Classify(err error) (e *Error, known bool) {
	var ae *Error
	if errors.As(err, &ae) {
		return ae, true
	}
	var fe *gateway.FieldError
	if errors.As(err, &fe) {
		return fieldError(fe), true
	}
	var dfe *domain.FieldError
	if errors.As(err, &dfe) {
		return &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest, Message: dfe.Message,
			Details: map[string]any{"field": dfe.Field}}, true
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
			return NewError(http.StatusNotFound, CodeNotFound, "no such route"), true
		case http.StatusMethodNotAllowed:
			return NewError(http.StatusMethodNotAllowed, CodeMethodNotAllowed, "method not allowed on this route"), true
		case http.StatusRequestEntityTooLarge:
			return NewError(http.StatusBadRequest, CodeBodyTooLarge, "request body is too large"), true
		case http.StatusUnauthorized:
			return NewError(http.StatusUnauthorized, CodeUnauthorized, "missing or invalid API key"), true
		}
		if he.Code < 500 {
			return NewError(he.Code, CodeInvalidRequest, http.StatusText(he.Code)), true
		}
	}
	return &Error{Status: http.StatusInternalServerError, Code: CodeInternal, Message: "internal error", Err: err}, false
}

// behindError is how a *projections.BehindError (503, retryable) and a
// *projections.BeyondHeadError (400, final) are answered.
func behindError(err error) (*Error, bool) {
	var bh *projections.BeyondHeadError
	if errors.As(err, &bh) {
		return &Error{Status: http.StatusBadRequest, Code: CodePositionBeyondHead, Message: bh.Error(),
			Details: map[string]any{"field": "min_position", "min_position": bh.Want, "head": bh.Head}}, true
	}
	var be *projections.BehindError
	if !errors.As(err, &be) {
		return nil, false
	}
	return &Error{Status: http.StatusServiceUnavailable, Code: CodeReadModelBehind, Message: be.Error(),
		Details: map[string]any{"read_model": be.Source, "min_position": be.Want, "position": be.Have,
			"retry_after_seconds": int64(max(be.RetryAfter, time.Second) / time.Second)}}, true
}
