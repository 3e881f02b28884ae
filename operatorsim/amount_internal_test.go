package operatorsim

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/domain"
)

// FuzzParseDecimal: whatever the text, an amount read is exactly the
// number written (compared as rationals), and a number refused is never
// half read.
func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"0", "10.50", "-3", "1e-8", "2.5E-7", "0.000000001", "1e400", `"1"`, "null", "1.0e+2", "1e999999999", "1e-99999",
		"99999999999.99999999", "-0"} {
		f.Add(s, uint8(2))
		f.Add(s, uint8(8))
	}
	f.Fuzz(func(t *testing.T, text string, exp uint8) {
		code := map[uint8]string{0: "JPY", 2: "EUR", 3: "KWD", 6: "USDT", 8: "BTC"}[exp%9]
		if code == "" {
			return
		}
		cur := domain.MustCurrency(code)
		minor, err := parseDecimal(json.RawMessage(text), cur)
		if err != nil {
			return
		}
		want, ok := new(big.Rat).SetString(strings.TrimSpace(text)) // a JSON value has no spaces round it
		if !ok {
			t.Fatalf("%q read as %d, but is not a number", text, minor)
		}
		got := new(big.Rat).SetFrac(big.NewInt(minor), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(cur.Exponent())), nil))
		if got.Cmp(want) != 0 {
			t.Fatalf("%q in %s read as %d minor units (%s)", text, code, minor, got.FloatString(cur.Exponent()))
		}
	})
}

// FuzzParseSubunits: a TBB amount read is the integer written.
func FuzzParseSubunits(f *testing.F) {
	for _, s := range []string{"0", "1000", "10.5", "-1", "1e3", "9223372036854775808", "007"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		n, err := parseSubunits(json.RawMessage(text))
		if err != nil {
			return
		}
		if want, ok := new(big.Int).SetString(strings.TrimSpace(text), 10); !ok || want.Cmp(big.NewInt(n)) != 0 || n < 0 {
			t.Fatalf("%q read as %d", text, n)
		}
	})
}
