package redtiger

import (
	"errors"
	"net/http"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/wallet"
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
	// CodeUserNotFound, CodeBannedUser: never sent; Pitboss has no such
	// player state.
	CodeUserNotFound = 302
	CodeBannedUser   = 303
	// CodeInsufficientFunds: the stake exceeds the balance.
	CodeInsufficientFunds = 304
	// CodeInvalidCurrency: currency is not the session's.
	CodeInvalidCurrency = 305
	// CodeUserLimited: a seamless client's own wallet refused the call for
	// a reason of its own (OperatorRefused).
	CodeUserLimited = 306
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

// codes is the one table from the wallet core's verdict to the
// protocol's code.
var codes = map[wallet.Verdict]int{
	wallet.Accepted:          0,
	wallet.Replayed:          0,
	wallet.Unauthenticated:   CodeAPIAuth,
	wallet.Malformed:         CodeInvalidInput,
	wallet.InvalidRequest:    CodeInvalidInput,
	wallet.InvalidAmount:     CodeInvalidInput,
	wallet.Unsupported:       CodeGeneric,
	wallet.UnknownSession:    CodeNotAuthorized,
	wallet.WrongPlayer:       CodeNotAuthorized,
	wallet.SessionExpired:    CodeNotAuthorized,
	wallet.WrongCurrency:     CodeInvalidCurrency,
	wallet.InvalidGame:       CodeInvalidInput,
	wallet.InsufficientFunds: CodeInsufficientFunds,
	// The same transaction id with another round, game, amount or kind.
	wallet.Duplicate:          CodeDuplicate,
	wallet.UnknownTransaction: CodeTransactionNotFound,
	wallet.ForeignTransaction: CodeTransactionNotFound,
	wallet.RolledBack:         CodeTransactionNotFound,
	wallet.NotRollbackable:    CodeTransactionNotFound,
	wallet.RolledBackEarlier:  CodeDuplicate,
	wallet.AlreadyRolledBack:  CodeDuplicate,
	wallet.Settled:            CodeDuplicate,
	wallet.LimitExceeded:      CodeInvalidInput,
	// A seamless client's wallet said no for a reason of its own (a
	// blocked player, its limit).
	wallet.OperatorRefused: CodeUserLimited,
	wallet.Fault:           CodeInternal,
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
	v, known := wire.Verdict(err)
	code = codes[v]
	message = messages[code]
	var r *wallet.Refusal
	if errors.As(err, &r) && code != CodeAPIAuth && code != CodeNotAuthorized {
		// Refusals say what was wrong; auth refusals say no more than
		// that the caller is not let in.
		message = r.Reason
	}
	if message == "" {
		message = err.Error()
	}
	return code, message, known
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
