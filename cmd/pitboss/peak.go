package main

import (
	"fmt"
	"io"

	"github.com/pitboss/pitboss/internal/procmem"
)

// peakMemory is the process's peak resident memory in bytes (VmHWM of
// /proc/self/status); ok is false where the kernel does not report it.
func peakMemory() (bytes int64, ok bool) {
	_, hwm, err := procmem.KB("self")
	return hwm << 10, err == nil && hwm > 0
}

// reportPeakMemory writes the command's peak resident memory (issue 21:
// replay and verify say what they held).
func reportPeakMemory(w io.Writer, command string) {
	if b, ok := peakMemory(); ok {
		fmt.Fprintf(w, "%s: peak memory %d MB (resident, VmHWM)\n", command, b>>20)
	}
}
