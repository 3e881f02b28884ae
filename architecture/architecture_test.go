package architecture_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/pitboss/pitboss"

// pkg is what `go list -json` says of one of our packages (production
// files only: tests may reach across rooms to build a harness).
type pkg struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
	Deps       []string
}

func listPackages(t *testing.T) map[string]pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		pkgs[rel(p.ImportPath)] = p
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages; is the module path %s?", len(pkgs), module)
	}
	return pkgs
}

// rel is an import path relative to the module ("adapters/postgres"), or
// the path unchanged for a package that is not ours.
func rel(path string) string {
	if path == module {
		return "."
	}
	if r, ok := strings.CutPrefix(path, module+"/"); ok {
		return r
	}
	return path
}

func ours(path string) bool { return path == module || strings.HasPrefix(path, module+"/") }

// under reports whether the relative path p is room or inside it.
func under(p, room string) bool { return p == room || strings.HasPrefix(p, room+"/") }

// testSupport reports whether the relative path p is a package that only
// tests import: the contract suites and harnesses (named …test: pgtest,
// ledgertest, apitest ...), the eventually helper and the chaos suite's
// stack (it starts real processes for the fault tests). They may wire real
// adapters; no production package may import them.
func testSupport(p string) bool {
	return strings.HasSuffix(p, "test") || under(p, "internal/eventually") || under(p, "chaos")
}

// stdlib reports whether an import path is of the standard library (no dot
// in its first element).
func stdlib(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// Direct imports: one rule per line of the package map.
func TestImportRules(t *testing.T) {
	pkgs := listPackages(t)
	type rule struct {
		name   string
		from   func(p string) bool
		denied func(imp string) bool
	}
	adapter := func(imp string) bool { return under(rel(imp), "adapters") && ours(imp) }
	workers := []string{"adapters/delivery", "adapters/forwarder", "adapters/relay", "adapters/projector"}
	rules := []rule{
		{"adapters never import api", func(p string) bool { return under(p, "adapters") },
			func(imp string) bool { return ours(imp) && under(rel(imp), "api") }},
		{"api never imports adapters", func(p string) bool { return under(p, "api") && !testSupport(p) }, adapter},
		{"production code never imports test support", func(p string) bool { return !testSupport(p) },
			func(imp string) bool { return ours(imp) && testSupport(rel(imp)) }},
		{"a store never imports a worker", func(p string) bool { return under(p, "adapters/postgres") },
			func(imp string) bool {
				return ours(imp) && slices.ContainsFunc(workers, func(w string) bool { return under(rel(imp), w) })
			}},
		{"the provider simulator speaks the wire", func(p string) bool { return under(p, "providersim") },
			func(imp string) bool {
				return ours(imp) && !under(rel(imp), "gateway") && !under(rel(imp), "domain") && !under(rel(imp), "providersim")
			}},
		{"nothing imports cmd", func(p string) bool { return !under(p, "cmd") },
			func(imp string) bool { return ours(imp) && under(rel(imp), "cmd") }},
	}
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			for _, p := range sortedKeys(pkgs) {
				if !r.from(p) {
					continue
				}
				for _, imp := range pkgs[p].Imports {
					if r.denied(imp) {
						t.Errorf("%s imports %s", p, rel(imp))
					}
				}
			}
		})
	}
}

// The core rooms, with everything they pull in transitively.
func TestCoreStaysPure(t *testing.T) {
	pkgs := listPackages(t)
	http := []string{"net/http", "github.com/labstack/echo/v4"}
	core := map[string][]string{ // room -> the rooms of ours it may reach
		"domain":      {"domain"},
		"commands":    {"commands", "domain"},
		"projections": {"projections", "domain"},
		"gateway":     {"gateway", "domain"},
	}
	if _, ok := pkgs["gateway"]; !ok {
		t.Fatal("no gateway package")
	}
	for _, room := range sortedKeys(core) {
		for _, p := range sortedKeys(pkgs) {
			if !under(p, room) || testSupport(p) {
				continue // contract suites (…test packages) import testing harnesses
			}
			for _, dep := range pkgs[p].Deps {
				switch {
				case ours(dep) && !slices.ContainsFunc(core[room], func(r string) bool { return under(rel(dep), r) }):
					t.Errorf("%s depends on %s (may reach only %v)", p, rel(dep), core[room])
				case slices.Contains(http, dep):
					t.Errorf("%s depends on the HTTP package %s", p, dep)
				}
			}
		}
	}
	// domain: the standard library and the decimal type only.
	for _, dep := range pkgs["domain"].Deps {
		if !stdlib(dep) && !ours(dep) && dep != "github.com/govalues/decimal" {
			t.Errorf("domain depends on %s (standard library and the decimal type only)", dep)
		}
	}
}

// Limits from issue 15: a room over 4,000 lines or a file over 700 is too
// big to find one's way in.
const (
	maxPackageLines = 4000
	maxFileLines    = 700
)

func TestSizes(t *testing.T) {
	pkgs := listPackages(t)
	for _, p := range sortedKeys(pkgs) {
		total := 0
		for _, f := range pkgs[p].GoFiles {
			n := countLines(t, filepath.Join(pkgs[p].Dir, f))
			total += n
			if n > maxFileLines {
				t.Errorf("%s/%s has %d lines (at most %d)", p, f, n, maxFileLines)
			}
		}
		if total > maxPackageLines {
			t.Errorf("%s has %d lines of production code (at most %d)", p, total, maxPackageLines)
		}
	}
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer f.Close()
	n := 0
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		n++
	}
	if err := s.Err(); err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return n
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// The rules must see an edge when there is one: the checker itself is
// tested on the real graph's known-good facts.
func TestCheckerSeesEdges(t *testing.T) {
	pkgs := listPackages(t)
	if !slices.Contains(pkgs["cmd/pitboss"].Imports, module+"/api") {
		t.Fatal("cmd/pitboss does not import api: the import lists are not read")
	}
	if !slices.Contains(pkgs["commands"].Deps, module+"/domain") {
		t.Fatal("commands does not depend on domain: the dependency lists are not read")
	}
}
