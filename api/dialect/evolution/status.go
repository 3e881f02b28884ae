package evolution

import (
	"errors"
	"net/http"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/wallet"
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

// statuses is the one table from the wallet core's verdict to the
// protocol's status. A Duplicate's status depends on the call (classify's
// conflict): the id of a debit or promo payout reused is
// BET_ALREADY_EXIST, a credit's or cancel's BET_ALREADY_SETTLED (the bet
// they name was settled otherwise).
var statuses = map[wallet.Verdict]string{
	wallet.Accepted:        StatusOK,
	wallet.Replayed:        StatusOK,
	wallet.Unauthenticated: StatusInvalidTokenID,
	wallet.Malformed:       StatusInvalidParameter,
	wallet.InvalidRequest:  StatusInvalidParameter,
	wallet.InvalidAmount:   StatusInvalidParameter,
	wallet.Unsupported:     StatusInvalidParameter,
	wallet.UnknownSession:  StatusInvalidSID,
	wallet.WrongPlayer:     StatusInvalidParameter,
	// A new debit after the session's end: the sid no longer plays.
	wallet.SessionExpired:     StatusInvalidSID,
	wallet.WrongCurrency:      StatusInvalidParameter,
	wallet.InvalidGame:        StatusInvalidParameter,
	wallet.InsufficientFunds:  StatusInsufficientFunds,
	wallet.Duplicate:          StatusBetAlreadyExist,
	wallet.UnknownTransaction: StatusBetDoesNotExist,
	wallet.ForeignTransaction: StatusBetDoesNotExist,
	// A credit on a cancelled bet, a debit whose bet was cancelled before
	// it arrived, a cancel of a bet a credit settled: the bet is settled
	// (by its cancel or its credit) in the protocol's words.
	wallet.RolledBack:        StatusBetAlreadySettled,
	wallet.RolledBackEarlier: StatusBetAlreadySettled,
	wallet.AlreadyRolledBack: StatusBetAlreadySettled,
	wallet.Settled:           StatusBetAlreadySettled,
	wallet.NotRollbackable:   StatusBetAlreadySettled,
	wallet.LimitExceeded:     StatusInvalidParameter,
	// A seamless client's wallet said no for a reason of its own.
	wallet.OperatorRefused: StatusUnknownError,
	wallet.Fault:           StatusUnknownError,
}

// classify is the status answering err, and whether err is a known
// verdict (an unknown one is a fault of ours: logged, UNKNOWN_ERROR).
// conflict is the status of the call's id reused with another payload.
func classify(err error, conflict string) (status string, known bool) {
	v, known := wire.Verdict(err)
	if v == wallet.Duplicate && conflict != "" && !isLedgerDuplicate(err) {
		return conflict, known
	}
	return statuses[v], known
}

// isLedgerDuplicate reports whether err is the ledger's own duplicate
// (a transaction id already booked as another kind): BET_ALREADY_EXIST
// whatever the call, as before the core.
func isLedgerDuplicate(err error) bool { return errors.Is(err, domain.ErrDuplicateTransaction) }
