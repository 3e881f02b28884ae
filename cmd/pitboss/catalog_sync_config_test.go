package main

import (
	"strings"
	"testing"
	"time"
)

// TestCatalogSyncConfig reads PITBOSS_CATALOG_SYNC_INTERVAL: off by
// default, from 5 minutes to a week when set. Not parallel: it sets the
// variable.
func TestCatalogSyncConfig(t *testing.T) {
	tests := []struct {
		value   string
		want    time.Duration
		errText string
	}{
		{value: "", want: 0},
		{value: "0s", want: 0},
		{value: "6h", want: 6 * time.Hour},
		{value: "5m", want: 5 * time.Minute},
		{value: "168h", want: 168 * time.Hour},
		{value: "1m", errText: "PITBOSS_CATALOG_SYNC_INTERVAL"},
		{value: "169h", errText: "PITBOSS_CATALOG_SYNC_INTERVAL"},
		{value: "-1h", errText: "PITBOSS_CATALOG_SYNC_INTERVAL"},
		{value: "daily", errText: "PITBOSS_CATALOG_SYNC_INTERVAL"},
	}
	for _, tc := range tests {
		t.Run(tc.value, func(t *testing.T) {
			t.Setenv("PITBOSS_CATALOG_SYNC_INTERVAL", tc.value)
			c, err := loadConfig()
			if tc.errText != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errText) {
					t.Fatalf("error %v, want one naming %s", err, tc.errText)
				}
				return
			}
			if err != nil || c.CatalogSyncInterval != tc.want {
				t.Fatalf("%v, %v; want %v", c.CatalogSyncInterval, err, tc.want)
			}
		})
	}
}
