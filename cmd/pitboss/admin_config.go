package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/gateway"
)

// adminConfig is the admin API, rate-limit, usage and readiness settings
// (docs/keys-and-admin.md, docs/operations.md).
type adminConfig struct {
	// Token is PITBOSS_ADMIN_TOKEN; empty: the token file in the data
	// folder, if `pitboss sandbox` made one, else the admin API is off.
	Token string
	// RateLimits is PITBOSS_RATE_TIERS and PITBOSS_RATE_DEFAULT_TIER.
	RateLimits gateway.RateLimits
	// RateStore is PITBOSS_RATE_LIMIT_STORE: memory (each API process
	// counts on its own) or postgres (shared windows).
	RateStore string
	// UsageFlushInterval is PITBOSS_USAGE_FLUSH_INTERVAL.
	UsageFlushInterval time.Duration
	// ReadyTimeout is PITBOSS_READY_TIMEOUT, the bound of each /readyz check.
	ReadyTimeout time.Duration
	// kafkaRoles is set by serve when the process runs a role that uses
	// Kafka (relay, forwarder, projector): then /readyz requires Kafka;
	// an API-only process reports it without depending on it.
	kafkaRoles bool
}

// adminTokenFile is where `pitboss sandbox` keeps a generated admin token
// for `make run`; serve uses it only when PITBOSS_ADMIN_TOKEN is not set.
const adminTokenFile = "admin.token"

func (a *adminConfig) load() []error {
	var errs []error
	a.Token = strings.TrimSpace(os.Getenv("PITBOSS_ADMIN_TOKEN"))
	if a.Token != "" && len(a.Token) < api.MinAdminTokenLength {
		errs = append(errs, fmt.Errorf("PITBOSS_ADMIN_TOKEN must be at least %d characters (try: openssl rand -hex 32)",
			api.MinAdminTokenLength))
	}
	tiers, err := gateway.ParseRateTiers(env("PITBOSS_RATE_TIERS", gateway.DefaultRateTiers))
	if err != nil {
		errs = append(errs, fmt.Errorf("PITBOSS_RATE_TIERS: %w", err))
	}
	a.RateLimits = gateway.RateLimits{Tiers: tiers, DefaultTier: strings.ToLower(env("PITBOSS_RATE_DEFAULT_TIER", gateway.DefaultRateTier))}
	if err == nil {
		if err := a.RateLimits.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("PITBOSS_RATE_DEFAULT_TIER: %w", err))
		}
	}
	a.RateStore = strings.ToLower(env("PITBOSS_RATE_LIMIT_STORE", "memory"))
	if a.RateStore != "memory" && a.RateStore != "postgres" {
		errs = append(errs, errors.New("PITBOSS_RATE_LIMIT_STORE must be memory or postgres"))
	}
	positive := func(name string, def time.Duration) time.Duration {
		v, err := time.ParseDuration(env(name, def.String()))
		if err != nil || v <= 0 {
			errs = append(errs, fmt.Errorf("%s must be a positive duration such as %s", name, def))
		}
		return v
	}
	a.UsageFlushInterval = positive("PITBOSS_USAGE_FLUSH_INTERVAL", api.DefaultUsageFlushInterval)
	a.ReadyTimeout = positive("PITBOSS_READY_TIMEOUT", api.DefaultReadyTimeout)
	return errs
}

// adminToken is the token the admin API accepts: PITBOSS_ADMIN_TOKEN, or
// the sandbox's token file. Empty: the admin API is disabled.
func (c config) adminToken(log *slog.Logger) (string, error) {
	if c.Admin.Token != "" {
		return c.Admin.Token, nil
	}
	path := filepath.Join(c.DataDir, adminTokenFile)
	tok, err := readSecret(path)
	if errors.Is(err, fs.ErrNotExist) {
		log.Info("admin API disabled: PITBOSS_ADMIN_TOKEN is not set")
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("admin token file: %w", err)
	}
	if len(tok) < api.MinAdminTokenLength {
		return "", fmt.Errorf("admin token in %s is shorter than %d characters", path, api.MinAdminTokenLength)
	}
	log.Warn("PITBOSS_ADMIN_TOKEN is not set: the admin API accepts the sandbox's token file; set the variable in production",
		"file", path)
	return tok, nil
}

// ensureAdminToken returns the sandbox's admin token, making the token
// file (mode 0600) on first use. With PITBOSS_ADMIN_TOKEN set it returns
// that and writes nothing.
func (c config) ensureAdminToken() (token string, fromEnv bool, err error) {
	if c.Admin.Token != "" {
		return c.Admin.Token, true, nil
	}
	path := filepath.Join(c.DataDir, adminTokenFile)
	if tok, err := readSecret(path); err == nil {
		return tok, false, nil
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	token = hex.EncodeToString(b)
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return "", false, fmt.Errorf("data folder: %w", err)
	}
	if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		return "", false, fmt.Errorf("save admin token: %w", err)
	}
	return token, false, nil
}

// printSandboxAdmin makes sure the sandbox has an admin token and prints
// how to use the admin API and the metrics.
func printSandboxAdmin(out io.Writer, cfg config) error {
	token, fromEnv, err := cfg.ensureAdminToken()
	if err != nil {
		return err
	}
	where := "saved in " + filepath.Join(cfg.DataDir, adminTokenFile) + "; serve uses it while PITBOSS_ADMIN_TOKEN is unset"
	if fromEnv {
		where = "PITBOSS_ADMIN_TOKEN"
	}
	fmt.Fprintf(out, `
Admin API (docs/keys-and-admin.md):

  admin token:  %s   (%s)

  export ADMIN=%s
  curl -s $PB/admin/v1/clients -H "Authorization: Bearer $ADMIN"
  curl -s $PB/admin/v1/clients/%s/keys -H "Authorization: Bearer $ADMIN"
  curl -s "$PB/api/v1/usage?granularity=minute" -H "Authorization: Bearer $KEY"
  curl -s $PB/readyz; curl -s $PB/metrics | grep ^pitboss_
`, token, where, token, sandboxClient)
	return nil
}
