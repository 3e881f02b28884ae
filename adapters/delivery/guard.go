package delivery

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// ErrForbiddenAddress is returned when a delivery would connect to an
// address that is not public (loopback, private, link-local, ...) and the
// configuration does not allow private targets.
var ErrForbiddenAddress = errors.New("refusing to connect to a non-public address")

// nonPublic lists special-purpose ranges that netip's predicates do not
// cover (RFC 6890 and successors): a callback URL must never reach them.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // TEST-NET-1
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // TEST-NET-2
	netip.MustParsePrefix("203.0.113.0/24"),  // TEST-NET-3
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and broadcast
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
}

// embedsIPv4 are IPv6 ranges whose addresses carry an IPv4 address that a
// gateway may reach: the embedded address is checked too.
var embedsIPv4 = []struct {
	prefix netip.Prefix
	at     int // byte offset of the IPv4 address
}{
	{netip.MustParsePrefix("64:ff9b::/96"), 12}, // NAT64
	{netip.MustParsePrefix("2002::/16"), 2},     // 6to4
}

// IsPublic reports whether a delivery may connect to addr when private
// targets are not allowed.
func IsPublic(addr netip.Addr) bool {
	addr = addr.Unmap()
	if !addr.IsValid() || addr.IsLoopback() || addr.IsPrivate() || addr.IsLinkLocalUnicast() ||
		addr.IsLinkLocalMulticast() || addr.IsInterfaceLocalMulticast() || addr.IsMulticast() || addr.IsUnspecified() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(addr) {
			return false
		}
	}
	if addr.Is6() {
		b := addr.As16()
		for _, e := range embedsIPv4 {
			if e.prefix.Contains(addr) {
				v4 := netip.AddrFrom4([4]byte(b[e.at : e.at+4]))
				if !IsPublic(v4) {
					return false
				}
			}
		}
	}
	return true
}

// dialControl refuses, after name resolution and right before connect, any
// address that is not public. Checking the resolved address at dial time
// (not the URL's host name) also defeats DNS rebinding and redirects.
func dialControl(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s does not parse: %v", ErrForbiddenAddress, address, err)
	}
	if !IsPublic(ap.Addr()) {
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, ap.Addr())
	}
	return nil
}

// newDialer returns the dialer of the delivery client; allowPrivate turns
// the address check off (tests, sandbox installs on one machine).
func newDialer(allowPrivate bool) *net.Dialer {
	d := &net.Dialer{}
	if !allowPrivate {
		d.Control = dialControl
	}
	return d
}
