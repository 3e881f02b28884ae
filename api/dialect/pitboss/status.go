package pitboss

import (
	"errors"
	"net/http"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/wallet"
)

// answerOf is one verdict's error answer: its HTTP status, code and,
// where a field is to blame, the field.
type answerOf struct {
	status int
	code   string
	field  string
}

// refusals is the one table from the refusals of the wallet core (the
// caller, its session, the game) to our error codes
// (docs/provider-wallet.md). The ledger's verdicts (a bet over the
// balance, a reused id, an expired session ...) are errors of the rules of
// money that the API's one mapping, wire.Classify, answers as on every
// route, so this protocol's answers stay what they were.
var refusals = map[wallet.Verdict]answerOf{
	wallet.Unauthenticated: {http.StatusUnauthorized, wire.CodeUnauthorized, ""},
	wallet.InvalidRequest:  {http.StatusBadRequest, wire.CodeInvalidRequest, ""},
	wallet.UnknownSession:  {http.StatusNotFound, wire.CodeNotFound, ""},
	wallet.WrongPlayer:     {http.StatusConflict, wire.CodePlayerMismatch, "player_id"},
	wallet.WrongCurrency:   {http.StatusBadRequest, wire.CodeCurrencyMismatch, "currency"},
	wallet.InvalidGame:     {http.StatusBadRequest, wire.CodeInvalidRequest, "game_id"},
	// A call the client's wallet cannot carry (a seamless client's promo
	// stake with an amount, on tbb).
	wallet.Unsupported: {http.StatusBadRequest, wire.CodeInvalidRequest, ""},
	// A seamless client's wallet said no for a reason of its own.
	wallet.OperatorRefused: {http.StatusForbidden, wire.CodeOperatorRefused, ""},
}

// refusalMessages say what the caller can do about a refusal where the
// core's reason would not.
var refusalMessages = map[wallet.Verdict]string{
	wallet.UnknownSession: "unknown session",
	wallet.WrongPlayer:    "player_id does not match the session",
	wallet.WrongCurrency:  "currency does not match the session",
	wallet.InvalidGame:    "game_id is not a game of the session's provider in the catalog (leave it out for the session's game)",
}

// refusal is err as our answer: a refusal of the core's, by the table; any
// other error unchanged, for wire.Classify.
func refusal(err error) error {
	var r *wallet.Refusal
	if !errors.As(err, &r) {
		return err
	}
	a, ok := refusals[r.Verdict]
	if !ok {
		return err
	}
	msg := refusalMessages[r.Verdict]
	if msg == "" {
		msg = r.Reason
	}
	e := &wire.Error{Status: a.status, Code: a.code, Message: msg, Err: err}
	if a.field != "" {
		e.Details = map[string]any{"field": a.field}
	}
	return e
}
