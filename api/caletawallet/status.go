package caletawallet

import (
	"errors"
	"net/http"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// The statuses of the document's `status` schema, every one answered with
// HTTP 200 (the document defines no other answer for the wallet).
const (
	StatusOK                  = "RS_OK"
	StatusUnknown             = "RS_ERROR_UNKNOWN"
	StatusTimeout             = "RS_ERROR_TIMEOUT"
	StatusInvalidToken        = "RS_ERROR_INVALID_TOKEN"
	StatusInvalidGame         = "RS_ERROR_INVALID_GAME"
	StatusWrongCurrency       = "RS_ERROR_WRONG_CURRENCY"
	StatusNotEnoughMoney      = "RS_ERROR_NOT_ENOUGH_MONEY"
	StatusUserDisabled        = "RS_ERROR_USER_DISABLED"
	StatusInvalidSignature    = "RS_ERROR_INVALID_SIGNATURE"
	StatusTokenExpired        = "RS_ERROR_TOKEN_EXPIRED"
	StatusWrongSyntax         = "RS_ERROR_WRONG_SYNTAX"
	StatusWrongTypes          = "RS_ERROR_WRONG_TYPES"
	StatusDuplicate           = "RS_ERROR_DUPLICATE_TRANSACTION"
	StatusTransactionUnknown  = "RS_ERROR_TRANSACTION_DOES_NOT_EXIST"
	StatusTransactionRolledBk = "RS_ERROR_TRANSACTION_ROLLED_BACK"
	StatusBetLimitExceeded    = "RS_ERROR_BET_LIMIT_EXCEEDED"
)

// refusal is a call this dialect refuses before the ledger: its status and,
// for the log, why.
type refusal struct {
	status string
	reason string
}

func (r *refusal) Error() string { return r.status + ": " + r.reason }

func refuse(status, reason string) error { return &refusal{status: status, reason: reason} }

// ledgerStatuses maps the money rules' verdicts to the document's
// statuses: with classify, the one place an error becomes a status.
var ledgerStatuses = []struct {
	err    error
	status string
}{
	{domain.ErrInsufficientFunds, StatusNotEnoughMoney},
	{commands.ErrSessionExpired, StatusTokenExpired},
	{domain.ErrTransactionUnknown, StatusTransactionUnknown},
	{domain.ErrPlayerMismatch, StatusTransactionUnknown},
	{domain.ErrBetRolledBack, StatusTransactionRolledBk},
	{domain.ErrRolledBackEarlier, StatusTransactionRolledBk},
	{domain.ErrAlreadyRolledBack, StatusTransactionRolledBk},
	{domain.ErrDuplicateTransaction, StatusDuplicate},
	{domain.ErrCurrencyMismatch, StatusWrongCurrency},
	{domain.ErrUnknownCurrency, StatusWrongCurrency},
	{domain.ErrTooPrecise, StatusWrongTypes},
	{domain.ErrAmountOverflow, StatusWrongTypes},
	{domain.ErrInvalidAmount, StatusWrongTypes},
	{domain.ErrInvalidArgument, StatusWrongTypes},
	// A rollback of a bet a win settled, or of a kind that cannot be
	// rolled back: the document has no status for it, so the generic one
	// (the provider retries; the operator sees it in the log).
	{domain.ErrBetSettled, StatusUnknown},
	{domain.ErrNotRollbackable, StatusUnknown},
}

// classify is the status answering err, and whether err is a known
// verdict (an unknown one is logged: a fault of ours, RS_ERROR_UNKNOWN).
func classify(err error) (status string, known bool) {
	var r *refusal
	if errors.As(err, &r) {
		return r.status, true
	}
	var ic *domain.IdempotencyConflictError
	if errors.As(err, &ic) {
		// Same transaction_uuid, another user, round, game or amount.
		return StatusDuplicate, true
	}
	var gfe *gateway.FieldError
	var dfe *domain.FieldError
	if errors.As(err, &gfe) || errors.As(err, &dfe) {
		return StatusWrongTypes, true
	}
	for _, m := range ledgerStatuses {
		if errors.Is(err, m.err) {
			return m.status, true
		}
	}
	var we *wire.Error
	if errors.As(err, &we) {
		// The strict JSON decoder's and body reader's verdicts: a body that
		// is not JSON is a syntax error, a JSON body with a field of the
		// wrong type, unknown or missing a type error.
		switch {
		case we.Code == wire.CodeInvalidJSON || we.Code == wire.CodeBodyTooLarge:
			return StatusWrongSyntax, true
		case we.Status == http.StatusBadRequest:
			return StatusWrongTypes, true
		}
	}
	return StatusUnknown, false
}
