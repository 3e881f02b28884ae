package main

import (
	"math"
	"testing"
)

// TestStatNotRunning: the machine's time not running anything is idle,
// iowait and steal of the "cpu" line, in seconds (USER_HZ ticks); its CPUs
// are the "cpuN" lines. The busy fields (user, nice, system, irq, softirq)
// and guest never count: tick-sampled, they miss short bursts.
func TestStatNotRunning(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		stat       string
		notRunning float64
		cpus       int
	}{
		{name: "two CPUs, all ten fields",
			stat:       "cpu  100 10 50 800 20 3 7 40 30 5\ncpu0 50 5 25 400 10 1 3 20 15 2\ncpu1 50 5 25 400 10 2 4 20 15 3\nintr 1 2 3\nctxt 99\n",
			notRunning: 8.6, cpus: 2},
		{name: "no steal or guest (old kernels)", stat: "cpu 100 10 50 800 20 3 7\ncpu0 100 10 50 800 20 3 7\n", notRunning: 8.2, cpus: 1},
		{name: "per-CPU lines only", stat: "cpu0 100 10 50 800 20 3 7 40 30 5\n", cpus: 1},
		{name: "empty", stat: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			notRunning, cpus := statNotRunning(tc.stat)
			if math.Abs(notRunning-tc.notRunning) > 1e-9 || cpus != tc.cpus {
				t.Errorf("statNotRunning(%q) = %v, %d; want %v, %d", tc.stat, notRunning, cpus, tc.notRunning, tc.cpus)
			}
		})
	}
}
