// Package procmem reads a process's resident memory from Linux's
// /proc/<pid>/status: the benchmark's view of the service, and replay's
// and verify's report of their own peak.
package procmem

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// KB returns VmRSS and VmHWM (the peak resident set) of pid ("self" for
// this process) in KiB.
func KB(pid string) (rss, hwm int64, err error) {
	f, err := os.Open("/proc/" + pid + "/status")
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			rss = n
		case "VmHWM":
			hwm = n
		}
	}
	return rss, hwm, sc.Err()
}
