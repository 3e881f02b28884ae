package architecture_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/architecture"
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
	Error      *struct{ Err string }
}

func listPackages(t *testing.T) map[string]pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json", module+"/...")
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
		if p.Error != nil {
			t.Errorf("go list: %s: %s", p.ImportPath, p.Error.Err)
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

// The package map (architecture.Rooms): every package in exactly one room,
// every room (but a pending one) with a package, every direct import of
// ours one its room allows.
func TestPackageMap(t *testing.T) {
	pkgs := listPackages(t)
	rooms := architecture.Rooms
	roomOf := map[string]architecture.Room{}
	for _, p := range sortedKeys(pkgs) {
		var in []architecture.Room
		for _, r := range rooms {
			if r.Covers(p) {
				in = append(in, r)
			}
		}
		switch len(in) {
		case 0:
			t.Errorf("%s is in no room of the package map: add it to a room in architecture/rooms.go", p)
		case 1:
			roomOf[p] = in[0]
		default:
			var names []string
			for _, r := range in {
				names = append(names, r.Name())
			}
			t.Errorf("%s is in %d rooms of the package map (%s): one only", p, len(in), strings.Join(names, ", "))
		}
	}
	for _, r := range rooms {
		if r.Pending == "" && !slices.ContainsFunc(sortedKeys(pkgs), r.Covers) {
			t.Errorf("room %s has no package: remove it, or mark it Pending while a refactor brings it", r.Name())
		}
		// An allowed import names a package, or a pending room's.
		for _, imp := range r.Imports {
			known := imp == architecture.Everything || slices.ContainsFunc(sortedKeys(pkgs), func(p string) bool {
				return architecture.Match(imp, p)
			}) || slices.ContainsFunc(rooms, func(o architecture.Room) bool {
				return o.Pending != "" && slices.Contains(o.Packages, imp)
			})
			if !known {
				t.Errorf("room %s may import %s, which is no package of ours", r.Name(), imp)
			}
		}
	}
	for _, p := range sortedKeys(pkgs) {
		r, ok := roomOf[p]
		if !ok {
			continue
		}
		for _, imp := range pkgs[p].Imports {
			if ours(imp) && !r.MayImport(rel(imp)) {
				allowed := "nothing of ours"
				if len(r.Imports) > 0 {
					allowed = strings.Join(r.Imports, ", ")
				}
				t.Errorf("%s imports %s; its room (%s) may import only %s (architecture/rooms.go)", p, rel(imp), r.Name(), allowed)
			}
		}
	}
}

var update = flag.Bool("update", false, "rewrite docs/architecture.md's package map from architecture.Rooms")

const (
	docPath  = "../docs/architecture.md"
	docBegin = "<!-- package-map:begin (generated from architecture/rooms.go: " +
		"go test ./architecture -run TestPackageMapDoc -update) -->\n"
	docEnd = "<!-- package-map:end -->"
)

// docs/architecture.md's package map is architecture.Rooms rendered.
func TestPackageMapDoc(t *testing.T) {
	want, err := architecture.Markdown(architecture.Rooms)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, docBegin), strings.Index(doc, docEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no package map between the lines\n%s%s", docPath, docBegin, docEnd)
	}
	got := doc[i+len(docBegin) : j]
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(docPath, []byte(doc[:i+len(docBegin)]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote the package map in %s", docPath)
		return
	}
	t.Errorf("the package map in %s is not architecture.Rooms (- doc, + Rooms):\n%s\n"+
		"Edit architecture/rooms.go, not the doc; then: go test ./architecture -run TestPackageMapDoc -update",
		docPath, lineDiff(got, want))
}

// lineDiff is a minimal line diff of a and b (longest common subsequence):
// lines only in a with "-", only in b with "+".
func lineDiff(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			i, j = i+1, j+1
		case j < len(y) && (i == len(x) || lcs[i][j+1] >= lcs[i+1][j]):
			fmt.Fprintf(&out, "+ %s\n", y[j])
			j++
		default:
			fmt.Fprintf(&out, "- %s\n", x[i])
			i++
		}
	}
	return out.String()
}

