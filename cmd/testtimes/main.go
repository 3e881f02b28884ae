// Command testtimes reads `go test -json` on its standard input, writes
// what a plain `go test` would have written (package results, and the
// output of failed tests only), then a table of the slowest tests and
// packages, so that the next slow test shows at the end of `make test`.
//
//	go test -json -race ./... | testtimes [-n 10]
//
// Its exit code is 0 unless the input cannot be read: `make test` runs it
// under `set -o pipefail`, so the result is go test's.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// timing is a test's or a package's elapsed time.
type timing struct {
	pkg, test string
	secs      float64
	failed    bool
}

func main() {
	n := flag.Int("n", 10, "how many of the slowest tests to list")
	flag.Parse()
	tests, pkgs, err := relay(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testtimes:", err)
		os.Exit(1)
	}
	report(os.Stdout, tests, pkgs, *n)
}

// relay copies the input as a plain go test would print it and returns
// the top-level tests' and the packages' times.
func relay(r io.Reader, w io.Writer) (tests, pkgs []timing, err error) {
	held := map[string][]string{} // package + test → its output until it ends
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintln(w, string(line)) // not an event: go vet, a build error
			continue
		}
		key := e.Package + "\x00" + e.Test
		switch {
		case e.Action == "build-output":
			fmt.Fprint(w, e.Output)
		case e.Action == "output" && e.Test == "":
			if e.Output != "PASS\n" && !strings.HasPrefix(e.Output, "=== ") {
				fmt.Fprint(w, e.Output)
			}
		case e.Action == "output":
			if !strings.HasPrefix(e.Output, "=== ") {
				held[key] = append(held[key], e.Output)
			}
		case e.Action == "pass" || e.Action == "fail" || e.Action == "skip":
			if e.Action == "fail" {
				fmt.Fprint(w, strings.Join(held[key], ""))
			}
			delete(held, key)
			t := timing{pkg: e.Package, test: e.Test, secs: e.Elapsed, failed: e.Action == "fail"}
			switch {
			case e.Action == "skip":
			case e.Test == "":
				pkgs = append(pkgs, t)
			case !strings.Contains(e.Test, "/"):
				tests = append(tests, t)
			}
		}
	}
	return tests, pkgs, sc.Err()
}

// report prints the n slowest top-level tests and every package with
// tests, slowest first, and the packages' sum.
func report(w io.Writer, tests, pkgs []timing, n int) {
	if len(pkgs) == 0 {
		return
	}
	slowest := func(s []timing) {
		sort.SliceStable(s, func(i, j int) bool { return s[i].secs > s[j].secs })
	}
	slowest(tests)
	slowest(pkgs)
	fmt.Fprintf(w, "\nslowest tests (go test -json Elapsed):\n")
	for _, t := range tests[:min(n, len(tests))] {
		fmt.Fprintf(w, "  %7.1f s  %s  %s%s\n", t.secs, t.test, t.pkg, mark(t))
	}
	var sum float64
	fmt.Fprintf(w, "slowest packages:\n")
	for i, p := range pkgs {
		sum += p.secs
		if i < n {
			fmt.Fprintf(w, "  %7.1f s  %s%s\n", p.secs, p.pkg, mark(p))
		}
	}
	fmt.Fprintf(w, "  %7.1f s  the sum of %d packages (go test runs several at once)\n", sum, len(pkgs))
}

func mark(t timing) string {
	if t.failed {
		return "  FAIL"
	}
	return ""
}
