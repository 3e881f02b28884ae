package stack

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/pitboss/pitboss/internal/freeport"
)

// Build compiles ./cmd/pitboss into dir. CHAOS_RACE=1 builds it with the
// race detector (slower; catches data races in the server under faults).
func Build(ctx context.Context, dir string) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "pitboss")
	args := []string{"build", "-o", out}
	if os.Getenv("CHAOS_RACE") == "1" {
		args = append(args, "-race")
	}
	args = append(args, "./cmd/pitboss")
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/pitboss: %w\n%s", err, b)
	}
	return out, nil
}

// Service is one installation of Pitboss: its settings, and the processes
// (roles) running with them.
type Service struct {
	Bin         string
	Dir         string // logs and the data folder
	DatabaseURL string
	Brokers     []string
	Topic       string
	HTTPPort    int
	SecretKey   string
	AdminToken  string
	// Env are more PITBOSS_* settings, NAME=value.
	Env []string
}

// NewService fills in the defaults: a free HTTP port, a random master key
// and admin token, and the settings every test of this package wants
// (private callback addresses allowed, quick delivery retries, generous
// rate limits, warnings only in the logs, a short seamless follow-up
// grace).
func NewService(bin, dir, dbURL string, brokers []string, topic string) (*Service, error) {
	port, err := freeport.Port()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o700); err != nil {
		return nil, err
	}
	return &Service{Bin: bin, Dir: dir, DatabaseURL: dbURL, Brokers: brokers, Topic: topic, HTTPPort: port,
		SecretKey: randomHex(32), AdminToken: randomHex(32)}, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// BaseURL is where the api role listens.
func (s *Service) BaseURL() string { return fmt.Sprintf("http://127.0.0.1:%d", s.HTTPPort) }

// environ is the child's whole environment: nothing inherited but PATH and
// HOME, so the shared stack's PITBOSS_* never leak in.
func (s *Service) environ(extra ...string) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"PITBOSS_DATABASE_URL=" + s.DatabaseURL,
		"PITBOSS_KAFKA_BROKERS=" + strings.Join(s.Brokers, ","),
		"PITBOSS_KAFKA_TOPIC=" + s.Topic,
		fmt.Sprintf("PITBOSS_HTTP_ADDR=127.0.0.1:%d", s.HTTPPort),
		"PITBOSS_DATA_DIR=" + filepath.Join(s.Dir, "data"),
		"PITBOSS_SECRET_KEY=" + s.SecretKey,
		"PITBOSS_ADMIN_TOKEN=" + s.AdminToken,
		"PITBOSS_PRIVATE_CALLBACKS=all",
		"PITBOSS_DELIVERY_TIMEOUT=7s",
		"PITBOSS_DELIVERY_RETRY_BASE=200ms",
		"PITBOSS_DELIVERY_RETRY_CAP=1s",
		"PITBOSS_DELIVERY_MAX_ATTEMPTS=1000",
		"PITBOSS_DELIVERY_MAX_AGE=2h",
		"PITBOSS_RATE_TIERS=sandbox:10000000/60s,standard:10000000/60s,enterprise:10000000/60s",
		"PITBOSS_LOG_LEVEL=info",
		"PITBOSS_SHUTDOWN_TIMEOUT=5s",
		// The seamless form's operator simulator never applies a call
		// late, so follow-ups need not wait the production 30 s.
		"PITBOSS_SEAMLESS_FOLLOWUP_GRACE=2s",
	}
	if os.Getenv("GORACE") != "" {
		env = append(env, "GORACE="+os.Getenv("GORACE"))
	}
	env = append(env, s.Env...)
	return append(env, extra...)
}

// Role returns (does not start) a `pitboss serve --roles roles` process
// named name. extra are more NAME=value settings for it alone.
func (s *Service) Role(name, roles string, extra ...string) *Proc {
	return &Proc{Name: name, Path: s.Bin, Args: []string{"serve", "--roles", roles}, Env: s.environ(extra...),
		Dir: s.Dir, LogPath: filepath.Join(s.Dir, name+".log")}
}

// StartRole starts a role process and waits until it logged that it
// started (and, with the api role, until /healthz answers).
func (s *Service) StartRole(ctx context.Context, p *Proc) error {
	before := 0
	if b, err := os.ReadFile(p.LogPath); err == nil {
		before = bytes.Count(b, []byte("pitboss started"))
	}
	if err := p.Start(); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	err := waitFor(wctx, 50*time.Millisecond, func() error {
		if !p.Running() {
			return errors.New("exited")
		}
		b, _ := os.ReadFile(p.LogPath)
		if bytes.Count(b, []byte("pitboss started")) <= before {
			return errors.New("not started yet")
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s did not start: %w\n%s", p.Name, err, p.LogTail(30))
	}
	if strings.Contains(strings.Join(p.Args, " "), "api") {
		return s.waitHealthy(ctx, RoleBaseURL(p), 60*time.Second)
	}
	return nil
}

// RoleBaseURL is where an api role process listens: its own
// PITBOSS_HTTP_ADDR (the last one in its environment wins, as for exec).
func RoleBaseURL(p *Proc) string {
	addr := ""
	for _, kv := range p.Env {
		if v, ok := strings.CutPrefix(kv, "PITBOSS_HTTP_ADDR="); ok {
			addr = v
		}
	}
	return "http://" + addr
}

// WaitHealthy waits for GET /healthz to answer 200.
func (s *Service) WaitHealthy(ctx context.Context, within time.Duration) error {
	return s.waitHealthy(ctx, s.BaseURL(), within)
}

func (s *Service) waitHealthy(ctx context.Context, base string, within time.Duration) error {
	wctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	c := &http.Client{Timeout: 2 * time.Second}
	return waitFor(wctx, 50*time.Millisecond, func() error {
		resp, err := c.Get(base + "/healthz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("healthz %d", resp.StatusCode)
		}
		return nil
	})
}

// CLI runs `pitboss args...` with the service's settings and returns its
// standard output; the error carries standard error.
func (s *Service) CLI(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, s.Bin, args...)
	cmd.Env = s.environ()
	cmd.Dir = s.Dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("pitboss %s: %w\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), nil
}

// Sandbox is what `pitboss sandbox` made: the sandbox client's API key
// and the demo provider's secret.
type Sandbox struct {
	Client, Key, Provider, ProviderSecret, Game string
}

// SetupSandbox runs `pitboss sandbox` (which migrates) and reads the key
// and the provider secret it keeps in the data folder.
func (s *Service) SetupSandbox(ctx context.Context) (Sandbox, error) {
	if _, err := s.CLI(ctx, "sandbox"); err != nil {
		return Sandbox{}, err
	}
	read := func(name string) (string, error) {
		b, err := os.ReadFile(filepath.Join(s.Dir, "data", name))
		return strings.TrimSpace(string(b)), err
	}
	key, err := read("sandbox.key")
	if err != nil {
		return Sandbox{}, err
	}
	secret, err := read("demo-provider.secret")
	if err != nil {
		return Sandbox{}, err
	}
	return Sandbox{Client: "sandbox", Key: key, Provider: "demo", ProviderSecret: secret, Game: "demo-slot"}, nil
}
