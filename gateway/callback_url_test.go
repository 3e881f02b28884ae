package gateway_test

import (
	"strings"
	"testing"

	"github.com/pitboss/pitboss/gateway"
)

func TestCheckCallbackURL(t *testing.T) {
	t.Parallel()
	long := "https://example.com/" + strings.Repeat("a", 2048-len("https://example.com/"))
	tests := []struct {
		name         string
		url          string
		allowPrivate bool
		msg          string // after "url "; "" when accepted
	}{
		{name: "public https", url: "https://hooks.example.com/pitboss?x=1"},
		{name: "public http with port", url: "http://hooks.example.com:8080/in"},
		{name: "public address", url: "https://203.0.113.10/in"},
		{name: "2048 bytes", url: long},
		{name: "private allowed", url: "http://127.0.0.1:9000/in", allowPrivate: true},
		{name: "localhost allowed", url: "http://localhost/in", allowPrivate: true},
		{name: "empty", url: "", msg: "is required"},
		{name: "empty even when private is allowed", url: "", allowPrivate: true, msg: "is required"},
		{name: "2049 bytes", url: long + "a", msg: "must be a URL of at most 2048 characters"},
		{name: "not UTF-8", url: "https://example.com/\xff", msg: "must be a URL of at most 2048 characters"},
		{name: "ftp", url: "ftp://example.com/in", msg: "must be an absolute http or https URL"},
		{name: "relative", url: "/in", msg: "must be an absolute http or https URL"},
		{name: "no host", url: "https:///in", msg: "must be an absolute http or https URL"},
		{name: "opaque", url: "http:example.com", msg: "must be an absolute http or https URL"},
		{name: "unparsable", url: "http://exa mple.com/%zz", msg: "must be an absolute http or https URL"},
		{name: "credentials", url: "https://user:pw@example.com/in", msg: "must not carry credentials"},
		{name: "fragment", url: "https://example.com/in#top", msg: "must not have a fragment"},
		{name: "localhost", url: "http://localhost:8080/in", msg: "points at this machine; callbacks go to public addresses only"},
		{name: "localhost dot", url: "http://LocalHost./in", msg: "points at this machine; callbacks go to public addresses only"},
		{name: "under localhost", url: "http://api.localhost/in", msg: "points at this machine; callbacks go to public addresses only"},
		{name: "loopback", url: "http://127.0.0.1/in", msg: "points at a non-public address; callbacks go to public addresses only"},
		{name: "private", url: "http://10.1.2.3/in", msg: "points at a non-public address; callbacks go to public addresses only"},
		{name: "IPv6 loopback", url: "http://[::1]:80/in", msg: "points at a non-public address; callbacks go to public addresses only"},
		{name: "IPv4-mapped loopback", url: "http://[::ffff:127.0.0.1]/in",
			msg: "points at a non-public address; callbacks go to public addresses only"},
		{name: "link-local metadata", url: "http://169.254.169.254/latest",
			msg: "points at a non-public address; callbacks go to public addresses only"},
		{name: "unspecified", url: "http://0.0.0.0/in", msg: "points at a non-public address; callbacks go to public addresses only"},
		{name: "multicast", url: "http://224.0.0.1/in", msg: "points at a non-public address; callbacks go to public addresses only"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			msg := ""
			if tc.msg != "" {
				msg = "url " + tc.msg
			}
			wantFieldError(t, gateway.CheckCallbackURL("url", tc.url, tc.allowPrivate), "url", msg)
		})
	}
	// the field is named as the caller names it, in the field and the message
	wantFieldError(t, gateway.CheckCallbackURL("--forward-callback-url", "ftp://x", false), "--forward-callback-url",
		"--forward-callback-url must be an absolute http or https URL")
}
