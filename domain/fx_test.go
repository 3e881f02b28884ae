package domain_test

import (
	"errors"
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/pitboss/pitboss/domain"
)

func TestParseRate(t *testing.T) {
	tests := []struct {
		in   string
		want string // FormatRate of the result; "" = refused
	}{
		{"1.0842", "1.0842"},
		{"27500", "27500"},
		{"0.000000036", "0.000000036"},
		{"1.500", "1.5"},
		{"007.25", "7.25"},
		{"0.000000000000000001", "0.000000000000000001"},
		{"123456789012.123456789012345678", "123456789012.123456789012345678"},
		{"0", ""},
		{"0.000", ""},
		{"-1.2", ""},
		{"+1.2", ""},
		{"1.", ""},
		{".5", ""},
		{"1e3", ""},
		{"1,5", ""},
		{" 1.5", ""},
		{"", ""},
		{"0.0000000000000000001", ""},            // 19 decimals
		{"1234567890123.123456789012345678", ""}, // 31 digits
		{"١.٥", ""},                              // Arabic-Indic digits
		{"1.5.1", ""},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			r, err := domain.ParseRate(tc.in)
			if tc.want == "" {
				if !errors.Is(err, domain.ErrInvalidRate) {
					t.Fatalf("ParseRate(%q) = %v, %v; want ErrInvalidRate", tc.in, r, err)
				}
				return
			}
			if err != nil || domain.FormatRate(r) != tc.want {
				t.Fatalf("ParseRate(%q) = %v, %v; want %s", tc.in, r, err, tc.want)
			}
		})
	}
}

func TestConvertMinor(t *testing.T) {
	eur, usd, jpy, btc, kwd := domain.MustCurrency("EUR"), domain.MustCurrency("USD"), domain.MustCurrency("JPY"),
		domain.MustCurrency("BTC"), domain.MustCurrency("KWD")
	rate := func(s string) *big.Rat {
		r, err := domain.ParseRate(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	tests := []struct {
		name     string
		minor    int64
		from     domain.Currency
		rate     *big.Rat
		to       domain.Currency
		want     int64
		overflow bool
	}{
		{"EUR 100.00 at 1.0842", 10000, eur, rate("1.0842"), usd, 10842, false},
		{"half a cent rounds away from zero", 50, eur, rate("1.01"), usd, 51, false},      // 0.505
		{"negative half rounds away from zero", -50, eur, rate("1.01"), usd, -51, false},  // -0.505
		{"just under half rounds down", 50, eur, rate("1.0099"), usd, 50, false},          // 0.50495
		{"to a currency without decimals", 12345, eur, rate("161.37"), jpy, 19921, false}, // 123.45 × 161.37 = 19920.9
		{"from a currency without decimals", 1000, jpy, rate("0.0062"), eur, 620, false},  // 6.20
		{"to three decimals", 10000, usd, rate("0.3071"), kwd, 30710, false},              // 30.710
		{"crypto to fiat", 150_000_000, btc, rate("91234.56"), usd, 13685184, false},      // 1.5 BTC
		{"fiat to crypto", 10000, usd, rate("0.0000109607"), btc, 109607, false},          // 100 USD = 0.00109607 BTC
		{"a tiny result is zero", 1, eur, rate("0.004"), usd, 0, false},
		{"an inverse rate, exact until the rounding", 300, eur, new(big.Rat).Inv(rate("3")), usd, 100, false},
		{"out of range", math.MaxInt64, eur, rate("1000"), usd, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := domain.ConvertMinor(tc.minor, tc.from, tc.rate, tc.to)
			if tc.overflow {
				if !errors.Is(err, domain.ErrConversionOverflow) {
					t.Fatalf("got %d, %v; want ErrConversionOverflow", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

func TestNewFXRate(t *testing.T) {
	tests := []struct {
		name, base, quote, day, rate string
		field                        string // "" = accepted
		want                         string
	}{
		{"a rate", "EUR", "USD", "2026-11-25", "1.08420", "", "1.0842"},
		{"crypto", "BTC", "EUR", "2026-11-25", "84000.5", "", "84000.5"},
		{"unknown base", "XXX", "USD", "2026-11-25", "1", "base", ""},
		{"lower-case quote", "EUR", "usd", "2026-11-25", "1", "quote", ""},
		{"the same currency", "EUR", "EUR", "2026-11-25", "1", "quote", ""},
		{"a time, not a day", "EUR", "USD", "2026-11-25T00:00:00Z", "1", "day", ""},
		{"year zero", "EUR", "USD", "0000-01-01", "1", "day", ""},
		{"a negative rate", "EUR", "USD", "2026-11-25", "-1", "rate", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := domain.NewFXRate(tc.base, tc.quote, tc.day, tc.rate)
			if tc.field == "" {
				if err != nil || r.Rate != tc.want || r.Day.Format(time.DateOnly) != tc.day {
					t.Fatalf("%+v %v, want rate %s", r, err, tc.want)
				}
				return
			}
			var fe *domain.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("%+v %v, want a FieldError on %s", r, err, tc.field)
			}
		})
	}
}
