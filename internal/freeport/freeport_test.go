package freeport

import (
	"net"
	"strconv"
	"testing"
)

// Port's ports are outside the kernel's ephemeral range (so no outgoing
// connection takes one before the child binds it), never handed out twice,
// and free: each can be listened on.
func TestPortOutsideTheEphemeralRange(t *testing.T) {
	lo, hi := portPool()
	if lo >= hi {
		t.Fatalf("empty pool %d–%d", lo, hi)
	}
	seen := map[int]bool{}
	for i := 0; i < 50; i++ {
		p, err := Port()
		if err != nil {
			t.Fatal(err)
		}
		if p < lo || p >= hi {
			t.Fatalf("port %d outside the pool %d–%d", p, lo, hi-1)
		}
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Fatalf("port %d is not free: %v", p, err)
		}
		_ = l.Close()
	}
}

// A port someone listens on is never handed out.
func TestPortSkipsBusyPorts(t *testing.T) {
	lo, hi := portPool()
	var held []net.Listener
	defer func() {
		for _, l := range held {
			_ = l.Close()
		}
	}()
	busy := map[int]bool{}
	// Hold a few hundred ports of the pool; Port must step around them.
	for p := lo; p < hi && len(held) < 300; p++ {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		held = append(held, l)
		busy[p] = true
	}
	for i := 0; i < 100; i++ {
		p, err := Port()
		if err != nil {
			t.Fatal(err)
		}
		if busy[p] {
			t.Fatalf("port %d is listened on, yet handed out", p)
		}
	}
}
