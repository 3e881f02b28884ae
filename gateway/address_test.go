package gateway_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/gateway"
)

// TestClassifyAddress: every form of issue 17, item 5, and every special
// block. want is the verdict's String; an address is allowed when private
// targets are not exactly when it is public, and allowed when they are
// unless never is set.
func TestClassifyAddress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr  string
		want  string
		never bool // refused whatever the setting
	}{
		// public, in every carrier
		{addr: "8.8.8.8", want: "8.8.8.8: public"},
		{addr: "2606:4700:4700::1111", want: "2606:4700:4700::1111: public"},
		{addr: "::ffff:8.8.8.8", want: "::ffff:8.8.8.8: public"},
		{addr: "64:ff9b::808:808", want: "64:ff9b::808:808: public"},
		{addr: "2002:808:808::1", want: "2002:808:808::1: public"},
		{addr: "1.1.1.1", want: "1.1.1.1: public"},
		{addr: "100.63.255.255", want: "100.63.255.255: public"},
		{addr: "100.128.0.0", want: "100.128.0.0: public"},
		{addr: "198.17.255.255", want: "198.17.255.255: public"},
		{addr: "198.20.0.0", want: "198.20.0.0: public"},
		{addr: "223.255.255.255", want: "223.255.255.255: public"},
		// IPv4 blocks
		{addr: "0.0.0.0", want: "0.0.0.0: this network", never: true},
		{addr: "0.1.2.3", want: "0.1.2.3: this network", never: true},
		{addr: "10.1.2.3", want: "10.1.2.3: private"},
		{addr: "100.64.0.1", want: "100.64.0.1: carrier-grade NAT"},
		{addr: "100.127.255.254", want: "100.127.255.254: carrier-grade NAT"},
		{addr: "127.0.0.1", want: "127.0.0.1: loopback"},
		{addr: "127.8.9.10", want: "127.8.9.10: loopback"},
		{addr: "169.254.169.254", want: "169.254.169.254: link-local", never: true},
		{addr: "169.254.0.1", want: "169.254.0.1: link-local", never: true},
		{addr: "172.16.0.1", want: "172.16.0.1: private"},
		{addr: "172.31.255.255", want: "172.31.255.255: private"},
		{addr: "192.0.0.8", want: "192.0.0.8: IETF protocol assignments"},
		{addr: "192.0.2.1", want: "192.0.2.1: documentation"},
		{addr: "192.88.99.1", want: "192.88.99.1: 6to4 relay anycast"},
		{addr: "192.168.1.1", want: "192.168.1.1: private"},
		{addr: "198.18.0.1", want: "198.18.0.1: benchmarking"},
		{addr: "198.19.255.255", want: "198.19.255.255: benchmarking"},
		{addr: "198.51.100.1", want: "198.51.100.1: documentation"},
		{addr: "203.0.113.1", want: "203.0.113.1: documentation"},
		{addr: "224.0.0.1", want: "224.0.0.1: multicast", never: true},
		{addr: "239.255.255.250", want: "239.255.255.250: multicast", never: true},
		{addr: "240.0.0.1", want: "240.0.0.1: reserved", never: true},
		{addr: "255.255.255.255", want: "255.255.255.255: broadcast", never: true},
		// IPv6 blocks
		{addr: "::", want: "::: unspecified", never: true},
		{addr: "::1", want: "::1: loopback"},
		{addr: "100::1", want: "100::1: discard-only"},
		{addr: "2001:db8::1", want: "2001:db8::1: documentation"},
		{addr: "2001:2::1", want: "2001:2::1: IETF protocol assignments"},
		{addr: "3fff::1", want: "3fff::1: documentation"},
		{addr: "5f00::1", want: "5f00::1: segment routing"},
		{addr: "fc00::1", want: "fc00::1: unique local"},
		{addr: "fd12:3456::1", want: "fd12:3456::1: unique local"},
		{addr: "fe80::1", want: "fe80::1: link-local", never: true},
		{addr: "fe80::1%eth0", want: "fe80::1%eth0: link-local", never: true},
		{addr: "::1%lo", want: "::1%lo: loopback"},
		{addr: "febf::1", want: "febf::1: link-local", never: true},
		{addr: "fec0::1", want: "fec0::1: site-local"},
		{addr: "ff02::1", want: "ff02::1: multicast", never: true},
		{addr: "ff05::2", want: "ff05::2: multicast", never: true},
		// IPv4-mapped: read as the IPv4 address
		{addr: "::ffff:127.0.0.1", want: "::ffff:127.0.0.1: loopback"},
		{addr: "::ffff:169.254.169.254", want: "::ffff:169.254.169.254: link-local", never: true},
		{addr: "::ffff:0.0.0.0", want: "::ffff:0.0.0.0: this network", never: true},
		// IPv4-compatible (deprecated, ::a.b.c.d)
		{addr: "::7f00:1", want: "::7f00:1 (IPv4-compatible form of 127.0.0.1): loopback"},
		{addr: "::127.0.0.1", want: "::7f00:1 (IPv4-compatible form of 127.0.0.1): loopback"},
		{addr: "::a9fe:a9fe", want: "::a9fe:a9fe (IPv4-compatible form of 169.254.169.254): link-local", never: true},
		{addr: "::a00:1", want: "::a00:1 (IPv4-compatible form of 10.0.0.1): private"},
		{addr: "::808:808", want: "::808:808: IPv4-compatible"},
		{addr: "::2", want: "::2 (IPv4-compatible form of 0.0.0.2): this network", never: true},
		// IPv4-translated (RFC 2765, ::ffff:0:a.b.c.d)
		{addr: "::ffff:0:7f00:1", want: "::ffff:0:7f00:1 (IPv4-translated form of 127.0.0.1): loopback"},
		{addr: "::ffff:0:a9fe:a9fe", want: "::ffff:0:a9fe:a9fe (IPv4-translated form of 169.254.169.254): link-local", never: true},
		{addr: "::ffff:0:808:808", want: "::ffff:0:808:808: IPv4-translated"},
		// NAT64, well-known prefix: as the IPv4 address it reaches
		{addr: "64:ff9b::7f00:1", want: "64:ff9b::7f00:1 (NAT64 form of 127.0.0.1): loopback"},
		{addr: "64:ff9b::a00:1", want: "64:ff9b::a00:1 (NAT64 form of 10.0.0.1): private"},
		{addr: "64:ff9b::a9fe:a9fe", want: "64:ff9b::a9fe:a9fe (NAT64 form of 169.254.169.254): link-local", never: true},
		{addr: "64:ff9b::6440:1", want: "64:ff9b::6440:1 (NAT64 form of 100.64.0.1): carrier-grade NAT"},
		// NAT64, local-use prefix (RFC 8215): inside, and link-local at any RFC 6052 place is never
		{addr: "64:ff9b:1::808:808", want: "64:ff9b:1::808:808: local-use NAT64"},
		{addr: "64:ff9b:1::7f00:1", want: "64:ff9b:1::7f00:1: local-use NAT64"},
		{addr: "64:ff9b:1::a9fe:a9fe", want: "64:ff9b:1::a9fe:a9fe (local-use NAT64 form of 169.254.169.254): link-local",
			never: true},
		{addr: "64:ff9b:1:a9fe:a9:fe00::", want: "64:ff9b:1:a9fe:a9:fe00:: (local-use NAT64 form of 169.254.169.254): link-local",
			never: true},
		{addr: "64:ff9b:1:ffa9:fe:a9fe::", want: "64:ff9b:1:ffa9:fe:a9fe:: (local-use NAT64 form of 169.254.169.254): link-local",
			never: true},
		{addr: "64:ff9b:1:ff:a9:fea9:fe00:0", want: "64:ff9b:1:ff:a9:fea9:fe00:0 (local-use NAT64 form of 169.254.169.254): link-local",
			never: true},
		// 6to4 (2002:a.b.c.d::/48)
		{addr: "2002:7f00:1::", want: "2002:7f00:1:: (6to4 form of 127.0.0.1): loopback"},
		{addr: "2002:a9fe:a9fe::1", want: "2002:a9fe:a9fe::1 (6to4 form of 169.254.169.254): link-local", never: true},
		{addr: "2002:c0a8:101::1", want: "2002:c0a8:101::1 (6to4 form of 192.168.1.1): private"},
		{addr: "2002::1", want: "2002::1 (6to4 form of 0.0.0.0): this network", never: true},
		// Teredo (2001:0:server:flags:port:client XOR 0xffffffff)
		{addr: "2001:0:4136:e378:8000:63bf:80ff:fffe", want: "2001:0:4136:e378:8000:63bf:80ff:fffe (Teredo form of 127.0.0.1): loopback"},
		{addr: "2001:0:4136:e378:8000:63bf:5601:5601",
			want: "2001:0:4136:e378:8000:63bf:5601:5601 (Teredo form of 169.254.169.254): link-local", never: true},
		{addr: "2001:0:4136:e378:8000:63bf:f5ff:fffe", want: "2001:0:4136:e378:8000:63bf:f5ff:fffe (Teredo form of 10.0.0.1): private"},
		{addr: "2001:0:4136:e378:8000:63bf:f7f7:f7f7", want: "2001:0:4136:e378:8000:63bf:f7f7:f7f7: Teredo"},
		{addr: "2001:0:7f00:1:8000:63bf:f7f7:f7f7", want: "2001:0:7f00:1:8000:63bf:f7f7:f7f7 (Teredo form of 127.0.0.1): loopback"},
	}
	for _, tc := range tests {
		t.Run(tc.addr, func(t *testing.T) {
			t.Parallel()
			c := gateway.ClassifyAddress(netip.MustParseAddr(tc.addr))
			public := strings.HasSuffix(tc.want, ": public")
			if c.String() != tc.want || c.Public() != public || c.Allowed(false) != public ||
				c.Allowed(true) != !tc.never || c.AlwaysRefused() != tc.never {
				t.Fatalf("%s: public %v, allowed %v, %v when private is allowed; want %s, never %v",
					c, c.Public(), c.Allowed(false), c.Allowed(true), tc.want, tc.never)
			}
			if public != (c.Range() == "") {
				t.Fatalf("range %q of %s", c.Range(), c)
			}
		})
	}
	if c := gateway.ClassifyAddress(netip.Addr{}); c.Allowed(true) || !c.AlwaysRefused() {
		t.Fatalf("the zero Addr: %s", c)
	}
	if var0 := (gateway.AddressClass{}); var0.Allowed(true) || var0.Public() {
		t.Fatal("a zero AddressClass allows its address")
	}
}

