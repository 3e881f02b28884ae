package main

import (
	"strings"
	"testing"
)

// TestLedgerCacheConfig reads PITBOSS_LEDGER_CACHE: 50,000 by default, a
// count from 2 to 10,000,000, nothing else. Not parallel: it sets the
// variable.
func TestLedgerCacheConfig(t *testing.T) {
	for value, want := range map[string]int{"": 50_000, "2": 2, "1000": 1000, "10000000": 10_000_000,
		"1": 0, "0": 0, "-5": 0, "10000001": 0, "lots": 0} {
		t.Run(value, func(t *testing.T) {
			t.Setenv("PITBOSS_LEDGER_CACHE", value)
			c, err := loadConfig()
			if want == 0 {
				if err == nil || !strings.Contains(err.Error(), "PITBOSS_LEDGER_CACHE") {
					t.Fatalf("error %v, want one naming PITBOSS_LEDGER_CACHE", err)
				}
				return
			}
			if err != nil || c.LedgerCache != want {
				t.Fatalf("cache %d, %v; want %d", c.LedgerCache, err, want)
			}
		})
	}
}

// TestLedgerInFlightConfig reads PITBOSS_LEDGER_IN_FLIGHT: 2 by default,
// 1 or 2, nothing else.
func TestLedgerInFlightConfig(t *testing.T) {
	for value, want := range map[string]int{"": 2, "1": 1, "2": 2, "0": 0, "3": 0, "-1": 0, "two": 0} {
		t.Run(value, func(t *testing.T) {
			t.Setenv("PITBOSS_LEDGER_IN_FLIGHT", value)
			c, err := loadConfig()
			if want == 0 {
				if err == nil || !strings.Contains(err.Error(), "PITBOSS_LEDGER_IN_FLIGHT") {
					t.Fatalf("error %v, want one naming PITBOSS_LEDGER_IN_FLIGHT", err)
				}
				return
			}
			if err != nil || c.LedgerInFlight != want {
				t.Fatalf("in flight %d, %v; want %d", c.LedgerInFlight, err, want)
			}
		})
	}
}
