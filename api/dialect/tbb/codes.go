package tbb

import (
	"errors"
	"net/http"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/wallet"
)

// The addendum's error codes (TBB Error Codes): each is also the answer's
// HTTP status. 407 (player blocked), 418 (responsible-gaming limits) and
// 504 are never sent: Pitboss has no such player state.
const (
	CodeBadRequest        = http.StatusBadRequest          // 400
	CodeNotEnoughMoney    = http.StatusPaymentRequired     // 402
	CodeForbidden         = http.StatusForbidden           // 403
	CodePlayerNotFound    = http.StatusNotFound            // 404
	CodeGameNotAvailable  = http.StatusMethodNotAllowed    // 405
	CodePreviousNotFound  = http.StatusNotAcceptable       // 406
	CodeBetRejected       = http.StatusRequestTimeout      // 408
	CodeUnknownError      = http.StatusInternalServerError // 500
	CodeServiceUnavailble = http.StatusServiceUnavailable  // 503
)

// codes is the one table from the wallet core's verdict to the addendum's
// code (docs/protocols/tbb.md#codes).
var codes = map[wallet.Verdict]int{
	wallet.Accepted:        http.StatusOK,
	wallet.Replayed:        http.StatusOK,
	wallet.Unauthenticated: CodeForbidden,
	wallet.Malformed:       CodeBadRequest,
	wallet.InvalidRequest:  CodeBadRequest,
	wallet.InvalidAmount:   CodeBadRequest,
	wallet.Unsupported:     CodeBadRequest,
	wallet.UnknownSession:  CodeForbidden,
	wallet.WrongPlayer:     CodePlayerNotFound,
	// A new bet after the session ended (expired or superseded).
	wallet.SessionExpired:    CodeForbidden,
	wallet.WrongCurrency:     CodeBadRequest,
	wallet.InvalidGame:       CodeGameNotAvailable,
	wallet.InsufficientFunds: CodeNotEnoughMoney,
	// The addendum has no duplicate code: 400 tells the provider the call
	// was not booked.
	wallet.Duplicate:          CodeBadRequest,
	wallet.UnknownTransaction: CodePreviousNotFound,
	wallet.ForeignTransaction: CodePreviousNotFound,
	// A win in a round whose every bet was refunded: nothing stands.
	wallet.RolledBack: CodePreviousNotFound,
	// A bet whose refund arrived first: the addendum's "bet rejected".
	wallet.RolledBackEarlier: CodeBetRejected,
	wallet.AlreadyRolledBack: CodeBadRequest,
	wallet.Settled:           CodeBadRequest,
	wallet.NotRollbackable:   CodeBadRequest,
	wallet.LimitExceeded:     CodeBadRequest,
	// A seamless client's wallet said no (a blocked player, its limit).
	wallet.OperatorRefused: CodeBetRejected,
	wallet.Fault:           CodeUnknownError,
}

// messages are the answers' texts per code: short, ours (a provider reads
// the code), never the ledger's own error text.
var messages = map[int]string{
	CodeBadRequest:       "bad request",
	CodeNotEnoughMoney:   "insufficient funds",
	CodeForbidden:        "forbidden",
	CodePlayerNotFound:   "player not found",
	CodeGameNotAvailable: "game not available",
	CodePreviousNotFound: "previous transaction not found",
	CodeBetRejected:      "bet rejected",
	CodeUnknownError:     "unknown error",
}

// failure is the addendum's error body.
type failure struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// classify is the code answering err, its message, and whether err is a
// known verdict (an unknown one is a fault of ours: log it). A refusal of
// the caller's request says what was wrong; the others say their code's
// text.
func classify(err error) (code int, message string, known bool) {
	v, known := wire.Verdict(err)
	code = codes[v]
	message = messages[code]
	if code != CodeBadRequest {
		return code, message, known
	}
	var r *wallet.Refusal
	var we *wire.Error
	switch {
	case errors.As(err, &r):
		message = r.Reason
	case errors.As(err, &we):
		message = we.Message
	}
	return code, message, known
}
