package delivery

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"

	"github.com/pitboss/pitboss/gateway"
)

// ErrForbiddenAddress is returned when a delivery would connect to an
// address that gateway.ClassifyAddress does not allow: a non-public one
// (loopback, private, carrier-grade NAT, ..., in any IPv6 form that carries
// one) unless private targets are allowed, a link-local one (cloud
// metadata), multicast, broadcast, unspecified or reserved one ever.
var ErrForbiddenAddress = errors.New("refusing to connect to a non-public address")

// guard is the dialer's Control hook: it runs after name resolution, right
// before each connect, on the address actually connected to. Checking there
// (not the URL's host name) defeats DNS rebinding, a name with several
// addresses and any spelling of the host the URL check did not foresee.
type guard struct{ allowInside bool }

func (g guard) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s does not parse: %v", ErrForbiddenAddress, address, err)
	}
	if c := gateway.ClassifyAddress(ap.Addr()); !c.Allowed(g.allowInside) {
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, c)
	}
	return nil
}

// newDialer returns the dialer of the delivery client, with the address
// check on every connection; allowInside lets it reach loopback and
// private networks (the sender's client for the clients
// SenderConfig.PrivateTargets allows), never link-local addresses.
func newDialer(allowInside bool) *net.Dialer {
	return &net.Dialer{Control: guard{allowInside: allowInside}.control}
}
