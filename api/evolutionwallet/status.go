package evolutionwallet

import (
	"errors"
	"net/http"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// The statuses this dialect answers (docs/protocols/evolution.md#statuses).
// Every one is HTTP 200 but StatusInvalidTokenID, which is 401.
const (
	StatusOK                = "OK"
	StatusUnknownError      = "UNKNOWN_ERROR"
	StatusInvalidTokenID    = "INVALID_TOKEN_ID"
	StatusInvalidSID        = "INVALID_SID"
	StatusInvalidParameter  = "INVALID_PARAMETER"
	StatusInsufficientFunds = "INSUFFICIENT_FUNDS"
	StatusBetDoesNotExist   = "BET_DOES_NOT_EXIST"
	StatusBetAlreadyExist   = "BET_ALREADY_EXIST"
	StatusBetAlreadySettled = "BET_ALREADY_SETTLED"
)

// httpStatus is the HTTP status a status is answered with: the protocol
// answers every verdict 200 but a wrong authToken.
func httpStatus(status string) int {
	if status == StatusInvalidTokenID {
		return http.StatusUnauthorized
	}
	return http.StatusOK
}

// refusal is a call this dialect refuses before the ledger: its status and,
// for the log, why.
type refusal struct {
	status string
	reason string
}

func (r *refusal) Error() string { return r.status + ": " + r.reason }

func refuse(status, reason string) error { return &refusal{status: status, reason: reason} }

// ledgerStatuses maps the money rules' verdicts to the protocol's
// statuses: with classify, the one place an error becomes a status.
var ledgerStatuses = []struct {
	err    error
	status string
}{
	{domain.ErrInsufficientFunds, StatusInsufficientFunds},
	// A new debit after the session's end: the sid no longer plays.
	{commands.ErrSessionExpired, StatusInvalidSID},
	{domain.ErrTransactionUnknown, StatusBetDoesNotExist},
	{domain.ErrPlayerMismatch, StatusBetDoesNotExist},
	// A credit on a cancelled bet, a debit whose bet was cancelled before
	// it arrived, a cancel of a bet a credit settled: the bet is settled
	// (by its cancel or its credit) in the protocol's words.
	{domain.ErrBetRolledBack, StatusBetAlreadySettled},
	{domain.ErrRolledBackEarlier, StatusBetAlreadySettled},
	{domain.ErrAlreadyRolledBack, StatusBetAlreadySettled},
	{domain.ErrBetSettled, StatusBetAlreadySettled},
	{domain.ErrDuplicateTransaction, StatusBetAlreadyExist},
	{domain.ErrCurrencyMismatch, StatusInvalidParameter},
	{domain.ErrUnknownCurrency, StatusInvalidParameter},
	{domain.ErrTooPrecise, StatusInvalidParameter},
	{domain.ErrAmountOverflow, StatusInvalidParameter},
	{domain.ErrInvalidAmount, StatusInvalidParameter},
	{domain.ErrInvalidArgument, StatusInvalidParameter},
}

// classify is the status answering err, and whether err is a known
// verdict (an unknown one is a fault of ours: logged, UNKNOWN_ERROR).
// conflict is the status of the call's id reused with another payload:
// BET_ALREADY_EXIST for a debit or a promo payout, BET_ALREADY_SETTLED for
// a credit or a cancel (the bet they name was settled otherwise).
func classify(err error, conflict string) (status string, known bool) {
	var r *refusal
	if errors.As(err, &r) {
		return r.status, true
	}
	var ic *domain.IdempotencyConflictError
	if errors.As(err, &ic) {
		return conflict, true
	}
	var gfe *gateway.FieldError
	var dfe *domain.FieldError
	if errors.As(err, &gfe) || errors.As(err, &dfe) {
		return StatusInvalidParameter, true
	}
	for _, m := range ledgerStatuses {
		if errors.Is(err, m.err) {
			return m.status, true
		}
	}
	var we *wire.Error
	if errors.As(err, &we) && we.Status == http.StatusBadRequest {
		// The body reader's and strict JSON decoder's verdicts: not JSON,
		// too large, a field unknown or of the wrong type.
		return StatusInvalidParameter, true
	}
	return StatusUnknownError, false
}