// Rules the map keeps whatever its rows say: a room's edit cannot undo
// them.
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
		"wallet":      {"wallet", "commands", "gateway", "domain"},
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

// Files over architecture.MaxFileLines, and functions of production code
// over architecture.MaxFuncLines but for architecture.LongFuncs.
func TestSizes(t *testing.T) {
	pkgs := listPackages(t)
	long := map[string]int{} // function -> lines, of those over the limit
	found := map[string]bool{}
	for _, p := range sortedKeys(pkgs) {
		for _, f := range pkgs[p].GoFiles {
			path := filepath.Join(pkgs[p].Dir, f)
			if n := countLines(t, path); n > architecture.MaxFileLines {
				t.Errorf("%s/%s has %d lines (at most %d)", p, f, n, architecture.MaxFileLines)
			}
			if testSupport(p) {
				continue
			}
			for name, n := range funcLines(t, path) {
				found[p+"."+name] = true
				if n > architecture.MaxFuncLines {
					long[p+"."+name] = n
				}
			}
		}
	}
	for _, name := range sortedKeys(long) {
		if _, ok := architecture.LongFuncs[name]; !ok {
			t.Errorf("%s has %d lines (at most %d; split it, or add it to LongFuncs in architecture/limits.go with why)",
				name, long[name], architecture.MaxFuncLines)
		}
	}
	for _, name := range sortedKeys(architecture.LongFuncs) {
		switch {
		case !found[name]:
			t.Errorf("LongFuncs names %s, which is no function: remove it from architecture/limits.go", name)
		case long[name] == 0:
			t.Errorf("%s is within %d lines now: remove it from LongFuncs (architecture/limits.go)", name, architecture.MaxFuncLines)
		}
	}
}

// funcLines are the lengths of the file's functions, from the opening
// brace's line to the closing brace's, by name (Type.Method for a method).
func funcLines(t *testing.T, path string) map[string]int {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	out := map[string]int{}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		name := fn.Name.Name
		if fn.Recv != nil && len(fn.Recv.List) == 1 {
			name = receiver(fn.Recv.List[0].Type) + "." + name
		}
		out[name] = fset.Position(fn.Body.Rbrace).Line - fset.Position(fn.Body.Lbrace).Line + 1
	}
	return out
}

// receiver is a method's receiver type's name, pointer or not, type
// parameters left out.
func receiver(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return receiver(x.X)
	case *ast.IndexExpr:
		return receiver(x.X)
	case *ast.IndexListExpr:
		return receiver(x.X)
	case *ast.Ident:
		return x.Name
	}
	return "?"
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
// tested on the real graph's known-good facts, and the map's patterns on
// examples.
func TestCheckerSeesEdges(t *testing.T) {
	pkgs := listPackages(t)
	if !slices.Contains(pkgs["cmd/pitboss"].Imports, module+"/api") {
		t.Fatal("cmd/pitboss does not import api: the import lists are not read")
	}
	if !slices.Contains(pkgs["commands"].Deps, module+"/domain") {
		t.Fatal("commands does not depend on domain: the dependency lists are not read")
	}
	for _, tc := range []struct {
		pattern, path string
		want          bool
	}{
		{"api", "api", true}, {"api", "api/wire", false}, {"api", "apix", false},
		{"chaos/...", "chaos", true}, {"chaos/...", "chaos/stack", true}, {"chaos/...", "chaosx", false},
		{"api/dialect/*", "api/dialect/caleta", true}, {"api/dialect/*", "api/dialect", false},
		{"api/dialect/*", "api/dialect/caleta/x", false},
		{"*test", "adapters/postgres/pgtest", true}, {"*test", "modeltest", true}, {"*test", "adapters/testx", false},
	} {
		if got := architecture.Match(tc.pattern, tc.path); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
	}
	// A room that would allow too much is seen: api's room does not cover
	// an adapter, nor may it import one.
	for _, r := range architecture.Rooms {
		if r.Covers("api") && (r.MayImport("adapters/postgres") || r.Covers("adapters/postgres")) {
			t.Errorf("room %s lets api import adapters/postgres", r.Name())
		}
	}
}
