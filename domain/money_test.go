package domain_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/pitboss/pitboss/domain"
)

func TestParseCurrency(t *testing.T) {
	tests := []struct {
		code    string
		wantExp int
		wantErr error
	}{
		{code: "EUR", wantExp: 2},
		{code: "USD", wantExp: 2},
		{code: "GBP", wantExp: 2},
		{code: "JPY", wantExp: 0},
		{code: "KRW", wantExp: 0},
		{code: "CLP", wantExp: 0},
		{code: "KWD", wantExp: 3},
		{code: "BHD", wantExp: 3},
		{code: "TND", wantExp: 3},
		{code: "CLF", wantExp: 4},
		{code: "BTC", wantExp: 8},
		{code: "ETH", wantExp: 9},
		{code: "USDT", wantExp: 6},
		{code: "USDC", wantExp: 6},
		{code: "DOGE", wantExp: 8},
		{code: "eur", wantErr: domain.ErrUnknownCurrency},
		{code: "Eur", wantErr: domain.ErrUnknownCurrency},
		{code: "XXX", wantErr: domain.ErrUnknownCurrency},
		{code: "", wantErr: domain.ErrUnknownCurrency},
		{code: " EUR", wantErr: domain.ErrUnknownCurrency},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.code), func(t *testing.T) {
			c, err := domain.ParseCurrency(tt.code)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				if !c.IsZero() {
					t.Errorf("currency on error = %v, want the zero value", c)
				}
				return
			}
			if c.Code() != tt.code || c.String() != tt.code || c.Exponent() != tt.wantExp || c.IsZero() {
				t.Errorf("got code %q exp %d zero %v, want %q exp %d", c.Code(), c.Exponent(), c.IsZero(), tt.code, tt.wantExp)
			}
		})
	}
}

func TestMustCurrencyPanicsOnUnknownCode(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("MustCurrency(\"NOPE\") did not panic")
		}
	}()
	domain.MustCurrency("NOPE")
}

func TestDefaultCryptoPrecisions(t *testing.T) {
	for code, exp := range domain.DefaultCrypto {
		c, err := domain.ParseCurrency(code)
		if err != nil {
			t.Errorf("%s: %v", code, err)
			continue
		}
		if c.Exponent() != exp || exp > domain.MaxExponent {
			t.Errorf("%s exponent = %d, configured %d (max %d)", code, c.Exponent(), exp, domain.MaxExponent)
		}
	}
}

func TestRegisterCurrency(t *testing.T) {
	// The registry is global: codes here are made up for this test and
	// re-registering one with its own precision is allowed, so -count=N works.
	tests := []struct {
		name    string
		code    string
		exp     int
		wantErr error // nil: accepted; errAny: refused without a sentinel
		wantExp int   // the precision after the call
	}{
		{name: "new crypto code", code: "PBX", exp: 5, wantExp: 5},
		{name: "same code, same precision again", code: "PBX", exp: 5, wantExp: 5},
		{name: "new code with 0 decimals", code: "PBZ0", exp: 0, wantExp: 0},
		{name: "new code with the maximum precision", code: "PBMAX9", exp: domain.MaxExponent, wantExp: domain.MaxExponent},
		{name: "known code with another precision", code: "PBX", exp: 6, wantErr: errAny, wantExp: 5},
		{name: "ISO code with another precision", code: "EUR", exp: 3, wantErr: errAny, wantExp: 2},
		{name: "JPY cannot gain decimals", code: "JPY", exp: 2, wantErr: errAny, wantExp: 0},
		{name: "BTC precision is fixed", code: "BTC", exp: 2, wantErr: errAny, wantExp: 8},
		{name: "ISO code with its own precision", code: "EUR", exp: 2, wantExp: 2},
		{name: "exponent above the maximum", code: "PBY", exp: domain.MaxExponent + 1, wantErr: domain.ErrInvalidAmount},
		{name: "negative exponent", code: "PBY", exp: -1, wantErr: domain.ErrInvalidAmount},
		{name: "lower case code", code: "pbw", exp: 2, wantErr: domain.ErrUnknownCurrency},
		{name: "code too short", code: "PB", exp: 2, wantErr: domain.ErrUnknownCurrency},
		{name: "code too long", code: "PBWXYZQ", exp: 2, wantErr: domain.ErrUnknownCurrency},
		{name: "code with punctuation", code: "PB-W", exp: 2, wantErr: domain.ErrUnknownCurrency},
		{name: "empty code", code: "", exp: 2, wantErr: domain.ErrUnknownCurrency},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := domain.RegisterCurrency(tt.code, tt.exp)
			switch {
			case tt.wantErr == errAny && err == nil:
				t.Fatalf("RegisterCurrency(%q, %d) accepted, want refused", tt.code, tt.exp)
			case tt.wantErr != errAny && !errors.Is(err, tt.wantErr):
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			c, perr := domain.ParseCurrency(tt.code)
			if tt.wantErr != nil && tt.wantErr != errAny {
				if perr == nil {
					t.Fatalf("refused registration left %q registered", tt.code)
				}
				return
			}
			if perr != nil {
				t.Fatalf("ParseCurrency after register: %v", perr)
			}
			if c.Exponent() != tt.wantExp {
				t.Errorf("exponent = %d, want %d", c.Exponent(), tt.wantExp)
			}
		})
	}
}

