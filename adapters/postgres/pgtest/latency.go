package pgtest

import (
	"net"
	"sync"
	"testing"
	"time"
)

// LatencyProxy listens on loopback and forwards every connection to
// target, holding each chunk of bytes for oneWay in each direction: a
// database a network away (round trip 2×oneWay) for a benchmark, where
// loopback hides what a round trip costs. It stops when tb ends.
func LatencyProxy(tb testing.TB, target string, oneWay time.Duration) (addr string) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	tb.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range open {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", target)
			if err != nil {
				_ = client.Close()
				continue
			}
			mu.Lock()
			open = append(open, client, server)
			mu.Unlock()
			wg.Go(func() { delayed(server, client, oneWay) })
			wg.Go(func() { delayed(client, server, oneWay) })
		}
	})
	return ln.Addr().String()
}

// delayed copies from src to dst, each chunk written oneWay after it was
// read, in order. It closes both ends when either does.
func delayed(dst, src net.Conn, oneWay time.Duration) {
	type chunk struct {
		due  time.Time
		data []byte
	}
	chunks := make(chan chunk, 1024)
	go func() {
		defer close(chunks)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				chunks <- chunk{due: time.Now().Add(oneWay), data: buf[:n]}
			}
			if err != nil {
				return
			}
		}
	}()
	failed := false
	for c := range chunks {
		if failed {
			continue // drain, so the reader is never stuck
		}
		time.Sleep(time.Until(c.due))
		if _, err := dst.Write(c.data); err != nil {
			failed = true
			_ = src.Close()
		}
	}
	_ = dst.Close()
	_ = src.Close()
}
