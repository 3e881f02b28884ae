package main

import (
	"strings"
	"testing"
	"time"
)

// TestRoundAutoCloseConfig reads PITBOSS_ROUND_AUTO_CLOSE_AFTER: off by
// default, at least an hour when set. Not parallel: it sets the variable.
func TestRoundAutoCloseConfig(t *testing.T) {
	tests := []struct {
		value   string
		want    time.Duration
		errText string
	}{
		{value: "", want: 0},
		{value: "0s", want: 0},
		{value: "72h", want: 72 * time.Hour},
		{value: "30m", errText: "PITBOSS_ROUND_AUTO_CLOSE_AFTER"},
		{value: "-1h", errText: "PITBOSS_ROUND_AUTO_CLOSE_AFTER"},
		{value: "two days", errText: "PITBOSS_ROUND_AUTO_CLOSE_AFTER"},
	}
	for _, tc := range tests {
		t.Run(tc.value, func(t *testing.T) {
			t.Setenv("PITBOSS_ROUND_AUTO_CLOSE_AFTER", tc.value)
			c, err := loadConfig()
			if tc.errText != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errText) {
					t.Fatalf("error %v, want one naming %s", err, tc.errText)
				}
				return
			}
			if err != nil || c.RoundAutoCloseAfter != tc.want {
				t.Fatalf("%v, %v; want %v", c.RoundAutoCloseAfter, err, tc.want)
			}
		})
	}
}
