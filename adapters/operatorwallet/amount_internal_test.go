package operatorwallet

import (
	"encoding/json"
	"math/big"
	"testing"

	"github.com/pitboss/pitboss/domain"
)

// FuzzExpandExponent: the plain text of a number in exponent notation is
// the same number, exactly (big.Rat reads both without rounding).
func FuzzExpandExponent(f *testing.F) {
	for _, s := range []string{"1e-06", "1.5E2", "-1.5e-3", "1.50e1", "0e0", "123456789e-20", "1e-40", "9.99e+40",
		"00012.3400e-2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want big.Rat
		if !json.Valid([]byte(s)) || !isNumber(s) {
			return
		}
		if _, ok := want.SetString(s); !ok {
			return
		}
		plain, err := expandExponent(s)
		if err != nil {
			return
		}
		var got big.Rat
		if _, ok := got.SetString(plain); !ok || got.Cmp(&want) != 0 {
			t.Fatalf("expandExponent(%q) = %q, not the same number", s, plain)
		}
	})
}

// isNumber reports whether s is one JSON number in exponent notation.
func isNumber(s string) bool {
	var n json.Number
	return json.Unmarshal([]byte(s), &n) == nil && len(s) > 0 && s[0] != '"'
}

func TestParseAmount(t *testing.T) {
	xrp := domain.MustCurrency("XRP")
	tests := []struct{ in, want string }{
		{"0.000001", "0.000001"}, {"1e-06", "0.000001"}, {"1.5E+2", "150.000000"}, {"-2.5e-1", "-0.250000"},
		{"1e-07", ""}, {"1e-30", ""}, {"1e400", ""}, {"10.0000010", "10.000001"}, {"", ""}, {"1.2.3", ""},
	}
	for _, tt := range tests {
		m, err := parseAmount(json.Number(tt.in), xrp)
		if tt.want == "" {
			if err == nil {
				t.Errorf("parseAmount(%q) = %s, want refused", tt.in, m)
			}
			continue
		}
		if err != nil || m.String() != tt.want {
			t.Errorf("parseAmount(%q) = %s, %v; want %s", tt.in, m, err, tt.want)
		}
	}
}
