package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// The seamless step's far side: `pitboss operator-sim`, the built binary
// as a child process (as the service is), speaking valkyrie-pam with a
// fixed added latency. Its log has a line per wallet call with the
// call's correlation id (the provider's transaction id, which the load
// generator chose) and the time the simulator spent on it ("took": from
// the request's headers read to its answer written, the added latency
// included). That time is the operator's; the rest of a call's latency is
// what Pitboss (and the machine it shares) adds.

// opSimProtocol is the seamless step's operator wallet protocol: the one
// whose calls carry the correlation id (X-Correlation-ID) the step joins on.
const opSimProtocol = "valkyrie-pam"

// opSim is one `pitboss operator-sim` child process.
type opSim struct {
	base    string // http://addr
	token   string // the PAM API token, also the admin token
	logPath string
	http    *http.Client
	cmd     *exec.Cmd
	done    chan error
}

// startOpSim starts the simulator with latency added to every wallet call
// and waits until its admin API answers.
func startOpSim(ctx context.Context, cfg config, latency time.Duration) (*opSim, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	s := &opSim{base: "http://" + addr, token: randomHex(20), logPath: filepath.Join(cfg.Out, "operator-sim.log"),
		http: newHTTPClient(32)}
	tokenFile := filepath.Join(cfg.Out, "operator-sim.token")
	if err := os.WriteFile(tokenFile, []byte(s.token+"\n"), 0o600); err != nil {
		return nil, err
	}
	lf, err := os.Create(s.logPath)
	if err != nil {
		return nil, err
	}
	s.cmd = exec.Command(cfg.Pitboss, "operator-sim", "--protocol", opSimProtocol, "--listen", addr, "--players", "0",
		"--token-file", tokenFile, "--latency", latency.String())
	s.cmd.Stdout, s.cmd.Stderr = lf, lf
	if err := s.cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("start pitboss operator-sim: %w", err)
	}
	s.done = make(chan error, 1)
	go func() {
		s.done <- s.cmd.Wait()
		lf.Close()
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-s.done:
			s.done <- err
			return nil, fmt.Errorf("pitboss operator-sim exited while starting (%v); see %s", err, s.logPath)
		case <-ctx.Done():
			_ = s.stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if s.admin(ctx, http.MethodGet, "/_sim/faults", nil, nil) == nil {
			return s, nil
		}
		if time.Now().After(deadline) {
			_ = s.stop()
			return nil, fmt.Errorf("pitboss operator-sim not answering after 30s; see %s", s.logPath)
		}
	}
}

func (s *opSim) pid() int { return s.cmd.Process.Pid }

// stop ends the simulator (SIGTERM, then a kill after 10 s).
func (s *opSim) stop() error {
	if s.cmd == nil || s.cmd.Process == nil {
		return nil
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return nil
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		return fmt.Errorf("pitboss operator-sim did not stop within 10s; killed")
	}
}

// admin calls the simulator's /_sim/ API and decodes its answer into out.
func (s *opSim) admin(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := s.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("operator-sim %s %s: status %d: %s", method, path, res.StatusCode, b)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}

// fund creates (or funds) the player at the simulator and returns a new
// session token of the player's.
func (s *opSim) fund(ctx context.Context, player, currency, balance string) (string, error) {
	var a struct {
		Token string `json:"token"`
	}
	err := s.admin(ctx, http.MethodPost, "/_sim/players", map[string]string{"playerId": player, "currency": currency,
		"balance": balance}, &a)
	if err == nil && a.Token == "" {
		err = errors.New("operator-sim answered no token")
	}
	return a.Token, err
}

// logSize is the simulator log's size: where a step's lines begin.
func (s *opSim) logSize() int64 {
	fi, err := os.Stat(s.logPath)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// opCall is one wallet call as the simulator logged it.
type opCall struct {
	correlation string
	took        time.Duration
	status      string
}

// readOpCalls reads the simulator's wallet calls logged from offset on.
func readOpCalls(path string, offset int64) ([]opCall, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	var out []opCall
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if c, ok := parseOpCall(sc.Text()); ok {
			out = append(out, c)
		}
	}
	return out, sc.Err()
}

// parseOpCall reads one line of the simulator's log (log/slog's text
// form): a wallet call's line has msg=call, status=, correlation= and
// took= (a Go duration).
func parseOpCall(line string) (opCall, bool) {
	if !strings.Contains(line, " msg=call ") {
		return opCall{}, false
	}
	took, err := time.ParseDuration(slogValue(line, "took"))
	if err != nil {
		return opCall{}, false
	}
	return opCall{correlation: slogValue(line, "correlation"), took: took, status: slogValue(line, "status")}, true
}

// slogValue is the value of key in a slog text line: up to the next space,
// or the quoted string (unquoted).
func slogValue(line, key string) string {
	i := strings.Index(line, " "+key+"=")
	if i < 0 {
		return ""
	}
	v := line[i+len(key)+2:]
	if strings.HasPrefix(v, `"`) {
		var s string
		if end := closingQuote(v); end > 0 && json.Unmarshal([]byte(v[:end+1]), &s) == nil {
			return s
		}
		return ""
	}
	if j := strings.IndexByte(v, ' '); j >= 0 {
		v = v[:j]
	}
	return v
}

// closingQuote is the index of the quote closing the string v opens.
func closingQuote(v string) int {
	for i := 1; i < len(v); i++ {
		switch v[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}
