package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pitboss/pitboss/gateway"
)

// simOutput is the command's stdout, written by its goroutines and read
// by the test.
type simOutput struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (o *simOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

func (o *simOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// TestOperatorSimCommand: `pitboss operator-sim` started through run on
// a free port prints how to call it, answers the call it prints, logs
// it, and stops cleanly when its context ends (SIGINT, SIGTERM).
func TestOperatorSimCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		call func(t *testing.T, base, out string)
	}{
		{"valkyrie-pam", []string{"--protocol", "valkyrie-pam", "--token", "cmd-test-token", "--players", "2",
			"--balance", "50.00", "--currency", "EUR", "--latency", "1ms"}, callPAMFromOutput},
		{"tbb", []string{"--protocol", "tbb", "--secret", "cmd-test-secret", "--currency", "BTC",
			"--balance", "0.00000100", "--fault-5xx", "1/2"}, callTBBFromOutput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"operator-sim", "--listen", "127.0.0.1:0",
				"--state", filepath.Join(t.TempDir(), "state.json")}, tc.args...)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			out := &simOutput{}
			done := make(chan error, 1)
			go func() { done <- run(ctx, args, out, io.Discard) }()
			at := regexp.MustCompile(`operator wallet at (http://127\.0\.0\.1:\d+) `)
			var base string
			deadline := time.Now().Add(20 * time.Second)
			for base == "" {
				if m := at.FindStringSubmatch(out.String()); m != nil {
					base = m[1]
					break
				}
				select {
				case err := <-done:
					t.Fatalf("operator-sim ended: %v\n%s", err, out.String())
				default:
				}
				if time.Now().After(deadline) {
					t.Fatalf("no address printed within 20s:\n%s", out.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
			tc.call(t, base, out.String())
			if !strings.Contains(out.String(), "msg=call") {
				t.Errorf("no call logged:\n%s", out.String())
			}
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("stop: %v", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("operator-sim did not stop within 20s")
			}
			if !strings.Contains(out.String(), "operator-sim: stopped") {
				t.Fatalf("no stop line:\n%s", out.String())
			}
		})
	}
}

// printed is the first group of re in out.
func printed(t *testing.T, out, re string) string {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("%s not printed:\n%s", re, out)
	}
	return m[1]
}

func callPAMFromOutput(t *testing.T, base, out string) {
	token := printed(t, out, `Authorization: Bearer (\S+)`)
	player := printed(t, out, `player:\s+(\S+)`)
	playerToken := printed(t, out, `X-Player-Token: ([0-9a-f]{40})`)
	req, err := http.NewRequest(http.MethodGet, base+"/players/"+player+"/balance?provider=demo", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("X-Player-Token", playerToken)
	req.Header.Set("X-Correlation-ID", "cmd-test")
	got := simCall(t, req)
	if got.status != 200 || !strings.Contains(got.body, `"cashAmount":50.00`) || token != "cmd-test-token" ||
		player != "player-1" {
		t.Fatalf("balance: %d %s", got.status, got.body)
	}
}

func callTBBFromOutput(t *testing.T, base, out string) {
	player := printed(t, out, `player:\s+(\S+)`)
	body, _ := json.Marshal(map[string]any{"action": "balance", "player_id": player, "currency_code": "BTC",
		"is_mobile": false, "reference": "demo", "session_token": "try"})
	sign := gateway.Signature(printed(t, out, `secret:\s+(\S+)`), body)
	for i, want := range []int{200, 500} { // --fault-5xx 1/2: every second call
		req, err := http.NewRequest(http.MethodPost, printed(t, out, `wallet:\s+POST (\S+)`), bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-REQUEST-SIGN", sign)
		got := simCall(t, req)
		if got.status != want || (want == 200 && !strings.Contains(got.body, `"balance":100`)) {
			t.Fatalf("call %d: %d %s, want %d", i, got.status, got.body, want)
		}
	}
	if !strings.HasPrefix(printed(t, out, `wallet:\s+POST (\S+)`), base) {
		t.Fatalf("wallet URL not under %s", base)
	}
}

type simAnswer struct {
	status int
	body   string
}

func simCall(t *testing.T, req *http.Request) simAnswer {
	t.Helper()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return simAnswer{resp.StatusCode, string(b)}
}

// TestOperatorSimUsage: a command line the simulator cannot run is a
// usage error (exit 2), before anything listens.
func TestOperatorSimUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"no protocol", nil},
		{"unknown protocol", []string{"--protocol", "soap"}},
		{"a fault rule beyond 1", []string{"--protocol", "tbb", "--fault-lost", "2"}},
		{"a currency with no decimals given", []string{"--protocol", "tbb", "--currencies", "XYZ"}},
		{"a balance finer than the currency", []string{"--protocol", "tbb", "--currency", "JPY", "--balance", "0.5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(context.Background(), append([]string{"operator-sim", "--listen", "127.0.0.1:0"}, tc.args...),
				io.Discard, io.Discard)
			if exitStatus(err) != exitUsage {
				t.Fatalf("err %v (exit %d), want a usage error", err, exitStatus(err))
			}
		})
	}
}
