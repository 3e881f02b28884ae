package wallet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pitboss/pitboss/domain"
)

// OperatorWallet is a seamless client's own wallet (its player account
// management system), spoken in that wallet's protocol (valkyrie-pam,
// tbb): the far side that decides a seamless client's bets and wins. The
// core calls it; adapters/operatorwallet implements it per protocol.
//
// Every method answers one of three ways:
//   - nil error: the operator decided yes, and said the balance;
//   - an *OperatorRefusal: the operator decided no (its error code mapped
//     to a Verdict), nothing moved there;
//   - any other error, wrapping ErrOutcomeUnknown: a timeout, a reset, a
//     5xx or an answer that cannot be read: whether the operator applied
//     it is unknown (docs/seamless-wallet.md#unknown-outcomes).
type OperatorWallet interface {
	// Session resolves the operator's player token at a launch, where the
	// protocol has a session call (valkyrie-pam's GET /players/session);
	// ErrNoSessionCall where it has none.
	Session(ctx context.Context, p OperatorPlayer) (OperatorSession, error)
	// Balance is the player's balance in p.Currency, as the operator says.
	Balance(ctx context.Context, p OperatorPlayer) (domain.Money, error)
	// Move sends one money movement. The operator books it once per
	// m.ID: a re-send of the same movement answers as the first time.
	Move(ctx context.Context, m OperatorMove) (OperatorAnswer, error)
	// Lookup asks whether the operator booked the movement m.ID (of kind
	// m.Kind), where the protocol can look one up (valkyrie-pam's GET
	// /players/{id}/transactions); ErrNoLookup where it cannot.
	Lookup(ctx context.Context, m OperatorMove) (OperatorAnswer, bool, error)
}

// OperatorPlayer is whom a call is about: the operator's player id, the
// operator's session token for that player (from the launch), the
// provider playing (the operator's name for it) and the currency.
type OperatorPlayer struct {
	Player, Token, Provider string
	Currency                domain.Currency
	// Game is the game the player is in (our catalog id): tbb's balance
	// call names it (reference).
	Game string
	// CorrelationID ties the call to the provider's request (sent as
	// X-Correlation-ID where the protocol has it).
	CorrelationID string
}

// OperatorSession is the operator's answer to a session lookup.
type OperatorSession struct {
	Player, Currency, Country, Language, Game string
}

// MoveKind is what a movement does to the player's money at the operator.
type MoveKind int

// The movements. Debit is a bet, Credit a win (Promo and Jackpot say
// which kind of money), Cancel gives back the debit Ref names, Reverse
// takes back the credit Ref names (where the protocol has it: tbb's
// "rollback win").
const (
	Debit MoveKind = iota + 1
	Credit
	Cancel
	Reverse
)

func (k MoveKind) String() string {
	switch k {
	case Debit:
		return "debit"
	case Credit:
		return "credit"
	case Cancel:
		return "cancel"
	case Reverse:
		return "reverse"
	}
	return fmt.Sprintf("MoveKind(%d)", int(k))
}

// ParseMoveKind is the MoveKind its String names.
func ParseMoveKind(s string) (MoveKind, bool) {
	for k := Debit; k <= Reverse; k++ {
		if k.String() == s {
			return k, true
		}
	}
	return 0, false
}

// OperatorMove is one money movement sent to the operator's wallet.
type OperatorMove struct {
	OperatorPlayer
	Kind MoveKind
	// ID is the movement's own id, the operator's idempotency key: the
	// provider's transaction id (a follow-up re-sends the same ID, never a
	// new one).
	ID string
	// Ref names the movement a Cancel or Reverse undoes, and the bet a
	// Credit settles when the provider named one.
	Ref string
	// Game is the provider's code of the game, Round the provider's round.
	Game, Round string
	// RoundClosed: the provider said the round is over.
	RoundClosed bool
	// Amount is what moves (for Cancel and Reverse, the amount of the
	// movement undone).
	Amount domain.Money
	// Promo: free-bet money (PROMOWITHDRAW, PROMODEPOSIT, PROMOCANCEL).
	Promo bool
	// Jackpot is the part of a Credit a jackpot paid (zero: none).
	Jackpot domain.Money
	At      time.Time
}

// OperatorAnswer is the operator's yes: its id of the movement and the
// player's balance after it.
type OperatorAnswer struct {
	TxID    string
	Balance domain.Money
	// Amount is, on a Lookup where the protocol tells it, the amount the
	// operator booked (zero value: not told).
	Amount domain.Money
}

// ErrOutcomeUnknown: the operator's decision is unknown (a timeout, a
// reset, a 5xx, an unreadable answer).
var ErrOutcomeUnknown = errors.New("the operator wallet's decision is unknown")

// ErrNoLookup: the operator's protocol cannot look a movement up.
var ErrNoLookup = errors.New("the operator wallet's protocol has no transaction lookup")

// ErrNoSessionCall: the operator's protocol has no session call.
var ErrNoSessionCall = errors.New("the operator wallet's protocol has no session call")

// OperatorRefusal is the operator's no: Verdict is what it means in the
// core's words, Code the operator's own error code, Balance the balance
// it reported with the refusal when it did.
type OperatorRefusal struct {
	Verdict Verdict
	Code    string
	Message string
	Balance *domain.Money
}

func (r *OperatorRefusal) Error() string {
	return fmt.Sprintf("the operator wallet refused: %s %s", r.Code, r.Message)
}
