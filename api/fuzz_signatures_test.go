package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
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
