package wallet

import (
	"errors"

	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// Verdict is the one outcome of a provider's wallet call, whatever its
// protocol: each dialect answers it with its own status from one table
// (docs/provider-wallet.md#one-core-many-dialects).
type Verdict int

// The verdicts. Accepted and Replayed answer a call that was booked (the
// second time from the ledger's record); every other one refuses it.
const (
	Accepted Verdict = iota
	Replayed
	// Unauthenticated: the caller is no provider of this protocol (unknown,
	// disabled, on another protocol, a wrong signature or key).
	Unauthenticated
	// Malformed: the body is not the protocol's syntax (not JSON, too large).
	Malformed
	// InvalidRequest: a field is missing, of the wrong type or not allowed.
	InvalidRequest
	// InvalidAmount: an amount that is not exact in the currency, negative
	// or out of range.
	InvalidAmount
	// Unsupported: a call the ledger cannot book faithfully (a stake split
	// between the player's and a promotion's money).
	Unsupported
	// UnknownSession: the token names no session of the calling provider.
	UnknownSession
	// WrongPlayer: the call names another player than its session's.
	WrongPlayer
	// SessionExpired: a new bet in a session that has ended, by its expiry
	// or because a newer launch of the same player on the same provider
	// superseded it.
	SessionExpired
	// WrongCurrency: another currency than the session's, or one the
	// protocol cannot carry.
	WrongCurrency
	// InvalidGame: the game named is no game of the session's provider.
	InvalidGame
	// InsufficientFunds: the bet exceeds the player's balance.
	InsufficientFunds
	// Duplicate: the transaction id was booked before with another payload
	// (or as another kind).
	Duplicate
	// UnknownTransaction: the transaction a win or rollback names was never
	// booked.
	UnknownTransaction
	// ForeignTransaction: the transaction named is another player's.
	ForeignTransaction
	// RolledBack: a win on a bet that was rolled back.
	RolledBack
	// RolledBackEarlier: the original call of a rollback that came first.
	RolledBackEarlier
	// AlreadyRolledBack: a second rollback of a transaction, under another
	// id.
	AlreadyRolledBack
	// Settled: a rollback of a bet a win has settled.
	Settled
	// NotRollbackable: a rollback of a kind of transaction that cannot be
	// undone.
	NotRollbackable
	// LimitExceeded: a credit that would take the balance past the largest
	// the protocol can say (domain.ErrBalanceLimit), or a balance already
	// past it: refused, nothing booked.
	LimitExceeded
	// OperatorRefused: a seamless client's own wallet refused the call for
	// a reason of its own (the player is blocked, a limit of the
	// operator's, a generic error it answered definitely).
	OperatorRefused
	// Fault: a fault of ours (logged; the provider retries).
	Fault
)

var verdictNames = [...]string{"accepted", "replayed", "unauthenticated", "malformed", "invalid_request",
	"invalid_amount", "unsupported", "unknown_session", "wrong_player", "session_expired", "wrong_currency",
	"invalid_game", "insufficient_funds", "duplicate", "unknown_transaction", "foreign_transaction",
	"rolled_back", "rolled_back_earlier", "already_rolled_back", "settled", "not_rollbackable", "limit_exceeded",
	"operator_refused", "fault"}

// Verdicts lists every verdict, so a dialect's table can be checked for
// completeness.
func Verdicts() []Verdict {
	vs := make([]Verdict, 0, len(verdictNames))
	for v := range verdictNames {
		vs = append(vs, Verdict(v))
	}
	return vs
}

func (v Verdict) String() string {
	if v < 0 || int(v) >= len(verdictNames) {
		return "verdict(?)"
	}
	return verdictNames[v]
}

// Refusal is a call the core or a dialect refuses, with its verdict and,
// for the log and the protocols that answer a message, why. Err is the
// error it stands for, when there is one.
type Refusal struct {
	Verdict Verdict
	Reason  string
	Err     error
}

func (r *Refusal) Error() string { return r.Verdict.String() + ": " + r.Reason }

func (r *Refusal) Unwrap() error { return r.Err }

// Refuse is a *Refusal of verdict v for reason.
func Refuse(v Verdict, reason string) error { return &Refusal{Verdict: v, Reason: reason} }

// ledgerVerdicts are the money rules' errors, each with its verdict.
var ledgerVerdicts = []struct {
	err     error
	verdict Verdict
}{
	{domain.ErrInsufficientFunds, InsufficientFunds},
	{commands.ErrSessionExpired, SessionExpired},
	{domain.ErrTransactionUnknown, UnknownTransaction},
	{domain.ErrPlayerMismatch, ForeignTransaction},
	{domain.ErrBetRolledBack, RolledBack},
	{domain.ErrRolledBackEarlier, RolledBackEarlier},
	{domain.ErrAlreadyRolledBack, AlreadyRolledBack},
	{domain.ErrBetSettled, Settled},
	{domain.ErrNotRollbackable, NotRollbackable},
	{domain.ErrDuplicateTransaction, Duplicate},
	{domain.ErrCurrencyMismatch, WrongCurrency},
	{domain.ErrUnknownCurrency, WrongCurrency},
	{domain.ErrTooPrecise, InvalidAmount},
	{domain.ErrAmountOverflow, InvalidAmount},
	{domain.ErrInvalidAmount, InvalidAmount},
	{domain.ErrInvalidArgument, InvalidRequest},
	{domain.ErrBalanceLimit, LimitExceeded},
}

// VerdictOf is err's verdict, and whether err is a known one: a *Refusal,
// a rule of money's error, a field error. Anything else is a Fault of
// ours (known false: log it).
func VerdictOf(err error) (Verdict, bool) {
	if err == nil {
		return Accepted, true
	}
	var r *Refusal
	if errors.As(err, &r) {
		return r.Verdict, true
	}
	var ic *domain.IdempotencyConflictError
	if errors.As(err, &ic) {
		return Duplicate, true
	}
	var gfe *gateway.FieldError
	var dfe *domain.FieldError
	if errors.As(err, &gfe) || errors.As(err, &dfe) {
		return InvalidRequest, true
	}
	for _, m := range ledgerVerdicts {
		if errors.Is(err, m.err) {
			return m.verdict, true
		}
	}
	return Fault, false
}
