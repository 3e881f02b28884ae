package main

import (
	"os"
	"runtime/debug"
)

// Collector defaults of `serve` (serveGC).
const (
	serveGCPercent  = 400
	serveMemLimitMB = 160
)

// serveGC sets the collector of a long-running `serve` when the operator
// set neither GOGC nor GOMEMLIMIT: GOGC=400 under a soft limit of 160 MiB.
// The service's live heap is small (about 25 MB under the benchmark's
// load) and short-lived garbage is most of what it allocates, so with Go's
// default (a collection each time the heap doubles) the mark workers took
// about 11 % of its CPU at 64 concurrent wallet calls; collecting at five
// times the live heap does a quarter of that work. The limit keeps the
// process well inside the 256 MB that the benchmark's target allows
// (docs/benchmarks.md): nearing it, the collector runs more often instead.
// It returns what it set, for the log.
func serveGC() (percent int, limitMB int64, set bool) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return 0, 0, false
	}
	debug.SetGCPercent(serveGCPercent)
	debug.SetMemoryLimit(serveMemLimitMB << 20)
	return serveGCPercent, serveMemLimitMB, true
}