// errAny marks a case that must fail without naming a sentinel.
var errAny = errors.New("any error")

func TestRegisterCurrencyConcurrentWithParse(t *testing.T) {
	// Registration happens at start-up, but nothing stops a request from
	// parsing meanwhile: the registry must be race-free (run with -race).
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if err := domain.RegisterCurrency(fmt.Sprintf("PBC%d", i), 4); err != nil {
				t.Error(err)
			}
		}()
		go func() {
			defer wg.Done()
			if _, err := domain.ParseMoney("1.25", domain.MustCurrency("EUR")); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}

func TestParseMoney(t *testing.T) {
	clf := domain.MustCurrency("CLF")
	kwd := domain.MustCurrency("KWD")
	eth := domain.MustCurrency("ETH")
	tests := []struct {
		name    string
		in      string
		cur     domain.Currency
		want    int64
		wantErr error
	}{
		{name: "whole euros", in: "10", cur: eur, want: 1000},
		{name: "one decimal", in: "10.5", cur: eur, want: 1050},
		{name: "two decimals", in: "10.55", cur: eur, want: 1055},
		{name: "trailing zero beyond precision", in: "1.500", cur: eur, want: 150},
		{name: "many trailing zeros beyond decimal's 19 digits", in: "1.5000000000000000000000000", cur: eur, want: 150},
		{name: "negative", in: "-3", cur: eur, want: -300},
		{name: "negative cents", in: "-0.05", cur: eur, want: -5},
		{name: "zero", in: "0", cur: eur, want: 0},
		{name: "negative zero", in: "-0.00", cur: eur, want: 0},
		{name: "leading zeros", in: "007.50", cur: eur, want: 750},
		// One spelling of an amount: a proxy or a log that reads "+5", ".5"
		// or "5." may read another number than the ledger would book.
		{name: "plus sign", in: "+5", cur: eur, wantErr: domain.ErrInvalidAmount},
		{name: "no integer digit", in: ".5", cur: eur, wantErr: domain.ErrInvalidAmount},
		{name: "no fraction digit", in: "5.", cur: eur, wantErr: domain.ErrInvalidAmount},
		{name: "negative, no integer digit", in: "-.5", cur: eur, wantErr: domain.ErrInvalidAmount},
		{name: "point alone", in: ".", cur: eur, wantErr: domain.ErrInvalidAmount},
		{name: "largest EUR amount", in: "92233720368547758.07", cur: eur, want: math.MaxInt64},
		{name: "most negative symmetric EUR amount", in: "-92233720368547758.07", cur: eur, want: -math.MaxInt64},

		{name: "one cent too precise", in: "1.505", cur: eur, wantErr: domain.ErrTooPrecise},
		{name: "sub-cent", in: "0.001", cur: eur, wantErr: domain.ErrTooPrecise},
		{name: "significant digit after trailing zeros", in: "1.5001", cur: eur, wantErr: domain.ErrTooPrecise},
		// decimal.Parse rounds beyond 19 significant digits; these must not
		// be silently rounded to 1.00, 10.00 and 0.00.
		{name: "20th significant digit", in: "1.0000000000000000001", cur: eur, wantErr: domain.ErrTooPrecise},
		{name: "21st significant digit", in: "10.000000000000000001", cur: eur, wantErr: domain.ErrTooPrecise},
		{name: "20 decimals rounding to zero", in: "0.00000000000000000001", cur: eur, wantErr: domain.ErrTooPrecise},
		{name: "tiny negative rounding to zero", in: "-0.0000000000000000000000005", cur: eur, wantErr: domain.ErrTooPrecise},

		{name: "JPY whole yen", in: "1000", cur: jpy, want: 1000},
		{name: "JPY with zero decimals", in: "1000.000", cur: jpy, want: 1000},
		{name: "JPY with decimals refused", in: "1000.5", cur: jpy, wantErr: domain.ErrTooPrecise},
		{name: "JPY with a tenth refused", in: "0.1", cur: jpy, wantErr: domain.ErrTooPrecise},
		{name: "KWD three decimals", in: "1.234", cur: kwd, want: 1234},
		{name: "KWD four decimals refused", in: "1.2345", cur: kwd, wantErr: domain.ErrTooPrecise},
		{name: "CLF four decimals", in: "1.2345", cur: clf, want: 12345},
		{name: "BTC one satoshi", in: "0.00000001", cur: btc, want: 1},
		{name: "BTC 8 decimals", in: "1.12345678", cur: btc, want: 112345678},
		{name: "BTC 8 decimals and a trailing zero", in: "1.123456780", cur: btc, want: 112345678},
		{name: "BTC supply", in: "21000000", cur: btc, want: 2_100_000_000_000_000},
		{name: "BTC 9 decimals refused", in: "0.000000001", cur: btc, wantErr: domain.ErrTooPrecise},
		{name: "BTC largest", in: "92233720368.54775807", cur: btc, want: math.MaxInt64},
		{name: "ETH one gwei", in: "0.000000001", cur: eth, want: 1},
		{name: "ETH below a gwei refused", in: "0.0000000001", cur: eth, wantErr: domain.ErrTooPrecise},

		{name: "one cent over the range", in: "92233720368547758.08", cur: eur, wantErr: domain.ErrAmountOverflow},
		{name: "MinInt64 has no positive counterpart", in: "-92233720368547758.08", cur: eur, wantErr: domain.ErrAmountOverflow},
		{name: "20 integer digits", in: "99999999999999999999", cur: eur, wantErr: domain.ErrAmountOverflow},
		{name: "24 integer digits", in: "123456789012345678901234", cur: jpy, wantErr: domain.ErrAmountOverflow},
		{name: "BTC one satoshi over", in: "92233720368.54775808", cur: btc, wantErr: domain.ErrAmountOverflow},

		{name: "empty", in: "", cur: eur, wantErr: domain.ErrInvalidAmount},
		{name: "exponent", in: "1e2", cur: eur, wantErr: domain.ErrInvalidAmount},
		{name: "upper case exponent", in: "1E2", cur: eur, wantErr: domain.ErrInvalidAmount},
		{name: "negative exponent", in: "150e-2", cur: eur, wantErr: domain.ErrInvalidAmount},
		{name: "NaN", in: "NaN", cur: eur, wantErr: domain.ErrInvalidAmount},
		{name: "nan", in: "nan", cur: eur, wantErr: domain.ErrInvalidAmount},
		{name: "Inf", in: "Inf", cur: eur, wantErr: domain.ErrInvalidAmount},
		{name: "+Inf", in: "+Inf", cur: eur, wantErr: domain.ErrInvalidAmount},
		{name: "-Infinity", in: "-Infinity", cur: eur, wantErr: domain.ErrInvalidAmount},
		{name: "leading space", in: " 1", cur: eur, wantErr: domain.ErrInvalidAmount},
		{name: "trailing space", in: "1 ", cur: eur, wantErr: domain.ErrInvalidAmount},
		{name: "digit separator", in: "1_000", cur: eur, wantErr: domain.ErrInvalidAmount},
		{name: "decimal comma", in: "1,5", cur: eur, wantErr: domain.ErrInvalidAmount},
		{name: "two points", in: "1.2.3", cur: eur, wantErr: domain.ErrInvalidAmount},
		{name: "two signs", in: "--1", cur: eur, wantErr: domain.ErrInvalidAmount},
		{name: "sign only", in: "-", cur: eur, wantErr: domain.ErrInvalidAmount},
		{name: "point only", in: ".", cur: eur, wantErr: domain.ErrInvalidAmount},
		{name: "hex", in: "0x10", cur: eur, wantErr: domain.ErrInvalidAmount},
		{name: "fraction", in: "1/2", cur: eur, wantErr: domain.ErrInvalidAmount},
		{name: "letters", in: "ten", cur: eur, wantErr: domain.ErrInvalidAmount},
		{name: "currency suffix", in: "10EUR", cur: eur, wantErr: domain.ErrInvalidAmount},
		{name: "fullwidth digit", in: "１", cur: eur, wantErr: domain.ErrInvalidAmount},
		{name: "NUL byte", in: "1\x00", cur: eur, wantErr: domain.ErrInvalidAmount},
		{name: "longer than 64 characters", in: "1." + strings.Repeat("0", 63), cur: eur, wantErr: domain.ErrInvalidAmount},
		{name: "zero currency", in: "1", cur: domain.Currency{}, wantErr: domain.ErrUnknownCurrency},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := domain.ParseMoney(tt.in, tt.cur)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("ParseMoney(%q, %s) err = %v, want %v", tt.in, tt.cur, err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if m.Minor() != tt.want || m.Currency() != tt.cur {
				t.Errorf("ParseMoney(%q, %s) = %d %s, want %d %s", tt.in, tt.cur, m.Minor(), m.Currency(), tt.want, tt.cur)
			}
		})
	}
}

