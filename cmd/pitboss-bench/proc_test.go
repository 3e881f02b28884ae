package main

import "testing"

// TestCPUJiffies: busy is user, nice, system, irq and softirq; idle,
// iowait and steal count only in the total; guest and guest_nice, already
// inside user and nice, in neither.
func TestCPUJiffies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		line        string
		busy, total float64
	}{
		{name: "all ten fields", line: "cpu  100 10 50 800 20 3 7 40 30 5", busy: 170, total: 1030},
		{name: "no steal or guest (old kernels)", line: "cpu 100 10 50 800 20 3 7", busy: 170, total: 990},
		{name: "a per-CPU line is not the machine's", line: "cpu0 100 10 50 800 20 3 7 40 30 5"},
		{name: "empty", line: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			busy, total := cpuJiffies(tc.line)
			if busy != tc.busy || total != tc.total {
				t.Errorf("cpuJiffies(%q) = %v, %v; want %v, %v", tc.line, busy, total, tc.busy, tc.total)
			}
		})
	}
}
