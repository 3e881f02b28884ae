package main

import (
	"net"
	"net/netip"
)

// loopbackURL is the http URL at which this process reaches its own
// listener at addr: a wildcard or empty host becomes 127.0.0.1, so the
// built-in demo game calls the wallet without leaving the machine.
func loopbackURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if a, perr := netip.ParseAddr(host); host == "" || (perr == nil && a.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}
