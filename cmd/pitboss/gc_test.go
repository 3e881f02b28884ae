package main

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestServeGC(t *testing.T) {
	tests := []struct {
		name          string
		gogc, memlim  string
		wantSet       bool
		wantPercent   int
		wantLimitByte int64
	}{
		{name: "neither set: the service's defaults", wantSet: true, wantPercent: serveGCPercent,
			wantLimitByte: serveMemLimitMB << 20},
		{name: "GOGC set: left to the runtime", gogc: "150", wantPercent: 100, wantLimitByte: math.MaxInt64},
		{name: "GOMEMLIMIT set: left to the runtime", memlim: "1GiB", wantPercent: 100, wantLimitByte: math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The runtime read GOGC and GOMEMLIMIT at start; this test
			// sets its own baseline and puts the process's settings back.
			oldPercent := debug.SetGCPercent(100)
			oldLimit := debug.SetMemoryLimit(math.MaxInt64)
			t.Cleanup(func() {
				debug.SetGCPercent(oldPercent)
				debug.SetMemoryLimit(oldLimit)
			})
			t.Setenv("GOGC", tt.gogc)
			t.Setenv("GOMEMLIMIT", tt.memlim)
			_, _, set := serveGC()
			if set != tt.wantSet {
				t.Errorf("set = %v, want %v", set, tt.wantSet)
			}
			if got := debug.SetGCPercent(100); got != tt.wantPercent {
				t.Errorf("GC percent %d, want %d", got, tt.wantPercent)
			}
			if got := debug.SetMemoryLimit(-1); got != tt.wantLimitByte {
				t.Errorf("memory limit %d, want %d", got, tt.wantLimitByte)
			}
		})
	}
}
