package gateway_test

import (
	"fmt"
	"net/netip"
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
		{name: "public address", url: "https://8.8.8.8/in"},
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
		{name: "loopback", url: "http://127.0.0.1/in", msg: "points at a non-public address (127.0.0.1: loopback); callbacks go to public addresses only"},
		{name: "private", url: "http://10.1.2.3/in", msg: "points at a non-public address (10.1.2.3: private); callbacks go to public addresses only"},
		{name: "IPv6 loopback", url: "http://[::1]:80/in", msg: "points at a non-public address (::1: loopback); callbacks go to public addresses only"},
		{name: "IPv4-mapped loopback", url: "http://[::ffff:127.0.0.1]/in",
			msg: "points at a non-public address (::ffff:127.0.0.1: loopback); callbacks go to public addresses only"},
		{name: "link-local metadata", url: "http://169.254.169.254/latest",
			msg: "points at an address no callback may reach (169.254.169.254: link-local)"},
		{name: "link-local metadata when private is allowed", url: "http://169.254.169.254/latest", allowPrivate: true,
			msg: "points at an address no callback may reach (169.254.169.254: link-local)"},
		{name: "unspecified", url: "http://0.0.0.0/in", msg: "points at an address no callback may reach (0.0.0.0: this network)"},
		{name: "multicast", url: "http://224.0.0.1/in", msg: "points at an address no callback may reach (224.0.0.1: multicast)"},
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

// TestCheckCallbackURLEveryForm: every spelling of an inside address that
// a browser, a resolver or the kernel reads as one — integer and octal or
// hex IPv4, short forms, IPv4 carried in IPv6 (compatible, mapped,
// translated, NAT64, 6to4, Teredo) — and every special-purpose range is
// refused at registration as the delivery client refuses it at connect
// time (issue 17, item 5). want is a part of the message; "" accepts.
func TestCheckCallbackURLEveryForm(t *testing.T) {
	t.Parallel()
	const (
		nonPublic = "points at a non-public address"
		never     = "points at an address no callback may reach"
		unusual   = "writes an IP address in an unusual form"
	)
	tests := []struct {
		url          string
		allowPrivate bool
		want         string
	}{
		// IPv4 spellings of loopback and of "this network"
		{url: "http://2130706433/", want: nonPublic + " (2130706433 is 127.0.0.1: loopback)"},
		{url: "http://0/", want: never + " (0 is 0.0.0.0: this network)"},
		{url: "http://0177.0.0.1/", want: nonPublic + " (0177.0.0.1 is 127.0.0.1: loopback)"},
		{url: "http://0x7f.1/", want: nonPublic + " (0x7f.1 is 127.0.0.1: loopback)"},
		{url: "http://0X7F000001/", want: nonPublic + " (0x7f000001 is 127.0.0.1: loopback)"},
		{url: "http://017700000001:8080/", want: nonPublic + " (017700000001 is 127.0.0.1: loopback)"},
		{url: "http://127.1/", want: nonPublic + " (127.1 is 127.0.0.1: loopback)"},
		{url: "http://127.0.1/", want: nonPublic + " (127.0.1 is 127.0.0.1: loopback)"},
		{url: "http://127.0.0.1./", want: nonPublic + " (127.0.0.1. is 127.0.0.1: loopback)"},
		{url: "http://0x7f.0x0.0x0.0x1/", want: nonPublic + " (0x7f.0x0.0x0.0x1 is 127.0.0.1: loopback)"},
		{url: "http://0.0.0.0/", want: never + " (0.0.0.0: this network)"},
		// the cloud metadata address in any encoding, refused whatever the setting
		{url: "http://169.254.169.254/latest", allowPrivate: true, want: never + " (169.254.169.254: link-local)"},
		{url: "http://2852039166/", allowPrivate: true, want: never + " (2852039166 is 169.254.169.254: link-local)"},
		{url: "http://0xa9.0xfe.0xa9.0xfe/", allowPrivate: true, want: never + " (0xa9.0xfe.0xa9.0xfe is 169.254.169.254: link-local)"},
		{url: "http://0251.0376.0251.0376/", allowPrivate: true, want: never + " (0251.0376.0251.0376 is 169.254.169.254: link-local)"},
		{url: "http://169.254.43518/", allowPrivate: true, want: never + " (169.254.43518 is 169.254.169.254: link-local)"},
		{url: "http://[::ffff:169.254.169.254]/", allowPrivate: true, want: never + " (::ffff:169.254.169.254: link-local)"},
		{url: "http://[::a9fe:a9fe]/", allowPrivate: true, want: never + " (::a9fe:a9fe (IPv4-compatible form of 169.254.169.254): link-local)"},
		{url: "http://[64:ff9b::a9fe:a9fe]/", allowPrivate: true, want: never + " (64:ff9b::a9fe:a9fe (NAT64 form of 169.254.169.254): link-local)"},
		{url: "http://[64:ff9b:1::a9fe:a9fe]/", allowPrivate: true,
			want: never + " (64:ff9b:1::a9fe:a9fe (local-use NAT64 form of 169.254.169.254): link-local)"},
		{url: "http://[64:ff9b:1:a9fe:a9:fe00::]/", allowPrivate: true,
			want: never + " (64:ff9b:1:a9fe:a9:fe00:: (local-use NAT64 form of 169.254.169.254): link-local)"},
		{url: "http://[2002:a9fe:a9fe::1]/", allowPrivate: true, want: never + " (2002:a9fe:a9fe::1 (6to4 form of 169.254.169.254): link-local)"},
		{url: "http://[2001:0:4136:e378:8000:63bf:5601:5601]/", allowPrivate: true,
			want: never + " (2001:0:4136:e378:8000:63bf:5601:5601 (Teredo form of 169.254.169.254): link-local)"},
		{url: "http://[fe80::1]/", allowPrivate: true, want: never + " (fe80::1: link-local)"},
		{url: "http://[fe80::1%25eth0]/", allowPrivate: true, want: "must not name an IPv6 zone"},
		// IPv4 carried in IPv6
		{url: "http://[::127.0.0.1]/", want: nonPublic + " (::7f00:1 (IPv4-compatible form of 127.0.0.1): loopback)"},
		{url: "http://[::7f00:1]/", want: nonPublic + " (::7f00:1 (IPv4-compatible form of 127.0.0.1): loopback)"},
		{url: "http://[::ffff:7f00:1]/", want: nonPublic + " (::ffff:127.0.0.1: loopback)"},
		{url: "http://[::ffff:0:7f00:1]/", want: nonPublic + " (::ffff:0:7f00:1 (IPv4-translated form of 127.0.0.1): loopback)"},
		{url: "http://[64:ff9b::7f00:1]/", want: nonPublic + " (64:ff9b::7f00:1 (NAT64 form of 127.0.0.1): loopback)"},
		{url: "http://[64:ff9b::a00:1]/", want: nonPublic + " (64:ff9b::a00:1 (NAT64 form of 10.0.0.1): private)"},
		{url: "http://[64:ff9b:1::7f00:1]/", want: nonPublic + " (64:ff9b:1::7f00:1: local-use NAT64)"},
		{url: "http://[64:ff9b:1:7f00:0:100::]/", want: nonPublic + " (64:ff9b:1:7f00:0:100::: local-use NAT64)"},
		{url: "http://[64:ff9b:1::808:808]/", want: nonPublic + " (64:ff9b:1::808:808: local-use NAT64)"},
		{url: "http://[2002:7f00:1::]/", want: nonPublic + " (2002:7f00:1:: (6to4 form of 127.0.0.1): loopback)"},
		{url: "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",
			want: nonPublic + " (2001:0:4136:e378:8000:63bf:80ff:fffe (Teredo form of 127.0.0.1): loopback)"},
		{url: "http://[2001:0:4136:e378:8000:63bf:f7f7:f7f7]/", want: nonPublic + " (2001:0:4136:e378:8000:63bf:f7f7:f7f7: Teredo)"},
		// IPv6 ranges
		{url: "http://[::1]/", want: nonPublic + " (::1: loopback)"},
		{url: "http://[::]/", want: never + " (::: unspecified)"},
		{url: "http://[fec0::1]/", want: nonPublic + " (fec0::1: site-local)"},
		{url: "http://[fc00::1]/", want: nonPublic + " (fc00::1: unique local)"},
		{url: "http://[fd12:3456::1]/", want: nonPublic + " (fd12:3456::1: unique local)"},
		{url: "http://[2001:db8::1]/", want: nonPublic + " (2001:db8::1: documentation)"},
		{url: "http://[3fff::1]/", want: nonPublic + " (3fff::1: documentation)"},
		{url: "http://[100::1]/", want: nonPublic + " (100::1: discard-only)"},
		{url: "http://[ff02::1]/", allowPrivate: true, want: never + " (ff02::1: multicast)"},
		// IPv4 ranges
		{url: "http://10.0.0.1/", want: nonPublic + " (10.0.0.1: private)"},
		{url: "http://172.31.255.255/", want: nonPublic + " (172.31.255.255: private)"},
		{url: "http://192.168.0.1/", want: nonPublic + " (192.168.0.1: private)"},
		{url: "http://100.64.0.1/", want: nonPublic + " (100.64.0.1: carrier-grade NAT)"},
		{url: "http://100.127.255.254/", want: nonPublic + " (100.127.255.254: carrier-grade NAT)"},
		{url: "http://192.0.0.8/", want: nonPublic + " (192.0.0.8: IETF protocol assignments)"},
		{url: "http://192.0.2.1/", want: nonPublic + " (192.0.2.1: documentation)"},
		{url: "http://198.51.100.1/", want: nonPublic + " (198.51.100.1: documentation)"},
		{url: "http://203.0.113.1/", want: nonPublic + " (203.0.113.1: documentation)"},
		{url: "http://198.18.0.1/", want: nonPublic + " (198.18.0.1: benchmarking)"},
		{url: "http://198.19.255.255/", want: nonPublic + " (198.19.255.255: benchmarking)"},
		{url: "http://224.0.0.1/", allowPrivate: true, want: never + " (224.0.0.1: multicast)"},
		{url: "http://240.0.0.1/", allowPrivate: true, want: never + " (240.0.0.1: reserved)"},
		{url: "http://255.255.255.255/", allowPrivate: true, want: never + " (255.255.255.255: broadcast)"},
		{url: "http://0.1.2.3/", allowPrivate: true, want: never + " (0.1.2.3: this network)"},
		// names of this machine; other names are checked when they are dialled
		{url: "http://localhost/", want: "points at this machine"},
		{url: "http://LOCALHOST./", want: "points at this machine"},
		{url: "http://hooks.localhost:9000/", want: "points at this machine"},
		{url: "http://localhost.localdomain/", want: "points at this machine"},
		{url: "http://ip6-localhost/", want: "points at this machine"},
		{url: "http://１２７.０.０.１/", allowPrivate: true, want: "must write its host in ASCII"},
		// not a host at all
		{url: "http://1.2.3.4.5/", want: "has a host that is neither a name nor an IP address"},
		{url: "http://256.1.1.1/", want: "has a host that is neither a name nor an IP address"},
		{url: "http://hooks.example.09/", want: "has a host that is neither a name nor an IP address"},
		// public addresses, and private ones when they are allowed
		{url: "https://8.8.8.8/in"},
		{url: "https://[2606:4700:4700::1111]/in"},
		{url: "https://[::ffff:8.8.8.8]/in"},
		{url: "https://[64:ff9b::808:808]/in"},
		{url: "https://[2002:808:808::1]/in"},
		{url: "https://hooks.example.com./in"},
		{url: "https://xn--bcher-kva.example/in"},
		{url: "https://0x.example/in"},
		{url: "https://134744072/in", want: unusual + " (134744072 is 8.8.8.8)"},
		{url: "https://8.8.8.8./in", want: unusual + " (8.8.8.8. is 8.8.8.8)"},
		{url: "http://127.0.0.1:9000/in", allowPrivate: true},
		{url: "http://localhost:9000/in", allowPrivate: true},
		{url: "http://[::1]:9000/in", allowPrivate: true},
		{url: "http://10.0.0.1/in", allowPrivate: true},
		{url: "http://100.64.0.1/in", allowPrivate: true},
		{url: "http://127.1:9000/in", allowPrivate: true, want: unusual + " (127.1 is 127.0.0.1)"},
	}
	for _, tc := range tests {
		name := tc.url
		if tc.allowPrivate {
			name += " allowing private"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			err := gateway.CheckCallbackURL("url", tc.url, tc.allowPrivate)
			if tc.want == "" || err == nil {
				if (err == nil) != (tc.want == "") {
					t.Fatalf("error %v, want one containing %q", err, tc.want)
				}
				return
			}
			fe := wantFieldError(t, err, "url", err.Error())
			if !strings.HasPrefix(fe.Message, "url ") || !strings.Contains(fe.Message, tc.want) {
				t.Fatalf("message %q, want it to contain %q", fe.Message, tc.want)
			}
		})
	}
}

