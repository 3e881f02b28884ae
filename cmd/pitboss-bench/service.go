package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pitboss/pitboss/internal/freeport"
)

// The service under test is the real binary, started as a child process
// so its CPU and memory can be read from /proc and nothing of the load
// generator runs inside it.

// recreateDatabase drops and creates db on the server of serverURL and
// returns db's URL. loadConfig has checked the name.
func recreateDatabase(ctx context.Context, serverURL, db string) (string, error) {
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return "", fmt.Errorf("connect to %s: %w", redact(serverURL), err)
	}
	defer conn.Close(ctx)
	for _, stmt := range []string{"DROP DATABASE IF EXISTS " + db + " WITH (FORCE)", "CREATE DATABASE " + db} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return "", fmt.Errorf("%s: %w", stmt, err)
		}
	}
	return databaseURL(serverURL, db)
}

func dropDatabase(ctx context.Context, serverURL, db string) error {
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", redact(serverURL), err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)")
	return err
}

// databaseURL swaps the database of a postgres:// URL.
func databaseURL(base, db string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("parse database url: %w", err)
	}
	u.Path = "/" + db
	return u.String(), nil
}

// withQuery adds a query parameter to a URL.
func withQuery(raw, key, value string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("parse url: %w", err)
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(database url)"
	}
	return u.Redacted()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// freeAddr returns a loopback address with a port nobody listens on, and
// none of this process's own connections can take before the child binds
// it (freeport.Port).
func freeAddr() (string, error) {
	p, err := freeport.Port()
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(p)), nil
}

// service is one `pitboss serve` child process and the environment it
// shares with the pitboss commands run for it.
type service struct {
	bin     string
	env     []string
	dataDir string
	logPath string
	base    string // http://addr
	pprof   string // http://addr of the profiler, "" if off
	cmd     *exec.Cmd
	done    chan error
	// lastPeakRSSMB is the peak resident memory of the last command run.
	lastPeakRSSMB float64
}

// serviceSpec is what differs between the write and the read benchmark's
// services.
type serviceSpec struct {
	Name     string // log file and data folder name
	DBURL    string
	Topic    string
	Roles    string
	Pprof    bool
	LogLevel string
	Extra    []string // more KEY=VALUE
}

func newService(cfg config, spec serviceSpec) (*service, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	s := &service{bin: cfg.Pitboss, dataDir: filepath.Join(cfg.Out, spec.Name+"-data"),
		logPath: filepath.Join(cfg.Out, spec.Name+".log"), base: "http://" + addr}
	if err := os.MkdirAll(s.dataDir, 0o700); err != nil {
		return nil, err
	}
	big := "1000000000/60s"
	s.env = append(os.Environ(),
		"PITBOSS_DATABASE_URL="+spec.DBURL,
		"PITBOSS_HTTP_ADDR="+addr,
		"PITBOSS_PUBLIC_URL="+s.base,
		"PITBOSS_DATA_DIR="+s.dataDir,
		"PITBOSS_LOG_LEVEL="+spec.LogLevel,
		"PITBOSS_SECRET_KEY="+randomHex(32),
		"PITBOSS_ADMIN_TOKEN="+randomHex(32),
		// The benchmark measures the ledger, not the rate limiter: every
		// tier gets a limit no run reaches.
		"PITBOSS_RATE_TIERS=sandbox:"+big+",standard:"+big+",enterprise:"+big,
	)
	if spec.Topic != "" {
		s.env = append(s.env, "PITBOSS_KAFKA_TOPIC="+spec.Topic)
	}
	if cfg.BatchMax > 0 {
		s.env = append(s.env, "PITBOSS_BATCH_MAX="+strconv.Itoa(cfg.BatchMax))
	}
	if spec.Pprof {
		pa, err := freeAddr()
		if err != nil {
			return nil, err
		}
		s.pprof = "http://" + pa
		s.env = append(s.env, "PITBOSS_PPROF_ADDR="+pa)
	}
	s.env = append(s.env, spec.Extra...)
	return s, nil
}

// command runs `pitboss args...` to completion with the service's
// environment, its output appended to the service's log.
func (s *service) command(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, s.bin, args...)
	cmd.Env = s.env
	out, err := cmd.CombinedOutput()
	s.lastPeakRSSMB = 0
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru != nil {
		s.lastPeakRSSMB = float64(ru.Maxrss) / 1024 // kilobytes on Linux
	}
	if lf, lerr := os.OpenFile(s.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600); lerr == nil {
		fmt.Fprintf(lf, "$ pitboss %s\n%s\n", strings.Join(args, " "), out)
		lf.Close()
	}
	if err != nil {
		return out, fmt.Errorf("pitboss %s: %w: %s", strings.Join(args, " "), err, lastLines(out, 5))
	}
	return out, nil
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// start runs `pitboss serve` and waits until /readyz answers 200.
func (s *service) start(ctx context.Context, roles string) error {
	lf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	args := []string{"serve"}
	if roles != "" {
		args = append(args, "--roles", roles)
	}
	// Not CommandContext: stop sends SIGTERM and waits for a clean stop.
	s.cmd = exec.Command(s.bin, args...)
	s.cmd.Env = s.env
	s.cmd.Stdout, s.cmd.Stderr = lf, lf
	if err := s.cmd.Start(); err != nil {
		lf.Close()
		return fmt.Errorf("start pitboss serve: %w", err)
	}
	s.done = make(chan error, 1)
	go func() {
		s.done <- s.cmd.Wait()
		lf.Close()
	}()
	deadline := time.Now().Add(90 * time.Second)
	for {
		select {
		case err := <-s.done:
			s.done <- err
			return fmt.Errorf("pitboss serve exited while starting (%v); see %s", err, s.logPath)
		case <-ctx.Done():
			s.stop()
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if ready(s.base + "/readyz") {
			return nil
		}
		if time.Now().After(deadline) {
			s.stop()
			return fmt.Errorf("pitboss serve not ready after 90s; see %s", s.logPath)
		}
	}
}

func ready(u string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode == http.StatusOK
}

func (s *service) pid() int { return s.cmd.Process.Pid }

// stop sends SIGTERM, waits for the shutdown (in-flight requests finish,
// the ledger writer drains) and kills the process after 30 s.
func (s *service) stop() error {
	if s.cmd == nil || s.cmd.Process == nil {
		return nil
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		s.done <- err
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("pitboss serve exited with %v; see %s", err, s.logPath)
		}
		return err
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		return fmt.Errorf("pitboss serve did not stop within 30s; killed (see %s)", s.logPath)
	}
}

// readFileTrim reads a one-line secret file.
func readFileTrim(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	return s, nil
}
