package api

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pitboss/pitboss/domain"
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
		if validSignature(secret, body, sig) != expect {
			t.Fatalf("validSignature(%q, %q, %q) = %v, want %v", secret, body, sig, !expect, expect)
		}
		right := hex.EncodeToString(want)
		if !validSignature(secret, body, right) || !validSignature(secret, body, strings.ToUpper(right)) {
			t.Fatalf("the right signature %s is refused", right)
		}
		if len(body) > 0 {
			flipped := append([]byte(nil), body...)
			flipped[0] ^= 1
			if validSignature(secret, flipped, right) {
				t.Fatal("a changed body kept its signature")
			}
		}
	})
}

// FuzzLaunchSignature: sig is accepted exactly when it is the lowercase
// hex HMAC-SHA256 of api_key|user_id|game_uid|balance|ts under the client
// secret.
func FuzzLaunchSignature(f *testing.F) {
	f.Add("pb_key", "user-1", "game", "100.50", "1773500966", "secret", "")
	f.Add("k", "u|x", "g", "1", "2", "s", strings.Repeat("f", 64))
	f.Add("", "", "", "", "", "", "")
	f.Fuzz(func(t *testing.T, key, user, game, balance, ts, secret, sig string) {
		q := url.Values{"api_key": {key}, "user_id": {user}, "game_uid": {game}, "balance": {balance}, "ts": {ts}}
		right := hex.EncodeToString(refHMAC([]byte(secret), []byte(key+"|"+user+"|"+game+"|"+balance+"|"+ts)))
		if got := validLaunchSignature([]byte(secret), q, sig); got != (sig == right) {
			t.Fatalf("sig %q accepted=%v; the right one is %s", sig, got, right)
		}
		if !validLaunchSignature([]byte(secret), q, right) {
			t.Fatal("the right signature is refused")
		}
		if strings.ToUpper(right) != right && validLaunchSignature([]byte(secret), q, strings.ToUpper(right)) {
			t.Fatal("upper-case hex accepted: the spec says lowercase")
		}
	})
}

// refDepth is the nesting depth of valid JSON, from the decoder's tokens.
func refDepth(b []byte) int {
	dec := json.NewDecoder(bytes.NewReader(b))
	d, most := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return most
		}
		if delim, ok := tok.(json.Delim); ok {
			if delim == '{' || delim == '[' {
				d++
				most = max(most, d)
			} else {
				d--
			}
		}
	}
}

// FuzzDecodeJSON: the strict decoder never panics; it refuses with a 400
// in the error vocabulary, and what it accepts is one valid UTF-8 JSON
// value no deeper than the limit, with no U+0000 in a string.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"amount":10.50}`, `{"amount":"1e3"}`, `{"session_id":"a\u0000"}`,
		`{"a":1}`, `[]`, `null`, `{"session_id":1}`, `{"promo":"yes"}`, "\xff", `{"x":` + strings.Repeat("[", 20),
		`{"session_id":"s"} {}`, `{"session_id":"s","session_id":"t"}`, `{"transaction_id":"\\u0000"}`} {
		f.Add([]byte(s))
	}
	targets := []func() any{
		func() any { return &walletCall{} }, func() any { return &createTransactionRequest{} },
		func() any { return &launchRequest{} }, func() any { return &transferLaunchRequest{} },
		func() any { return &webhookRequest{} }, func() any { return &adminClientRequest{} },
		func() any { return &issueKeyRequest{} }, func() any { return &rotateKeyRequest{} },
		func() any { // the demo game's POST /demo/spin body (package demogame)
			return &struct {
				Session string            `json:"session"`
				Stake   domain.AmountText `json:"stake"`
			}{}
		},
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, newV := range targets {
			v := newV()
			err := decodeJSON(b, v)
			if err != nil {
				var ae *Error
				if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest ||
					(ae.Code != CodeInvalidJSON && ae.Code != CodeInvalidRequest) {
					t.Fatalf("%T from %q: %v (%+v)", v, b, err, ae)
				}
				continue
			}
			if !utf8.Valid(b) || !json.Valid(bytes.TrimSpace(b)) || refDepth(b) > maxJSONDepth {
				t.Fatalf("%T accepted %q", v, b)
			}
			if hasNUL(b) {
				t.Fatalf("%T accepted a U+0000 in %q", v, b)
			}
		}
		if json.Valid(b) && depth(b) != refDepth(b) {
			t.Fatalf("depth(%q) = %d, want %d", b, depth(b), refDepth(b))
		}
	})
}
