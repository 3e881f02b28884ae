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

// TestAdaptiveProcsConfig reads PITBOSS_ADAPTIVE_PROCS: on by default, off
// by the operator's choice or by a GOMAXPROCS of theirs. Not parallel: it
// sets the variables.
func TestAdaptiveProcsConfig(t *testing.T) {
	tests := []struct {
		value, gomaxprocs string
		want, invalid     bool
	}{
		{value: "", want: true},
		{value: "on", want: true},
		{value: "off", want: false},
		{value: "", gomaxprocs: "2", want: false},
		{value: "yes", invalid: true},
	}
	for _, tc := range tests {
		t.Run(tc.value+"/"+tc.gomaxprocs, func(t *testing.T) {
			t.Setenv("PITBOSS_ADAPTIVE_PROCS", tc.value)
			t.Setenv("GOMAXPROCS", tc.gomaxprocs)
			c, err := loadConfig()
			if tc.invalid {
				if err == nil || !strings.Contains(err.Error(), "PITBOSS_ADAPTIVE_PROCS") {
					t.Fatalf("error %v, want one naming PITBOSS_ADAPTIVE_PROCS", err)
				}
				return
			}
			if err != nil || c.AdaptiveProcs != tc.want {
				t.Fatalf("AdaptiveProcs %v, %v; want %v", c.AdaptiveProcs, err, tc.want)
			}
		})
	}
}