func TestParseMoneyErrorsAreDistinct(t *testing.T) {
	// The API maps each sentinel to its own error code: a too precise
	// amount must not also claim to be invalid or out of range.
	sentinels := []error{domain.ErrInvalidAmount, domain.ErrTooPrecise, domain.ErrAmountOverflow, domain.ErrUnknownCurrency}
	for _, in := range []string{"1.001", "1e3", "99999999999999999999", ""} {
		_, err := domain.ParseMoney(in, eur)
		n := 0
		for _, s := range sentinels {
			if errors.Is(err, s) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("ParseMoney(%q) = %v matches %d sentinels, want exactly 1", in, err, n)
		}
	}
}

func TestParsePositive(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr error
	}{
		{in: "0.01", want: 1},
		{in: "1.500", want: 150},
		{in: "0", wantErr: domain.ErrInvalidAmount},
		{in: "0.00", wantErr: domain.ErrInvalidAmount},
		{in: "-0.01", wantErr: domain.ErrInvalidAmount},
		{in: "abc", wantErr: domain.ErrInvalidAmount},
		{in: "0.001", wantErr: domain.ErrTooPrecise},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			m, err := domain.ParsePositive(tt.in, eur)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err == nil && m.Minor() != tt.want {
				t.Errorf("minor = %d, want %d", m.Minor(), tt.want)
			}
		})
	}
}

