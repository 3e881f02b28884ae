package gateway

import (
	"net/netip"
)

// This file is the one rule on where a callback or webhook may connect
// (SSRF): CheckCallbackURL applies it to an IP-literal host when a URL is
// configured, and the delivery client applies it to every address it
// connects to, after name resolution. One classifier, so a URL accepted at
// registration is never one the delivery refuses for its address, and no
// spelling of an inside address gets through one check and not the other.

// reach is how far a class of addresses may be trusted as a callback
// target. The zero value is the strictest, so an AddressClass not made by
// ClassifyAddress allows nothing.
type reach uint8

const (
	// reachNever: link-local (where cloud metadata services answer),
	// multicast, broadcast, unspecified and reserved addresses; no receiver
	// is legitimately there, so they are refused whatever the setting.
	reachNever reach = iota
	// reachInside: this machine or a private network (loopback, RFC 1918,
	// carrier-grade NAT, documentation ...); allowed only when private
	// targets are (tests, a sandbox with its receiver on the same machine).
	reachInside
	// reachPublic: on the internet; always allowed.
	reachPublic
)

// specialRange is one special-purpose address block (IANA's IPv4 and IPv6
// Special-Purpose Address Registries, RFC 6890 and successors) that is not
// globally reachable.
type specialRange struct {
	prefix netip.Prefix
	name   string
	reach  reach
}

func inside(prefix, name string) specialRange {
	return specialRange{prefix: netip.MustParsePrefix(prefix), name: name, reach: reachInside}
}

func never(prefix, name string) specialRange {
	return specialRange{prefix: netip.MustParsePrefix(prefix), name: name, reach: reachNever}
}

// specialRanges is searched in order: a more specific block comes before
// the block that contains it.
var specialRanges = []specialRange{
	never("0.0.0.0/8", "this network"), // 0.0.0.0 reaches this machine on Linux
	inside("10.0.0.0/8", "private"),
	inside("100.64.0.0/10", "carrier-grade NAT"),
	inside("127.0.0.0/8", "loopback"),
	never("169.254.0.0/16", "link-local"), // 169.254.169.254: cloud metadata
	inside("172.16.0.0/12", "private"),
	inside("192.0.0.0/24", "IETF protocol assignments"),
	inside("192.0.2.0/24", "documentation"),
	inside("192.88.99.0/24", "6to4 relay anycast"),
	inside("192.168.0.0/16", "private"),
	inside("198.18.0.0/15", "benchmarking"),
	inside("198.51.100.0/24", "documentation"),
	inside("203.0.113.0/24", "documentation"),
	never("224.0.0.0/4", "multicast"),
	never("255.255.255.255/32", "broadcast"),
	never("240.0.0.0/4", "reserved"),

	never("::/128", "unspecified"),
	inside("::1/128", "loopback"),
	inside("::/96", "IPv4-compatible"),
	inside("::ffff:0:0:0/96", "IPv4-translated"), // RFC 2765 (IPv4-mapped ::ffff:0:0/96 is unmapped first)
	inside("64:ff9b:1::/48", "local-use NAT64"),
	inside("100::/64", "discard-only"),
	inside("2001::/32", "Teredo"),
	inside("2001:db8::/32", "documentation"),
	inside("2001::/23", "IETF protocol assignments"),
	inside("3fff::/20", "documentation"),
	inside("5f00::/16", "segment routing"),
	inside("fc00::/7", "unique local"),
	never("fe80::/10", "link-local"),
	inside("fec0::/10", "site-local"),
	never("ff00::/8", "multicast"),
}

// embedding is an IPv6 block whose addresses carry an IPv4 address that
// the packet ends up at (through a translator, a relay or the kernel); the
// carried address is classified too, and the worse verdict counts.
type embedding struct {
	prefix netip.Prefix
	name   string
	// at returns the carried IPv4 addresses of an address in prefix.
	at func(b [16]byte) [][4]byte
	// onlyLinkLocal: the carried address's position is not known, so the
	// candidates can be noise; only a link-local candidate makes the
	// verdict worse (the block itself is already inside).
	onlyLinkLocal bool
}

