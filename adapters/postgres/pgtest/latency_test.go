package pgtest_test

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
)

// TestLatencyProxy: bytes come back unchanged and in order, and a round
// trip through the proxy takes at least twice its one-way delay (a lower
// bound only: a loaded machine can only make it slower).
func TestLatencyProxy(t *testing.T) {
	t.Parallel()
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	const oneWay = 20 * time.Millisecond
	conn, err := net.Dial("tcp", pgtest.LatencyProxy(t, echo.Addr().String(), oneWay))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var sent []byte
	start := time.Now()
	for i := range 50 { // many chunks: their order must hold
		chunk := bytes.Repeat([]byte{byte('a' + i%26)}, 100+i)
		sent = append(sent, chunk...)
		if _, err := conn.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	got := make([]byte, len(sent))
	if _, err := io.ReadFull(conn, got); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 2*oneWay {
		t.Errorf("round trip took %v, want at least %v", took, 2*oneWay)
	}
	if !bytes.Equal(got, sent) {
		t.Error("the bytes came back changed or out of order")
	}
}
