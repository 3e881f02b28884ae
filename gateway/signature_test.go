package gateway_test

import (
	"strings"
	"testing"

	"github.com/pitboss/pitboss/gateway"
)

// The expected values come from outside the code: RFC 4231's test case 2,
// and `openssl dgst -sha256 -hmac whsec_x` over a delivery's "<t>.<body>".
func TestSignature(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		secret string
		msg    [][]byte
		want   string
	}{
		{"RFC 4231 case 2", "Jefe", [][]byte{[]byte("what do ya want for nothing?")},
			"5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
		{"parts are signed one after the other", "whsec_x", [][]byte{[]byte("1700000000"), []byte("."), []byte(`{"a":1}`)},
			"b3438763ab46d9634b9844c8722818eaf523f803db1327484c6067462a5fd6d1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := gateway.Signature(tc.secret, tc.msg...); got != tc.want {
				t.Errorf("Signature = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestValidSignature(t *testing.T) {
	t.Parallel()
	body := []byte("what do ya want for nothing?")
	const right = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
	tests := []struct {
		name   string
		secret string
		sig    string
		want   bool
	}{
		{"right", "Jefe", right, true},
		{"upper-case hex", "Jefe", strings.ToUpper(right), true},
		{"other secret", "jefe", right, false},
		{"one digit off", "Jefe", right[:63] + "4", false},
		{"short", "Jefe", right[:62], false},
		{"odd length", "Jefe", right[:63], false},
		{"not hex", "Jefe", strings.Repeat("g", 64), false},
		{"empty", "Jefe", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := gateway.ValidSignature(tc.secret, body, tc.sig); got != tc.want {
				t.Errorf("ValidSignature(%q, %q) = %v, want %v", tc.secret, tc.sig, got, tc.want)
			}
		})
	}
}

// TestSameSecret: only the exact secret matches, whatever its case or
// length; an empty secret matches nothing, not even an empty token.
func TestSameSecret(t *testing.T) {
	for _, tc := range []struct {
		given, secret string
		want          bool
	}{
		{"s3cret", "s3cret", true},
		{"s3cre", "s3cret", false},
		{"s3cretx", "s3cret", false},
		{"S3cret", "s3cret", false},
		{"", "", false},
		{"", "s3cret", false},
	} {
		if got := gateway.SameSecret(tc.given, tc.secret); got != tc.want {
			t.Errorf("SameSecret(%q, %q) = %v", tc.given, tc.secret, got)
		}
	}
}
