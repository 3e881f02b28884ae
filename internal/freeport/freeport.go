// Package freeport hands out loopback TCP ports for child processes the
// tests and the benchmark start (PostgreSQL, Kafka, pitboss serve).
package freeport

import (
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Port returns a loopback TCP port nobody listens on right now, for a
// child process to bind a moment later.
//
// The port is drawn at random below the kernel's ephemeral range. A port the
// kernel hands out (listening on :0) is one it hands out again as the local
// end of any outgoing connection: between our check and the child's bind,
// the suite's own clients (Kafka, PostgreSQL, HTTP) could take it, and the
// child failed with "address already in use". Outgoing connections never
// take a port below the range. Ports handed out by this process are not
// handed out twice.
func Port() (int, error) {
	lo, hi := portPool()
	portsMu.Lock()
	defer portsMu.Unlock()
	for try := 0; try < 200; try++ {
		p := lo + mrand.IntN(hi-lo)
		if portsGiven[p] {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue // someone listens there
		}
		_ = l.Close()
		portsGiven[p] = true
		return p, nil
	}
	return 0, fmt.Errorf("no free loopback port in %d–%d after 200 tries", lo, hi-1)
}

var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// portPool is the range Port draws from: [20000, the ephemeral range's
// first port), or a fixed span when the range cannot be read or leaves too
// little room below it.
func portPool() (lo, hi int) {
	lo, hi = 20000, 32768
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return lo, hi
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return lo, hi
	}
	first, err := strconv.Atoi(f[0])
	if err != nil || first-lo < 2000 {
		return lo, hi
	}
	return lo, first
}
