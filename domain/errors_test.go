package domain_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/domain"
)

func TestErrorTypesSurviveWrapping(t *testing.T) {
	conflict := fmt.Errorf("bet: %w", &domain.IdempotencyConflictError{Key: "game|acme|pragmatic|b1", Field: "amount",
		Original: "10.00", Given: "11.00"})
	var ic *domain.IdempotencyConflictError
	if !errors.As(conflict, &ic) || ic.Field != "amount" {
		t.Fatalf("errors.As(IdempotencyConflictError) = %v, %+v", errors.As(conflict, &ic), ic)
	}
	for _, part := range []string{"game|acme|pragmatic|b1", "amount", `"10.00"`, `"11.00"`} {
		if !strings.Contains(conflict.Error(), part) {
			t.Errorf("%q does not mention %s", conflict, part)
		}
	}

	race := fmt.Errorf("append: %w", &domain.ConcurrencyError{StreamID: string(wallet), Expected: 4})
	var ce *domain.ConcurrencyError
	if !errors.As(race, &ce) || ce.Expected != 4 {
		t.Fatalf("errors.As(ConcurrencyError) = %v, %+v", errors.As(race, &ce), ce)
	}
	if want := "stream player:acme:p-17:EUR: version 5 already taken"; !strings.HasSuffix(race.Error(), want) {
		t.Errorf("%q, want suffix %q", race, want)
	}
}

var sentinels = []error{domain.ErrInvalidAmount, domain.ErrTooPrecise, domain.ErrAmountOverflow, domain.ErrUnknownCurrency,
	domain.ErrCurrencyMismatch, domain.ErrInsufficientFunds, domain.ErrInvalidArgument, domain.ErrTransactionUnknown,
	domain.ErrAlreadyRolledBack, domain.ErrRolledBackEarlier, domain.ErrBetRolledBack, domain.ErrBetSettled, domain.ErrNotRollbackable,
	domain.ErrPlayerMismatch, domain.ErrNotFound, domain.ErrRoundNotOpen, domain.ErrRoundNotStale}

func TestSentinelErrorsAreDistinct(t *testing.T) {
	for i, a := range sentinels {
		for j, b := range sentinels {
			if i != j && (errors.Is(a, b) || a.Error() == b.Error()) {
				t.Errorf("%q and %q are not distinct", a, b)
			}
		}
	}
}
