package caleta

import (
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/wallet"
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

// statuses is the one table from the wallet core's verdict to the
// document's status.
var statuses = map[wallet.Verdict]string{
	wallet.Accepted:          StatusOK,
	wallet.Replayed:          StatusOK,
	wallet.Unauthenticated:   StatusInvalidSignature,
	wallet.Malformed:         StatusWrongSyntax,
	wallet.InvalidRequest:    StatusWrongTypes,
	wallet.InvalidAmount:     StatusWrongTypes,
	wallet.Unsupported:       StatusWrongTypes,
	wallet.UnknownSession:    StatusInvalidToken,
	wallet.WrongPlayer:       StatusInvalidToken,
	wallet.SessionExpired:    StatusTokenExpired,
	wallet.WrongCurrency:     StatusWrongCurrency,
	wallet.InvalidGame:       StatusInvalidGame,
	wallet.InsufficientFunds: StatusNotEnoughMoney,
	// Same transaction_uuid, another user, round, game or amount.
	wallet.Duplicate:          StatusDuplicate,
	wallet.UnknownTransaction: StatusTransactionUnknown,
	wallet.ForeignTransaction: StatusTransactionUnknown,
	wallet.RolledBack:         StatusTransactionRolledBk,
	wallet.RolledBackEarlier:  StatusTransactionRolledBk,
	wallet.AlreadyRolledBack:  StatusTransactionRolledBk,
	// A rollback of a bet a win settled, or of a kind that cannot be
	// rolled back: the document has no status for it, so the generic one
	// (the provider retries; the operator sees it in the log).
	wallet.Settled:         StatusUnknown,
	wallet.NotRollbackable: StatusUnknown,
	// A win or refund that would take the balance past what the
	// document's int64 of 1/100000 units can say, or a balance already
	// past it: the number is beyond the document's type.
	wallet.LimitExceeded: StatusWrongTypes,
	// A seamless client's wallet said no for a reason of its own (a
	// blocked player, its limit).
	wallet.OperatorRefused: StatusUserDisabled,
	wallet.Fault:           StatusUnknown,
}

// classify is the status answering err, and whether err is a known
// verdict (an unknown one is logged: a fault of ours, RS_ERROR_UNKNOWN).
func classify(err error) (status string, known bool) {
	v, known := wire.Verdict(err)
	return statuses[v], known
}
