package main

import (
	"strings"
	"testing"
	"time"
)

// TestGatherConfig reads PITBOSS_RELAY_LINGER (50 ms by default) and
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
	for _, v := range []struct {
		name string
		def  time.Duration
		got  func(config) time.Duration
	}{
		{"PITBOSS_RELAY_LINGER", 50 * time.Millisecond, func(c config) time.Duration { return c.RelayLinger }},
		{"PITBOSS_CONSUMER_FETCH_WAIT", 0, func(c config) time.Duration { return c.ConsumerFetchWait }},
	} {
		t.Run(v.name+" unset", func(t *testing.T) {
			t.Setenv(v.name, "")
			if c, err := loadConfig(); err != nil || v.got(c) != v.def {
				t.Fatalf("%v, %v; want the default %v", v.got(c), err, v.def)
			}
		})
		for _, tc := range tests {
			t.Run(v.name+"="+tc.value, func(t *testing.T) {
				t.Setenv(v.name, tc.value)
				c, err := loadConfig()
				if tc.invalid {
					if err == nil || !strings.Contains(err.Error(), v.name) {
						t.Fatalf("error %v, want one naming %s", err, v.name)
					}
					return
				}
				if err != nil || v.got(c) != tc.want {
					t.Fatalf("%v, %v; want %v", v.got(c), err, tc.want)
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
