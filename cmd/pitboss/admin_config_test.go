package main

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAdminConfig reads the admin, rate-limit and usage variables. Not
// parallel: it sets environment variables.
func TestAdminConfig(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		errText string
		check   func(t *testing.T, c config)
	}{
		{name: "defaults", check: func(t *testing.T, c config) {
			if got := strings.Join(c.Admin.RateLimits.Names(), ","); got != "sandbox,standard,enterprise" ||
				c.Admin.RateLimits.DefaultTier != "standard" || c.Admin.RateStore != "memory" || c.Admin.Token != "" {
				t.Fatalf("defaults %+v", c.Admin)
			}
		}},
		{name: "tiers and default tier", env: map[string]string{"PITBOSS_RATE_TIERS": "gold:5/1h,silver:2/1m",
			"PITBOSS_RATE_DEFAULT_TIER": "Silver", "PITBOSS_RATE_LIMIT_STORE": "postgres", "PITBOSS_USAGE_FLUSH_INTERVAL": "3s"},
			check: func(t *testing.T, c config) {
				if c.Admin.RateLimits.DefaultTier != "silver" || len(c.Admin.RateLimits.Tiers) != 2 || c.Admin.RateStore != "postgres" ||
					c.Admin.UsageFlushInterval.Seconds() != 3 {
					t.Fatalf("config %+v", c.Admin)
				}
			}},
		{name: "bad tiers", env: map[string]string{"PITBOSS_RATE_TIERS": "gold"}, errText: "PITBOSS_RATE_TIERS"},
		{name: "unknown default tier", env: map[string]string{"PITBOSS_RATE_DEFAULT_TIER": "gold"}, errText: "PITBOSS_RATE_DEFAULT_TIER"},
		{name: "short admin token", env: map[string]string{"PITBOSS_ADMIN_TOKEN": "secret"}, errText: "at least 32"},
		{name: "rate store", env: map[string]string{"PITBOSS_RATE_LIMIT_STORE": "redis"}, errText: "memory or postgres"},
		{name: "flush interval", env: map[string]string{"PITBOSS_USAGE_FLUSH_INTERVAL": "0s"}, errText: "PITBOSS_USAGE_FLUSH_INTERVAL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"PITBOSS_ADMIN_TOKEN", "PITBOSS_RATE_TIERS", "PITBOSS_RATE_DEFAULT_TIER",
				"PITBOSS_RATE_LIMIT_STORE", "PITBOSS_USAGE_FLUSH_INTERVAL", "PITBOSS_READY_TIMEOUT"} {
				t.Setenv(k, tc.env[k])
			}
			c, err := loadConfig()
			if tc.errText != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errText) {
					t.Fatalf("error %v, want one saying %q", err, tc.errText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

// TestAdminTokenFile: without PITBOSS_ADMIN_TOKEN the admin API is off
// until `pitboss sandbox` writes a token file, which serve then uses; the
// variable wins over the file.
func TestAdminTokenFile(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := config{DataDir: t.TempDir()}
	if tok, err := cfg.adminToken(log); err != nil || tok != "" {
		t.Fatalf("no variable, no file: %q %v, want the admin API disabled", tok, err)
	}
	var out bytes.Buffer
	if err := printSandboxAdmin(&out, cfg); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(cfg.DataDir, adminTokenFile)
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file %v %v, want mode 0600", st, err)
	}
	tok, err := cfg.adminToken(log)
	if err != nil || len(tok) != 64 || !strings.Contains(out.String(), tok) {
		t.Fatalf("token %q (%v); sandbox printed:\n%s", tok, err, out.String())
	}
	again, _, err := cfg.ensureAdminToken()
	if err != nil || again != tok {
		t.Fatalf("second sandbox run made a new token %q (%v)", again, err)
	}
	cfg.Admin.Token = strings.Repeat("v", 40)
	if got, err := cfg.adminToken(log); err != nil || got != cfg.Admin.Token {
		t.Fatalf("the variable should win: %q %v", got, err)
	}
}
