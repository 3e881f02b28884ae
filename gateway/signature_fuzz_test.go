package gateway

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// Reference computations for the properties below, written out here and
// not taken from the code under test.
func refHMAC(secret, msg []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write(msg)
	return m.Sum(nil)
}

// FuzzProviderSignature: X-Signature is accepted exactly when it is the
// hex HMAC-SHA256 of the raw body under the provider's secret (either hex
// case); the right signature is always accepted.
func FuzzProviderSignature(f *testing.F) {
	f.Add("secret", []byte(`{"session_id":"s"}`), "")
	f.Add("secret", []byte(`{}`), strings.Repeat("0", 64))
	f.Add("", []byte(""), "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
	f.Add("k", []byte("x"), "zz")
	f.Add("k", []byte("x"), strings.Repeat("a", 63))
	f.Fuzz(func(t *testing.T, secret string, body []byte, sig string) {
		want := refHMAC([]byte(secret), body)
		got, err := hex.DecodeString(sig)
		expect := err == nil && hmac.Equal(got, want)
		if ValidSignature(secret, body, sig) != expect {
			t.Fatalf("ValidSignature(%q, %q, %q) = %v, want %v", secret, body, sig, !expect, expect)
		}
		right := hex.EncodeToString(want)
		if !ValidSignature(secret, body, right) || !ValidSignature(secret, body, strings.ToUpper(right)) {
			t.Fatalf("the right signature %s is refused", right)
		}
		if len(body) > 0 {
			flipped := append([]byte(nil), body...)
			flipped[0] ^= 1
			if ValidSignature(secret, flipped, right) {
				t.Fatal("a changed body kept its signature")
			}
		}
	})
}
