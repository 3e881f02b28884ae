package delivery_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/delivery"
)

// FuzzVerify: whatever the header, Verify never panics, and it accepts
// only a header carrying t within the tolerance and a v1 equal to the hex
// HMAC-SHA256 of "<t>.<body>" under the secret (computed here, not by the
// code under test). What Sign makes, Verify accepts.
func FuzzVerify(f *testing.F) {
	f.Add("t=1767225600,v1=00", "whsec_x", []byte(`{"a":1}`), int64(0))
	f.Add("", "", []byte(""), int64(0))
	f.Add("t=+1767225600,v1=a,v1=b", "s", []byte("b"), int64(-299))
	f.Add("v1=,t=", "s", []byte("b"), int64(301))
	f.Add("t=99999999999999999999,v1=x", "s", []byte("b"), int64(0))
	f.Fuzz(func(t *testing.T, header, secret string, body []byte, skew int64) {
		now := time.Unix(1767225600, 0)
		if err := delivery.Verify(header, secret, body, now, 5*time.Minute); err == nil {
			var ts string
			var sigs []string
			for _, part := range strings.Split(header, ",") {
				k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
				switch k {
				case "t":
					ts = v
				case "v1":
					sigs = append(sigs, v)
				}
			}
			m := hmac.New(sha256.New, []byte(secret))
			m.Write([]byte(ts + "."))
			m.Write(body)
			want := hex.EncodeToString(m.Sum(nil))
			found := false
			for _, s := range sigs {
				found = found || s == want
			}
			if !found {
				t.Fatalf("accepted %q without the right v1 (%s)", header, want)
			}
		}
		skew %= 1000
		at := now.Add(time.Duration(skew) * time.Second)
		err := delivery.Verify(delivery.Sign(secret, at, body), secret, body, now, 5*time.Minute)
		if inside := skew >= -300 && skew <= 300; (err == nil) != inside {
			t.Fatalf("signed %d s off: %v", skew, err)
		}
	})
}