var embeddings = []embedding{
	{prefix: netip.MustParsePrefix("::/96"), name: "IPv4-compatible", at: last4},
	{prefix: netip.MustParsePrefix("::ffff:0:0:0/96"), name: "IPv4-translated", at: last4},
	{prefix: netip.MustParsePrefix("64:ff9b::/96"), name: "NAT64", at: last4},
	// RFC 8215: the local-use block holds NAT64 prefixes of /48 to /96,
	// and RFC 6052 puts the IPv4 address at a place that depends on it.
	{prefix: netip.MustParsePrefix("64:ff9b:1::/48"), name: "local-use NAT64", onlyLinkLocal: true,
		at: func(b [16]byte) [][4]byte {
			return [][4]byte{rfc6052(b, 96), rfc6052(b, 48), rfc6052(b, 56), rfc6052(b, 64)}
		}},
	{prefix: netip.MustParsePrefix("2002::/16"), name: "6to4", at: func(b [16]byte) [][4]byte {
		return [][4]byte{[4]byte(b[2:6])}
	}},
	// Teredo (RFC 4380): the server's address, and the client's inverted.
	{prefix: netip.MustParsePrefix("2001::/32"), name: "Teredo", at: func(b [16]byte) [][4]byte {
		client := [4]byte(b[12:16])
		for i := range client {
			client[i] ^= 0xff
		}
		return [][4]byte{client, [4]byte(b[4:8])}
	}},
}

func last4(b [16]byte) [][4]byte { return [][4]byte{[4]byte(b[12:16])} }

// rfc6052 reads the IPv4 address an RFC 6052 translator embeds after a
// prefix of prefixLen bits (32, 40, 48, 56, 64 or 96): bits 64 to 71 (the
// "u" octet) are skipped.
func rfc6052(b [16]byte, prefixLen int) [4]byte {
	var v4 [4]byte
	n := 0
	for i := prefixLen / 8; n < 4 && i < 16; i++ {
		if i == 8 {
			continue
		}
		v4[n] = b[i]
		n++
	}
	return v4
}

// AddressClass is the verdict on one IP address a callback would connect
// to: public, or which special-purpose block it (or the IPv4 address it
// carries) is in. Only ClassifyAddress makes one.
type AddressClass struct {
	addr     netip.Addr
	rng      string
	reach    reach
	carrier  string     // the IPv6 form that carried the deciding IPv4 address
	embedded netip.Addr // that IPv4 address
}

// ClassifyAddress classifies addr: an IPv4-mapped address as its IPv4
// address, an IPv6 address that carries an IPv4 address (IPv4-compatible,
// IPv4-translated, NAT64, 6to4, Teredo) by the worse of its own block and
// the carried address's. A zone does not change the verdict; the zero
// Addr is refused whatever the setting.
func ClassifyAddress(addr netip.Addr) AddressClass {
	c := AddressClass{addr: addr, reach: reachPublic}
	if !addr.IsValid() {
		c.rng, c.reach = "not an address", reachNever
		return c
	}
	a := addr.WithZone("").Unmap() // a Prefix never contains a zoned address
	for _, r := range specialRanges {
		if r.prefix.Contains(a) {
			c.rng, c.reach = r.name, r.reach
			break
		}
	}
	if !a.Is6() || a == netip.IPv6Unspecified() || a == netip.IPv6Loopback() {
		return c
	}
	b := a.As16()
	for _, e := range embeddings {
		if !e.prefix.Contains(a) {
			continue
		}
		for _, v4 := range e.at(b) {
			ec := ClassifyAddress(netip.AddrFrom4(v4))
			if ec.reach == reachPublic || ec.reach > c.reach || (e.onlyLinkLocal && ec.rng != "link-local") {
				continue
			}
			c.rng, c.reach, c.carrier, c.embedded = ec.rng, ec.reach, e.name, ec.addr
			if c.reach == reachNever {
				return c
			}
		}
	}
	return c
}

// Public reports whether the address is on the internet.
func (c AddressClass) Public() bool { return c.reach == reachPublic }

// Allowed reports whether a callback may connect to the address:
// public, or inside when private targets are allowed; never link-local,
// multicast, broadcast, unspecified or reserved.
func (c AddressClass) Allowed(allowPrivate bool) bool {
	return c.reach == reachPublic || (allowPrivate && c.reach == reachInside)
}

// AlwaysRefused reports whether the address is refused whatever the
// setting (link-local, multicast, broadcast, unspecified, reserved).
func (c AddressClass) AlwaysRefused() bool { return c.reach == reachNever }

// Range names the special-purpose block ("loopback", "link-local",
// "carrier-grade NAT" ...); "" for a public address.
func (c AddressClass) Range() string { return c.rng }

// String describes the verdict for a log line or an error message:
// "127.0.0.1: loopback", "::7f00:1 (IPv4-compatible form of 127.0.0.1):
// loopback", "8.8.8.8: public".
func (c AddressClass) String() string {
	s := c.addr.String()
	if c.carrier != "" {
		s += " (" + c.carrier + " form of " + c.embedded.String() + ")"
	}
	if c.reach == reachPublic {
		return s + ": public"
	}
	return s + ": " + c.rng
}
