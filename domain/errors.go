package domain

import (
	"errors"
	"fmt"
)

// Sentinel errors of the ledger's rules. Callers test them with errors.Is;
// the API maps them to status codes in one place.
var (
	ErrInvalidAmount      = errors.New("invalid amount")
	ErrTooPrecise         = errors.New("amount has more decimals than the currency allows")
	ErrAmountOverflow     = errors.New("amount out of range")
	ErrUnknownCurrency    = errors.New("unknown currency")
	ErrCurrencyMismatch   = errors.New("currencies do not match")
	ErrInsufficientFunds  = errors.New("insufficient funds")
	ErrInvalidArgument    = errors.New("invalid argument")
	ErrTransactionUnknown = errors.New("referenced transaction not found")
	ErrAlreadyRolledBack  = errors.New("transaction already rolled back")
	ErrRolledBackEarlier  = errors.New("transaction was rolled back before it arrived")
	ErrBetRolledBack      = errors.New("bet was rolled back")
	ErrBetSettled         = errors.New("bet was settled by a win")
	ErrNotRollbackable    = errors.New("transaction kind cannot be rolled back")
	ErrPlayerMismatch     = errors.New("referenced transaction belongs to another player")
	ErrNotFound           = errors.New("not found")
	// ErrRoundNotOpen and ErrRoundNotStale refuse the ledger's close of a
	// round (DecideRoundClose): closed already or nothing standing; opened
	// too recently.
	ErrRoundNotOpen  = errors.New("round is not open")
	ErrRoundNotStale = errors.New("round has not been open long enough")
	// ErrDuplicateTransaction is a new call under an id already booked; the
	// command layer answers such retries before they reach a decision.
	ErrDuplicateTransaction = errors.New("transaction id already used")
	// ErrBalanceLimit refuses a credit that would take the player's
	// balance past the largest its wallet protocol can say
	// (GameTx.MaxBalance): booked, it could not be answered.
	ErrBalanceLimit = errors.New("balance would pass the largest the wallet protocol can carry")
)

// IdempotencyConflictError is returned when an external id is reused with a
// different request. Field names the first field that differs, so the caller
// knows what it changed (TigerBeetle's "exists_with_different_amount").
type IdempotencyConflictError struct {
	Key      string
	Field    string
	Original string
	Given    string
}

func (e *IdempotencyConflictError) Error() string {
	return fmt.Sprintf("external id %s reused with a different %s (original %q, given %q)", e.Key, e.Field, e.Original, e.Given)
}

// ConcurrencyError reports that a stream moved on between load and append:
// the expected version was taken by another writer. Commands retry it.
type ConcurrencyError struct {
	StreamID string
	Expected int64
}

func (e *ConcurrencyError) Error() string {
	return fmt.Sprintf("stream %s: version %d already taken", e.StreamID, e.Expected+1)
}
