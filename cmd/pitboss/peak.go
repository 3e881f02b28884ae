package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// peakMemory is the process's peak resident memory in bytes (VmHWM of
// /proc/self/status); ok is false where the kernel does not report it.
func peakMemory() (bytes int64, ok bool) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, found := strings.CutPrefix(sc.Text(), "VmHWM:")
		if !found {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		return kb * 1024, err == nil
	}
	return 0, false
}

// reportPeakMemory writes the command's peak resident memory (issue 21:
// replay and verify say what they held).
func reportPeakMemory(w io.Writer, command string) {
	if b, ok := peakMemory(); ok {
		fmt.Fprintf(w, "%s: peak memory %d MB (resident, VmHWM)\n", command, b>>20)
	}
}

// peakMemory logs the command's peak resident memory as a JSON line, for
// stderr off a terminal.
func (l *progressLog) peakMemory() {
	if b, ok := peakMemory(); ok {
		l.log.Info(l.command+" peak memory", "command", l.command, "peak_memory_mb", b>>20)
	}
}