func TestMoneyArithmetic(t *testing.T) {
	hi := domain.FromMinor(math.MaxInt64, eur)
	lo := domain.FromMinor(math.MinInt64, eur)
	one := domain.FromMinor(1, eur)
	tests := []struct {
		name    string
		op      func() (domain.Money, error)
		want    int64
		wantErr error
	}{
		{name: "add", op: func() (domain.Money, error) { return amt("1.50").Add(amt("2.75")) }, want: 425},
		{name: "add negative", op: func() (domain.Money, error) { return amt("1.50").Add(amt("-2.75")) }, want: -125},
		{name: "add up to the maximum", op: func() (domain.Money, error) { return hi.Add(domain.Zero(eur)) }, want: math.MaxInt64},
		{name: "add overflows", op: func() (domain.Money, error) { return hi.Add(one) }, wantErr: domain.ErrAmountOverflow},
		{name: "add underflows", op: func() (domain.Money, error) { return lo.Add(one.Neg()) }, wantErr: domain.ErrAmountOverflow},
		{name: "add across currencies", op: func() (domain.Money, error) { return amt("1").Add(amtIn("1", usd)) }, wantErr: domain.ErrCurrencyMismatch},
		{name: "add EUR to a zero-decimal currency", op: func() (domain.Money, error) { return amtIn("1", jpy).Add(domain.FromMinor(1, eur)) }, wantErr: domain.ErrCurrencyMismatch},
		{name: "sub", op: func() (domain.Money, error) { return amt("1.50").Sub(amt("2.75")) }, want: -125},
		{name: "sub to the minimum", op: func() (domain.Money, error) { return domain.FromMinor(-math.MaxInt64, eur).Sub(one) }, want: math.MinInt64},
		{name: "sub underflows", op: func() (domain.Money, error) { return lo.Sub(one) }, wantErr: domain.ErrAmountOverflow},
		{name: "sub overflows", op: func() (domain.Money, error) { return hi.Sub(one.Neg()) }, wantErr: domain.ErrAmountOverflow},
		{name: "sub of MinInt64", op: func() (domain.Money, error) { return domain.Zero(eur).Sub(lo) }, wantErr: domain.ErrAmountOverflow},
		{name: "sub across currencies", op: func() (domain.Money, error) { return amt("1").Sub(amtIn("1", btc)) }, wantErr: domain.ErrCurrencyMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.op()
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err == nil && got.Minor() != tt.want {
				t.Errorf("= %d, want %d", got.Minor(), tt.want)
			}
		})
	}
}

