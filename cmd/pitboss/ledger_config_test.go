package main

import (
	"strings"
	"testing"
)

// TestLedgerConfig reads the ledger writer's variables: each takes its
// default when empty, a count in its range, nothing else (0 below: an
// error naming the variable). Not parallel: it sets the variables.
func TestLedgerConfig(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cases map[string]int
		got   func(config) int
	}{
		{"PITBOSS_LEDGER_CACHE", map[string]int{"": 50_000, "2": 2, "1000": 1000, "10000000": 10_000_000,
			"1": 0, "0": 0, "-5": 0, "10000001": 0, "lots": 0}, func(c config) int { return c.LedgerCache }},
		{"PITBOSS_LEDGER_IN_FLIGHT", map[string]int{"": 2, "1": 1, "2": 2, "0": 0, "3": 0, "-1": 0, "two": 0},
			func(c config) int { return c.LedgerInFlight }},
	} {
		for value, want := range tc.cases {
			t.Run(tc.name+"="+value, func(t *testing.T) {
				t.Setenv(tc.name, value)
				c, err := loadConfig()
				if want == 0 {
					if err == nil || !strings.Contains(err.Error(), tc.name) {
						t.Fatalf("error %v, want one naming %s", err, tc.name)
					}
					return
				}
				if err != nil || tc.got(c) != want {
					t.Fatalf("%s = %d, %v; want %d", tc.name, tc.got(c), err, want)
				}
			})
		}
	}
}
