package domain

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"
)

// An exchange rate is data (docs/reporting-currency.md): per currency pair
// and UTC day, 1 unit of Base is Rate units of Quote. Rates are exact
// decimals, never floats; a conversion is exact rational arithmetic rounded
// once, half away from zero, to the target currency's minor units.

// Bounds of a rate's text: enough for any fiat or crypto cross rate
// (1 BTC in IDR, 1 IDR in BTC) without letting a rate be a vector for
// giant numbers.
const (
	MaxRateDigits   = 30 // significant digits, before and after the point
	MaxRateDecimals = 18
)

// ErrInvalidRate is returned for a rate that is not a positive plain
// decimal within the bounds.
var ErrInvalidRate = errors.New("invalid exchange rate")

// ParseRate reads a rate: a positive plain decimal ("1.0842", "27500",
// "0.000000036"), digits and at most one point between digits, at most
// MaxRateDigits digits of which at most MaxRateDecimals after the point.
func ParseRate(s string) (*big.Rat, error) {
	whole, frac, hasPoint := strings.Cut(s, ".")
	if !allDigits(whole) || (hasPoint && !allDigits(frac)) {
		return nil, fmt.Errorf("%w: %q is not a plain decimal (digits, one point between digits)", ErrInvalidRate, clip(s))
	}
	if len(frac) > MaxRateDecimals {
		return nil, fmt.Errorf("%w: %q has more than %d decimals", ErrInvalidRate, clip(s), MaxRateDecimals)
	}
	if len(strings.TrimLeft(whole, "0"))+len(frac) > MaxRateDigits {
		return nil, fmt.Errorf("%w: %q has more than %d digits", ErrInvalidRate, clip(s), MaxRateDigits)
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || r.Sign() <= 0 {
		return nil, fmt.Errorf("%w: %q must be more than zero", ErrInvalidRate, clip(s))
	}
	return r, nil
}

// FormatRate writes r as the shortest plain decimal that ParseRate reads
// back to r, when r has at most MaxRateDecimals decimals.
func FormatRate(r *big.Rat) string {
	s := r.FloatString(MaxRateDecimals)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// ErrConversionOverflow is returned when a converted amount does not fit
// the target currency's minor units.
var ErrConversionOverflow = errors.New("converted amount out of range")

// ConvertMinor converts minor units of from at rate (1 from = rate to)
// into minor units of to: minor / 10^exp(from) × rate × 10^exp(to),
// rounded half away from zero.
func ConvertMinor(minor int64, from Currency, rate *big.Rat, to Currency) (int64, error) {
	v := new(big.Rat).SetInt64(minor)
	v.Mul(v, rate)
	v.Mul(v, new(big.Rat).SetFrac(pow10Big(to.Exponent()), pow10Big(from.Exponent())))
	n := roundHalfAway(v)
	if !n.IsInt64() {
		return 0, fmt.Errorf("%w: %d %s at %s in %s", ErrConversionOverflow, minor, from.Code(), FormatRate(rate), to.Code())
	}
	return n.Int64(), nil
}

func pow10Big(exp int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(exp)), nil)
}

// roundHalfAway rounds v to the nearest integer, halves away from zero.
func roundHalfAway(v *big.Rat) *big.Int {
	num, den := new(big.Int).Set(v.Num()), v.Denom()
	neg := num.Sign() < 0
	num.Abs(num)
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	if r.Lsh(r, 1).Cmp(den) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if neg {
		q.Neg(q)
	}
	return q
}

// FXRate is one exchange rate as data: on the UTC day Day, 1 Base is Rate
// (plain decimal text, ParseRate) Quote.
type FXRate struct {
	Base, Quote string
	Day         time.Time
	Rate        string
}

// NewFXRate checks a rate given as text: both currencies configured and
// different, the day a UTC date (YYYY-MM-DD, years 0001–9999), the rate as
// ParseRate reads it (kept in its shortest form). Errors are FieldErrors
// naming base, quote, day or rate.
func NewFXRate(base, quote, day, rate string) (FXRate, error) {
	var r FXRate
	if _, err := ParseCurrency(base); err != nil {
		return r, &FieldError{Field: "base", Message: fmt.Sprintf("base currency %q is not configured", clip(base))}
	}
	if _, err := ParseCurrency(quote); err != nil {
		return r, &FieldError{Field: "quote", Message: fmt.Sprintf("quote currency %q is not configured", clip(quote))}
	}
	if base == quote {
		return r, &FieldError{Field: "quote", Message: "a rate needs two different currencies (the rate of a currency to itself is 1)"}
	}
	d, err := time.Parse(time.DateOnly, day)
	if err != nil || d.Year() < 1 {
		return r, &FieldError{Field: "day", Message: fmt.Sprintf("day %q must be a UTC date such as 2026-11-25", clip(day))}
	}
	v, err := ParseRate(rate)
	if err != nil {
		return r, &FieldError{Field: "rate", Message: err.Error()}
	}
	return FXRate{Base: base, Quote: quote, Day: d, Rate: FormatRate(v)}, nil
}

// RoundRat rounds v half away from zero to an integer; ok is false when it
// does not fit int64.
func RoundRat(v *big.Rat) (n int64, ok bool) {
	r := roundHalfAway(v)
	return r.Int64(), r.IsInt64()
}