// FuzzCheckCallbackURLSpellings: every spelling of an IPv4 address a
// browser or inet_aton reads (one to four parts, decimal, octal, hex) is
// refused at registration unless it is the dotted quad of an allowed
// address.
func FuzzCheckCallbackURLSpellings(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "169.254.169.254", "8.8.8.8", "0.0.0.0", "10.0.0.1"} {
		f.Add(netip.MustParseAddr(s).AsSlice(), false)
	}
	f.Fuzz(func(t *testing.T, b []byte, allowPrivate bool) {
		if len(b) != 4 {
			return
		}
		addr := netip.AddrFrom4([4]byte(b))
		allowed := gateway.ClassifyAddress(addr).Allowed(allowPrivate)
		n := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
		spellings := []string{
			fmt.Sprint(n), fmt.Sprintf("0x%x", n), fmt.Sprintf("0%o", n),
			fmt.Sprintf("%d.%d", b[0], n&0xffffff), fmt.Sprintf("%d.%d.%d", b[0], b[1], n&0xffff),
			fmt.Sprintf("0x%x.0x%x.0x%x.0x%x", b[0], b[1], b[2], b[3]), fmt.Sprintf("0%o.0%o.0%o.0%o", b[0], b[1], b[2], b[3]),
			addr.String() + ".",
		}
		for _, s := range spellings {
			if err := gateway.CheckCallbackURL("url", "http://"+s+"/in", allowPrivate); err == nil {
				t.Fatalf("%s (%s) accepted", s, addr)
			}
		}
		if err := gateway.CheckCallbackURL("url", "http://"+addr.String()+"/in", allowPrivate); (err == nil) != allowed {
			t.Fatalf("%s: %v, allowed %v", addr, err, allowed)
		}
	})
}
