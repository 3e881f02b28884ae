package main

import (
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/wallet"
)

// TestSeamlessFollowUpGraceConfig reads PITBOSS_SEAMLESS_FOLLOWUP_GRACE:
// wallet.FollowUpGrace (30 s) by default, from 1s to 1h when set. Not
// parallel: it sets the variable.
func TestSeamlessFollowUpGraceConfig(t *testing.T) {
	tests := []struct {
		value   string
		want    time.Duration
		errText string
	}{
		{value: "", want: wallet.FollowUpGrace},
		{value: "2s", want: 2 * time.Second},
		{value: "1s", want: time.Second},
		{value: "1h", want: time.Hour},
		{value: "500ms", errText: "PITBOSS_SEAMLESS_FOLLOWUP_GRACE"},
		{value: "0s", errText: "PITBOSS_SEAMLESS_FOLLOWUP_GRACE"},
		{value: "-5s", errText: "PITBOSS_SEAMLESS_FOLLOWUP_GRACE"},
		{value: "61m", errText: "PITBOSS_SEAMLESS_FOLLOWUP_GRACE"},
		{value: "soon", errText: "PITBOSS_SEAMLESS_FOLLOWUP_GRACE"},
	}
	for _, tc := range tests {
		t.Run(tc.value, func(t *testing.T) {
			t.Setenv("PITBOSS_SEAMLESS_FOLLOWUP_GRACE", tc.value)
			c, err := loadConfig()
			if tc.errText != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errText) {
					t.Fatalf("error %v, want one naming %s", err, tc.errText)
				}
				return
			}
			if err != nil || c.SeamlessFollowUpGrace != tc.want {
				t.Fatalf("%v, %v; want %v", c.SeamlessFollowUpGrace, err, tc.want)
			}
		})
	}
}
