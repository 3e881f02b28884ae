package main

import (
	"strings"
	"testing"
)

// TestProjectorModeConfig reads PITBOSS_PROJECTOR_MODE: combined by
// default, separate for rollback, nothing else. Not parallel: it sets the
// variable.
func TestProjectorModeConfig(t *testing.T) {
	for value, want := range map[string]string{"": "combined", "combined": "combined", "separate": "separate", "both": ""} {
		t.Run(value, func(t *testing.T) {
			t.Setenv("PITBOSS_PROJECTOR_MODE", value)
			c, err := loadConfig()
			if want == "" {
				if err == nil || !strings.Contains(err.Error(), "PITBOSS_PROJECTOR_MODE") {
					t.Fatalf("error %v, want one naming PITBOSS_PROJECTOR_MODE", err)
				}
				return
			}
			if err != nil || c.ProjectorMode != want {
				t.Fatalf("mode %q, %v; want %q", c.ProjectorMode, err, want)
			}
		})
	}
}
