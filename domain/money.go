package domain

import (
	"fmt"
	"math"
	"strings"

	"github.com/govalues/decimal"
)

// Money is an exact amount in minor units of one currency. Amounts are never
// floating point: they are parsed from decimal text and kept as int64 minor
// units, so sums are exact and comparisons are cheap. Every arithmetic
// operation is overflow-checked.
type Money struct {
	minor int64
	cur   Currency
}

// Zero is the zero amount in c.
func Zero(c Currency) Money { return Money{cur: c} }

// FromMinor builds an amount from minor units (cents for EUR).
func FromMinor(minor int64, c Currency) Money { return Money{minor: minor, cur: c} }

// ParseMoney parses decimal text ("10.5", "-3", "0.00000001") in currency c.
// Trailing zeros beyond the currency's precision are tolerated ("1.500" EUR);
// significant digits beyond it are refused with ErrTooPrecise. Exponent
// notation, NaN, infinities and empty input are refused.
func ParseMoney(s string, c Currency) (Money, error) {
	if c.IsZero() {
		return Money{}, ErrUnknownCurrency
	}
	if len(s) > 64 || !plainDecimal(s) {
		return Money{}, fmt.Errorf("amount %q: %w", clip(s), ErrInvalidAmount)
	}
	d, err := decimal.Parse(s)
	if err != nil {
		if strings.Contains(err.Error(), "overflow") {
			return Money{}, fmt.Errorf("amount %q: %w", clip(s), ErrAmountOverflow)
		}
		return Money{}, fmt.Errorf("amount %q: %w", clip(s), ErrInvalidAmount)
	}
	exp := c.Exponent()
	// decimal.Parse silently rounds beyond 19 significant digits
	// ("1.0000000000000000001" becomes 1), so count the significant decimals
	// in the text itself. The text is plain decimal here: Parse accepted it
	// and exponents were refused above.
	if i := strings.IndexByte(s, '.'); i >= 0 && len(strings.TrimRight(s[i+1:], "0")) > exp {
		return Money{}, fmt.Errorf("amount %s in %s (%d decimals allowed): %w", clip(s), c.code, exp, ErrTooPrecise)
	}
	d = d.Trim(exp)
	if d.Scale() > exp {
		return Money{}, fmt.Errorf("amount %s in %s (%d decimals allowed): %w", s, c.code, exp, ErrTooPrecise)
	}
	whole, frac, ok := d.Int64(exp)
	if !ok {
		return Money{}, fmt.Errorf("amount %q: %w", clip(s), ErrAmountOverflow)
	}
	minor, ok := mulAdd(whole, pow10[exp], frac)
	// MinInt64 has no positive counterpart: refusing it keeps Neg and Sub
	// exact for every parsed amount.
	if !ok || minor == math.MinInt64 {
		return Money{}, fmt.Errorf("amount %q: %w", clip(s), ErrAmountOverflow)
	}
	return Money{minor: minor, cur: c}, nil
}

// plainDecimal reports whether s is the one spelling of an amount: an
// optional minus sign, digits, and a point only between digits. "+5",
// ".5" and "5." are refused, so every reader of a request (a proxy, a
// log, the ledger) reads the same number from it.
func plainDecimal(s string) bool {
	whole, frac, point := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	return allDigits(whole) && (!point || allDigits(frac))
}

// allDigits reports whether s is one or more ASCII digits.
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// ParsePositive parses an amount that must be greater than zero.
func ParsePositive(s string, c Currency) (Money, error) {
	m, err := ParseMoney(s, c)
	if err != nil {
		return Money{}, err
	}
	if m.minor <= 0 {
		return Money{}, fmt.Errorf("amount %s must be greater than zero: %w", s, ErrInvalidAmount)
	}
	return m, nil
}

// Minor returns the amount in minor units.
func (m Money) Minor() int64 { return m.minor }

// Currency returns the amount's currency.
func (m Money) Currency() Currency { return m.cur }

// IsZero, IsNegative and IsPositive report the sign.
func (m Money) IsZero() bool     { return m.minor == 0 }
func (m Money) IsNegative() bool { return m.minor < 0 }
func (m Money) IsPositive() bool { return m.minor > 0 }

// Add returns m+o; both must be in the same currency.
func (m Money) Add(o Money) (Money, error) {
	if m.cur != o.cur {
		return Money{}, fmt.Errorf("%s + %s: %w", m.cur, o.cur, ErrCurrencyMismatch)
	}
	s, ok := addInt64(m.minor, o.minor)
	if !ok {
		return Money{}, fmt.Errorf("%s + %s: %w", m, o, ErrAmountOverflow)
	}
	return Money{minor: s, cur: m.cur}, nil
}

// Sub returns m-o; both must be in the same currency.
func (m Money) Sub(o Money) (Money, error) {
	if o.minor == math.MinInt64 {
		return Money{}, ErrAmountOverflow
	}
	return m.Add(Money{minor: -o.minor, cur: o.cur})
}

// Neg returns -m. MinInt64 cannot be produced by parsing, so it cannot occur.
func (m Money) Neg() Money { return Money{minor: -m.minor, cur: m.cur} }

// Cmp compares two amounts of the same currency.
func (m Money) Cmp(o Money) int {
	switch {
	case m.minor < o.minor:
		return -1
	case m.minor > o.minor:
		return 1
	}
	return 0
}

// String formats the amount with exactly the currency's decimals: "10.50".
func (m Money) String() string { return FormatMinor(m.minor, m.cur.Exponent()) }

// MarshalJSON writes the amount as a JSON number with the currency's
// decimals ("10.50"), built from the integer, never from a float.
func (m Money) MarshalJSON() ([]byte, error) { return []byte(m.String()), nil }

// FormatMinor formats minor units with exp decimals.
func FormatMinor(minor int64, exp int) string {
	d, err := decimal.New(minor, exp)
	if err != nil { // |minor| beyond 19 digits cannot happen for int64 except MinInt64
		return fmt.Sprintf("%d", minor)
	}
	return d.Pad(exp).String()
}

var pow10 = [...]int64{1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000}

func addInt64(a, b int64) (int64, bool) {
	s := a + b
	if (a > 0 && b > 0 && s < 0) || (a < 0 && b < 0 && s >= 0) {
		return 0, false
	}
	return s, true
}

func mulAdd(a, b, c int64) (int64, bool) {
	if a != 0 && (a > math.MaxInt64/b || a < math.MinInt64/b) {
		return 0, false
	}
	return addInt64(a*b, c)
}

func clip(s string) string {
	if len(s) > 32 {
		return s[:32] + "…"
	}
	return s
}