// insidePrefixes are blocks no callback may reach when private targets are
// not allowed, checked by the fuzz tests below on their own and as the
// IPv4 address of every IPv6 carrier.
var insidePrefixes = func() []netip.Prefix {
	var ps []netip.Prefix
	for _, s := range []string{"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/3",
		"::/96", "::ffff:0:0:0/96", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32", "3fff::/20", "fc00::/7",
		"fe80::/10", "fec0::/10", "ff00::/8"} {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	return ps
}()

// carriers returns v4 in every IPv6 form that carries it.
func carriers(v4 [4]byte) []netip.Addr {
	x := [4]byte{v4[0] ^ 0xff, v4[1] ^ 0xff, v4[2] ^ 0xff, v4[3] ^ 0xff}
	return []netip.Addr{
		netip.AddrFrom16([16]byte{10: 0xff, 11: 0xff, 12: v4[0], 13: v4[1], 14: v4[2], 15: v4[3]}),                         // mapped
		netip.AddrFrom16([16]byte{12: v4[0], 13: v4[1], 14: v4[2], 15: v4[3]}),                                             // compatible
		netip.AddrFrom16([16]byte{8: 0xff, 9: 0xff, 12: v4[0], 13: v4[1], 14: v4[2], 15: v4[3]}),                           // translated
		netip.AddrFrom16([16]byte{0: 0, 1: 0x64, 2: 0xff, 3: 0x9b, 12: v4[0], 13: v4[1], 14: v4[2], 15: v4[3]}),            // NAT64
		netip.AddrFrom16([16]byte{0: 0x20, 1: 0x02, 2: v4[0], 3: v4[1], 4: v4[2], 5: v4[3], 15: 1}),                        // 6to4
		netip.AddrFrom16([16]byte{0: 0x20, 1: 0x01, 4: 8, 5: 8, 6: 8, 7: 8, 12: x[0], 13: x[1], 14: x[2], 15: x[3]}),       // Teredo client
		netip.AddrFrom16([16]byte{0: 0x20, 1: 0x01, 4: v4[0], 5: v4[1], 6: v4[2], 7: v4[3], 12: 0xf7, 13: 0xf7, 14: 0xf7}), // Teredo server
	}
}

// FuzzClassifyAddress: an address the classifier calls public is in none
// of the inside blocks, and one it lets through when private targets are
// allowed is not link-local.
func FuzzClassifyAddress(f *testing.F) {
	for _, s := range []string{"8.8.8.8", "127.0.0.1", "::ffff:127.0.0.1", "10.1.2.3", "169.254.169.254", "::1",
		"fe80::1", "64:ff9b::a9fe:a9fe", "2002:7f00:1::", "100.64.0.1", "0.0.0.0", "fd00::1", "2606:4700::1111", "::7f00:1",
		"2001:0:4136:e378:8000:63bf:80ff:fffe"} {
		f.Add(netip.MustParseAddr(s).AsSlice())
	}
	linkLocal := []netip.Prefix{netip.MustParsePrefix("169.254.0.0/16"), netip.MustParsePrefix("fe80::/10")}
	f.Fuzz(func(t *testing.T, b []byte) {
		a, ok := netip.AddrFromSlice(b)
		if !ok {
			return
		}
		c := gateway.ClassifyAddress(a)
		for _, p := range linkLocal {
			if p.Contains(a.Unmap()) && c.Allowed(true) {
				t.Fatalf("%v is link-local, allowed as %s", a, c)
			}
		}
		if !c.Public() {
			return
		}
		for _, p := range insidePrefixes {
			if p.Contains(a.Unmap()) {
				t.Fatalf("%v is public to the classifier (%s) but in %v", a, c, p)
			}
		}
	})
}

// FuzzClassifyCarriedIPv4: an IPv4 address that is not public is not
// public in any IPv6 form that carries it, and a link-local one is refused
// in every form whatever the setting.
func FuzzClassifyCarriedIPv4(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "169.254.169.254", "10.0.0.1", "100.64.0.1", "8.8.8.8", "0.0.0.0", "192.0.2.1"} {
		f.Add(netip.MustParseAddr(s).AsSlice())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) != 4 {
			return
		}
		v4 := [4]byte(b)
		c := gateway.ClassifyAddress(netip.AddrFrom4(v4))
		for _, w := range carriers(v4) {
			if w == netip.IPv6Loopback() { // 0.0.0.1 in IPv4-compatible form is ::1, loopback
				continue
			}
			wc := gateway.ClassifyAddress(w)
			if !c.Public() && wc.Public() {
				t.Fatalf("%s is public, but it carries %s", wc, c)
			}
			if c.AlwaysRefused() && wc.Allowed(true) {
				t.Fatalf("%s is allowed, but it carries %s", wc, c)
			}
		}
	})
}
