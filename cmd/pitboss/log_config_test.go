package main

import (
	"strings"
	"testing"
	"time"
)

// TestLogConfig reads the verifiable log's settings: PITBOSS_LOG_ORIGIN
// (a schema-less name; the public URL's host and /ledger by default) and
// PITBOSS_LOG_CHECKPOINT_INTERVAL (1m by default, 1s to 24h). Not
// parallel: it sets the variables.
func TestLogConfig(t *testing.T) {
	tests := []struct {
		name, origin, interval, publicURL string
		wantOrigin                        string
		wantInterval                      time.Duration
		errText                           string
	}{
		{name: "defaults", publicURL: "https://games.casino.example:8443", wantOrigin: "games.casino.example:8443/ledger",
			wantInterval: time.Minute},
		{name: "set", origin: "casino.example/audit/ledger", interval: "10s", wantOrigin: "casino.example/audit/ledger",
			wantInterval: 10 * time.Second},
		{name: "a scheme", origin: "https://casino.example/ledger", errText: "PITBOSS_LOG_ORIGIN"},
		{name: "a space", origin: "casino example", errText: "PITBOSS_LOG_ORIGIN"},
		{name: "a plus", origin: "casino+example/ledger", errText: "PITBOSS_LOG_ORIGIN"},
		{name: "a trailing slash", origin: "casino.example/", errText: "PITBOSS_LOG_ORIGIN"},
		{name: "too often", interval: "500ms", errText: "PITBOSS_LOG_CHECKPOINT_INTERVAL"},
		{name: "too rare", interval: "25h", errText: "PITBOSS_LOG_CHECKPOINT_INTERVAL"},
		{name: "not a duration", interval: "hourly", errText: "PITBOSS_LOG_CHECKPOINT_INTERVAL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PITBOSS_LOG_ORIGIN", tc.origin)
			t.Setenv("PITBOSS_LOG_CHECKPOINT_INTERVAL", tc.interval)
			if tc.publicURL != "" {
				t.Setenv("PITBOSS_PUBLIC_URL", tc.publicURL)
			}
			c, err := loadConfig()
			if tc.errText != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errText) {
					t.Fatalf("error %v, want one naming %s", err, tc.errText)
				}
				return
			}
			if err != nil || c.logOrigin() != tc.wantOrigin || c.LogCheckpointInterval != tc.wantInterval {
				t.Fatalf("origin %q, interval %v, %v; want %q, %v", c.logOrigin(), c.LogCheckpointInterval, err,
					tc.wantOrigin, tc.wantInterval)
			}
		})
	}
}
