package caleta

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/wallet"
)

func cur(t *testing.T, code string) domain.Currency {
	t.Helper()
	c, err := domain.ParseCurrency(code)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func statusOf(err error) string {
	s, _ := classify(err)
	return s
}

// TestAmounts: the document's ×100000 integers convert to a currency's
// minor units exactly, both ways, or are refused.
func TestAmounts(t *testing.T) {
	i := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		code  string
		units *int64
		minor int64
		want  string // "" for a conversion
	}{
		{"EUR", i(356_000), 356, ""},           // 3.56
		{"EUR", i(0), 0, ""},                   // a win of 0
		{"EUR", i(1_000), 1, ""},               // 0.01, the smallest
		{"EUR", i(100), 0, StatusWrongTypes},   // 0.001
		{"EUR", i(1_001), 0, StatusWrongTypes}, // 0.01001
		{"EUR", i(-1_000), 0, StatusWrongTypes},
		{"EUR", nil, 0, StatusWrongTypes},
		{"EUR", i(math.MaxInt64 - 807), (math.MaxInt64 - 807) / 1000, ""},
		{"JPY", i(100_000), 1, ""},                   // 1 yen
		{"JPY", i(50_000), 0, StatusWrongTypes},      // half a yen
		{"KWD", i(1_200), 12, ""},                    // 0.012 KWD = 12 fils
		{"KWD", i(1_235), 0, StatusWrongTypes},       // a fraction of a fils
		{"CLF", i(10), 1, ""},                        // 4 decimals
		{"USDT", i(100_000), 0, StatusWrongCurrency}, // 6 decimals: balances not exact
		{"BTC", i(100_000), 0, StatusWrongCurrency},
	} {
		t.Run(fmt.Sprintf("%s %v", tc.code, tc.units), func(t *testing.T) {
			c := cur(t, tc.code)
			m, err := toMoney("amount", tc.units, c)
			if tc.want != "" {
				if err == nil || statusOf(err) != tc.want {
					t.Fatalf("%v (%s), want %s", err, statusOf(err), tc.want)
				}
				return
			}
			if err != nil || m.Minor() != tc.minor || m.Currency() != c {
				t.Fatalf("%v, %v; want %d minor", m, err, tc.minor)
			}
			back, err := toUnits(m)
			if err != nil || back != *tc.units {
				t.Fatalf("back %d, %v; want %d", back, err, *tc.units)
			}
		})
	}
	// A balance beyond the document's integers cannot be said: a known
	// refusal (issue 37), not a fault of ours answered RS_ERROR_UNKNOWN.
	if _, err := toUnits(domain.FromMinor(math.MaxInt64/10, cur(t, "EUR"))); err == nil || statusOf(err) != StatusWrongTypes {
		t.Fatalf("overflowing balance: %v", err)
	}
	// The registry's bound is this dialect's: the largest balance that
	// converts is the registry's MaxBalance, one minor unit more does not.
	spec, _ := gateway.WalletProtocolOf(gateway.WalletProtocolCaleta)
	if spec.AmountDigits != unitDigits {
		t.Fatalf("registry says %d digits, the dialect %d", spec.AmountDigits, unitDigits)
	}
	for _, code := range []string{"EUR", "JPY", "KWD"} {
		c := cur(t, code)
		if _, err := toUnits(domain.FromMinor(spec.MaxBalance(c), c)); err != nil {
			t.Errorf("%s: the registry's largest balance does not convert: %v", code, err)
		}
		if _, err := toUnits(domain.FromMinor(spec.MaxBalance(c)+1, c)); err == nil {
			t.Errorf("%s: one minor unit past the registry's largest balance converts", code)
		}
	}
}

// TestClassify: the ledger's verdicts and the decoder's answer the
// document's statuses; anything else is RS_ERROR_UNKNOWN and unknown.
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err   error
		want  string
		known bool
	}{
		{fmt.Errorf("bet: %w", domain.ErrInsufficientFunds), StatusNotEnoughMoney, true},
		{fmt.Errorf("bet: %w", commands.ErrSessionExpired), StatusTokenExpired, true},
		{&domain.IdempotencyConflictError{Key: "k", Field: "amount"}, StatusDuplicate, true},
		{fmt.Errorf("win: %w", domain.ErrTransactionUnknown), StatusTransactionUnknown, true},
		{fmt.Errorf("win: %w", domain.ErrBetRolledBack), StatusTransactionRolledBk, true},
		{fmt.Errorf("bet: %w", domain.ErrRolledBackEarlier), StatusTransactionRolledBk, true},
		{fmt.Errorf("rollback: %w", domain.ErrBetSettled), StatusUnknown, true},
		{wire.NewError(400, wire.CodeInvalidJSON, "malformed"), StatusWrongSyntax, true},
		{wire.NewError(400, wire.CodeInvalidRequest, "unknown field"), StatusWrongTypes, true},
		{wallet.Refuse(wallet.InvalidGame, "no game"), StatusInvalidGame, true},
		{errors.New("connection refused"), StatusUnknown, false},
	} {
		if got, known := classify(tc.err); got != tc.want || known != tc.known {
			t.Errorf("%v: %s (known %v), want %s (known %v)", tc.err, got, known, tc.want, tc.known)
		}
	}
	for _, v := range wallet.Verdicts() {
		if _, ok := statuses[v]; !ok {
			t.Errorf("verdict %s has no status", v)
		}
	}
}
