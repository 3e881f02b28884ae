package main

import (
	"strings"
	"testing"
	"time"
)

// TestGatherConfig reads PITBOSS_RELAY_LINGER (20 ms by default) and
// PITBOSS_CONSUMER_FETCH_WAIT (off by default): 0s off, at most 1s. Not
// parallel: it sets the variables.
func TestGatherConfig(t *testing.T) {
	tests := []struct {
		value   string
		want    time.Duration
		invalid bool
	}{
		{value: "0s", want: 0},
		{value: "5ms", want: 5 * time.Millisecond},
		{value: "1s", want: time.Second},
		{value: "2s", invalid: true},
		{value: "-1ms", invalid: true},
		{value: "soon", invalid: true},
	}
	defaults := map[string]time.Duration{"PITBOSS_RELAY_LINGER": 20 * time.Millisecond, "PITBOSS_CONSUMER_FETCH_WAIT": 0}
	for _, name := range []string{"PITBOSS_RELAY_LINGER", "PITBOSS_CONSUMER_FETCH_WAIT"} {
		for _, tc := range append([]struct {
			value   string
			want    time.Duration
			invalid bool
		}{{value: "", want: defaults[name]}}, tests...) {
			t.Run(name+"="+tc.value, func(t *testing.T) {
				t.Setenv(name, tc.value)
				c, err := loadConfig()
				if tc.invalid {
					if err == nil || !strings.Contains(err.Error(), name) {
						t.Fatalf("error %v, want one naming %s", err, name)
					}
					return
				}
				got := c.RelayLinger
				if name == "PITBOSS_CONSUMER_FETCH_WAIT" {
					got = c.ConsumerFetchWait
				}
				if err != nil || got != tc.want {
					t.Fatalf("%v, %v; want %v", got, err, tc.want)
				}
			})
		}
	}
}