func TestMoneySignAndCompare(t *testing.T) {
	tests := []struct {
		m              domain.Money
		zero, neg, pos bool
		cmpToOneCent   int
		negated        int64
	}{
		{m: amt("0"), zero: true, cmpToOneCent: -1, negated: 0},
		{m: amt("0.01"), pos: true, cmpToOneCent: 0, negated: -1},
		{m: amt("-0.01"), neg: true, cmpToOneCent: -1, negated: 1},
		{m: amt("5"), pos: true, cmpToOneCent: 1, negated: -500},
	}
	for _, tt := range tests {
		t.Run(tt.m.String(), func(t *testing.T) {
			if tt.m.IsZero() != tt.zero || tt.m.IsNegative() != tt.neg || tt.m.IsPositive() != tt.pos {
				t.Errorf("zero/neg/pos = %v/%v/%v, want %v/%v/%v", tt.m.IsZero(), tt.m.IsNegative(), tt.m.IsPositive(), tt.zero, tt.neg, tt.pos)
			}
			if got := tt.m.Cmp(amt("0.01")); got != tt.cmpToOneCent {
				t.Errorf("Cmp(0.01) = %d, want %d", got, tt.cmpToOneCent)
			}
			if n := tt.m.Neg(); n.Minor() != tt.negated || n.Currency() != eur {
				t.Errorf("Neg = %d %s, want %d EUR", n.Minor(), n.Currency(), tt.negated)
			}
		})
	}
}

func TestMoneyString(t *testing.T) {
	tests := []struct {
		m    domain.Money
		want string
	}{
		{m: domain.FromMinor(150, eur), want: "1.50"},
		{m: domain.FromMinor(5, eur), want: "0.05"},
		{m: domain.FromMinor(-5, eur), want: "-0.05"},
		{m: domain.FromMinor(-150, eur), want: "-1.50"},
		{m: domain.Zero(eur), want: "0.00"},
		{m: domain.FromMinor(150, jpy), want: "150"},
		{m: domain.Zero(jpy), want: "0"},
		{m: domain.FromMinor(1, btc), want: "0.00000001"},
		{m: domain.FromMinor(100_000_000, btc), want: "1.00000000"},
		{m: domain.FromMinor(math.MaxInt64, eur), want: "92233720368547758.07"},
		{m: domain.FromMinor(-math.MaxInt64, eur), want: "-92233720368547758.07"},
		{m: domain.FromMinor(1234, domain.MustCurrency("KWD")), want: "1.234"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.m.String(); got != tt.want {
				t.Errorf("String = %q, want %q", got, tt.want)
			}
			if got := domain.FormatMinor(tt.m.Minor(), tt.m.Currency().Exponent()); got != tt.want {
				t.Errorf("FormatMinor = %q, want %q", got, tt.want)
			}
			back, err := domain.ParseMoney(tt.want, tt.m.Currency())
			if err != nil || back != tt.m {
				t.Errorf("ParseMoney(String()) = %v, %v; want %v", back, err, tt.m)
			}
		})
	}
}

func TestMoneyMarshalJSONIsAnExactNumber(t *testing.T) {
	b, err := json.Marshal(struct {
		A domain.Money `json:"a"`
		B domain.Money `json:"b"`
		C domain.Money `json:"c"`
	}{A: amt("10.5"), B: amtIn("0.1", btc), C: domain.FromMinor(math.MaxInt64, eur)})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"a":10.50,"b":0.10000000,"c":92233720368547758.07}`
	if string(b) != want {
		t.Fatalf("json = %s, want %s", b, want)
	}
	var back struct{ A, B, C json.Number }
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("the JSON is not valid numbers: %v", err)
	}
}
