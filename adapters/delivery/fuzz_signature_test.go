package delivery_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/netip"
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

// FuzzIsPublic: an address the guard lets through is none of the ranges
// a callback must never reach, in any of its forms (IPv4-mapped included).
func FuzzIsPublic(f *testing.F) {
	for _, s := range []string{"8.8.8.8", "127.0.0.1", "::ffff:127.0.0.1", "10.1.2.3", "169.254.169.254", "::1",
		"fe80::1", "64:ff9b::a9fe:a9fe", "2002:7f00:1::", "100.64.0.1", "0.0.0.0", "fd00::1", "2606:4700::1111"} {
		f.Add(netip.MustParseAddr(s).AsSlice())
	}
	bad := []netip.Prefix{}
	for _, s := range []string{"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.168.0.0/16", "224.0.0.0/3", "::/127", "fc00::/7", "fe80::/10", "ff00::/8"} {
		bad = append(bad, netip.MustParsePrefix(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a, ok := netip.AddrFromSlice(b)
		if !ok || !delivery.IsPublic(a) {
			return
		}
		for _, p := range bad {
			if p.Contains(a.Unmap()) {
				t.Fatalf("%v (%v) is public to the guard but in %v", a, a.Unmap(), p)
			}
		}
	})
}
