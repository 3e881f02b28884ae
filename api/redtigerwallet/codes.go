package redtigerwallet

import (
	"errors"
	"net/http"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// The Red Tiger wallet's numeric error codes. Every refusal is
// {"success": false, "error": {"message", "code"}}.
const (
	// CodeAPIAuth: the Authorization header is not the provider's API key
	// (or the provider in the path cannot be called): HTTP 401.
	CodeAPIAuth = 100
	// CodeInvalidInput: the body is not the call's shape, or an amount is
	// not exact in the currency.
	CodeInvalidInput = 200
	// CodeGeneric: a call the ledger cannot book faithfully (a
	// stake split between player and promo money).
	CodeGeneric = 201
	// CodeNotAuthorized: the token is not a session of this provider, or
	// no longer takes stakes, or userId is not its player.
	CodeNotAuthorized = 301
	// CodeUserNotFound, CodeBannedUser, CodeUserLimited: never sent;
	// Pitboss has no such player state.
	CodeUserNotFound = 302
	CodeBannedUser   = 303
	// CodeInsufficientFunds: the stake exceeds the balance.
	CodeInsufficientFunds = 304
	// CodeInvalidCurrency: currency is not the session's.
	CodeInvalidCurrency = 305
	CodeUserLimited     = 306
	// CodeTransactionNotFound: a payout on a refunded stake; a refund of
	// another player's transaction or of one that is not a stake.
	CodeTransactionNotFound = 400
	// CodeDuplicate: an id already used with another payload or kind; a
	// stake whose refund came first; a refund of a settled stake.
	CodeDuplicate = 401
	// CodeInternal: a fault of ours (logged): HTTP 500.
	CodeInternal = 500
	// CodeMaintenance: never sent.
	CodeMaintenance = 501
)

// refusal is a call this dialect refuses before the ledger: its code and
// the message answered.
type refusal struct {
	code    int
	message string
}

func (r *refusal) Error() string { return r.message }

func refuse(code int, message string) error { return &refusal{code: code, message: message} }

// ledgerCodes maps the money rules' verdicts to the protocol's codes:
// with classify, the one place an error becomes a code.
var ledgerCodes = []struct {
	err  error
	code int
}{
	{domain.ErrInsufficientFunds, CodeInsufficientFunds},
	{commands.ErrSessionExpired, CodeNotAuthorized},
	{domain.ErrTransactionUnknown, CodeTransactionNotFound},
	{domain.ErrPlayerMismatch, CodeTransactionNotFound},
	{domain.ErrBetRolledBack, CodeTransactionNotFound},
	{domain.ErrNotRollbackable, CodeTransactionNotFound},
	{domain.ErrRolledBackEarlier, CodeDuplicate},
	{domain.ErrAlreadyRolledBack, CodeDuplicate},
	{domain.ErrBetSettled, CodeDuplicate},
	{domain.ErrDuplicateTransaction, CodeDuplicate},
	{domain.ErrCurrencyMismatch, CodeInvalidCurrency},
	{domain.ErrUnknownCurrency, CodeInvalidCurrency},
	{domain.ErrTooPrecise, CodeInvalidInput},
	{domain.ErrAmountOverflow, CodeInvalidInput},
	{domain.ErrInvalidAmount, CodeInvalidInput},
	{domain.ErrInvalidArgument, CodeInvalidInput},
}

// messages are the answers' texts per code where the ledger's own error
// text would say more than the caller needs (ids of accounts, internals).
var messages = map[int]string{
	CodeAPIAuth:             "API authentication error",
	CodeNotAuthorized:       "Not authorized",
	CodeInsufficientFunds:   "Insufficient funds",
	CodeInvalidCurrency:     "Invalid user currency",
	CodeTransactionNotFound: "Transaction not found",
	CodeDuplicate:           "Duplicate transaction",
	CodeInternal:            "Internal server error",
}

// classify is the code answering err, the message, and whether err is a
// known verdict (an unknown one is a fault of ours, logged).
func classify(err error) (code int, message string, known bool) {
	code, known = codeOf(err)
	message = messages[code]
	var r *refusal
	if errors.As(err, &r) && code != CodeAPIAuth && code != CodeNotAuthorized {
		// Our own refusals say what was wrong; auth refusals say no more
		// than that the caller is not let in.
		message = r.message
	}
	if message == "" {
		message = err.Error()
	}
	return code, message, known
}

func codeOf(err error) (int, bool) {
	var r *refusal
	if errors.As(err, &r) {
		return r.code, true
	}
	var ic *domain.IdempotencyConflictError
	if errors.As(err, &ic) {
		// The same transaction id with another round, game, amount or kind.
		return CodeDuplicate, true
	}
	var gfe *gateway.FieldError
	var dfe *domain.FieldError
	if errors.As(err, &gfe) || errors.As(err, &dfe) {
		return CodeInvalidInput, true
	}
	for _, m := range ledgerCodes {
		if errors.Is(err, m.err) {
			return m.code, true
		}
	}
	var we *wire.Error
	if errors.As(err, &we) && we.Status >= 400 && we.Status < 500 {
		// The strict JSON decoder's, the body reader's and the
		// Content-Type check's verdicts.
		return CodeInvalidInput, true
	}
	return CodeInternal, false
}

// httpStatus is the HTTP status of an answer with code: 401 for the API
// key, 500 for our faults, 400 for every other refusal.
func httpStatus(code int) int {
	switch code {
	case CodeAPIAuth:
		return http.StatusUnauthorized
	case CodeInternal:
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest
}
