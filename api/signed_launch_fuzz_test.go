package api

import (
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzCheckReturnURL: whatever the text, an accepted return_url is an
// absolute http(s) URL without user information whose host is allowed.
func FuzzCheckReturnURL(f *testing.F) {
	for _, s := range []string{"https://casino.example/lobby", "http://casino.example:8080/", "https://casino.example@evil.example/",
		"//casino.example/", "javascript:alert(1)", "https://CASINO.example./", "https://casino.example%2eevil.example/",
		"https://[::1]/", "https:/casino.example", "https://casino.example\\@evil.example/"} {
		f.Add(s)
	}
	allowed := []string{"casino.example", "lobby.example:8443"}
	f.Fuzz(func(t *testing.T, raw string) {
		if checkReturnURL(raw, allowed) != nil {
			return
		}
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("accepted %q that does not parse: %v", raw, err)
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || u.Host == "" {
			t.Fatalf("accepted %q: scheme %q user %v host %q", raw, u.Scheme, u.User, u.Host)
		}
		host := strings.ToLower(u.Hostname())
		if host != "casino.example" && strings.ToLower(u.Host) != "lobby.example:8443" {
			t.Fatalf("accepted %q with host %q", raw, u.Host)
		}
	})
}

// FuzzLaunchTimestamp: ts is digits only; its unit follows the documented
// threshold; the window never accepts more than 120 s (or 120000 ms).
func FuzzLaunchTimestamp(f *testing.F) {
	for _, s := range []string{"1773500966", "1773500966000", "0", "-5", "+5", "1e9", " 1", "99999999999999999999", "١٢٣"} {
		f.Add(s, int64(1773500966))
	}
	f.Fuzz(func(t *testing.T, s string, nowSec int64) {
		if nowSec < 0 || nowSec > 1<<40 {
			return
		}
		ts, err := parseTimestamp(s)
		if err != nil {
			return
		}
		v, perr := strconv.ParseInt(s, 10, 64)
		if perr != nil || v < 0 || strings.TrimLeft(s, "0123456789") != "" || v != ts.value {
			t.Fatalf("accepted %q as %+v", s, ts)
		}
		if ts.millis != (v >= MillisecondThreshold) {
			t.Fatalf("%q: millis %v", s, ts.millis)
		}
		now := time.Unix(nowSec, 0)
		if withinWindow(ts, now) {
			d := v - nowSec
			if ts.millis {
				d = v - now.UnixMilli()
				if d > 120000 || d < -120000 {
					t.Fatalf("%q accepted %d ms away", s, d)
				}
			} else if d > 120 || d < -120 {
				t.Fatalf("%q accepted %d s away", s, d)
			}
		}
	})
}
