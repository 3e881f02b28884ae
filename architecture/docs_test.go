package architecture_test

import (
	"bufio"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/architecture"
)

// The docs a newcomer reads: README.md and every Markdown file under docs/,
// as paths relative to the repository root.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir("../docs", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			r, err := filepath.Rel("..", path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(r))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("found only %d Markdown files: is the test run from architecture/?", len(files))
	}
	return files
}

// mdLine is one line of a Markdown file outside fenced code blocks.
type mdLine struct {
	n    int
	text string
}

// proseLines are the file's (a path relative to the repository root, or
// an absolute one) lines outside fenced code blocks (``` or ~~~),
// where neither links nor headings are Markdown.
func proseLines(t *testing.T, file string) []mdLine {
	t.Helper()
	path := file
	if !filepath.IsAbs(path) {
		path = filepath.Join("..", file)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []mdLine
	fence := ""
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; s.Scan(); n++ {
		line := s.Text()
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		case strings.HasPrefix(trimmed, "```"):
			fence = "```"
			continue
		case strings.HasPrefix(trimmed, "~~~"):
			fence = "~~~"
			continue
		}
		out = append(out, mdLine{n, line})
	}
	if err := s.Err(); err != nil {
		t.Fatalf("read %s: %v", file, err)
	}
	return out
}

var (
	atxHeading = regexp.MustCompile(`^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$`)
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
	inlineLink = regexp.MustCompile(`!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*(<[^>]*>|[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)(?:\s+"[^"]*")?\s*\)`)
	htmlTag    = regexp.MustCompile(`<[^>]+>`)
	notInSlug  = regexp.MustCompile(`[^\p{L}\p{M}\p{N}\p{Pc} -]`)
)

// headings are the file's ATX headings' texts, in order.
func headings(t *testing.T, file string) []mdLine {
	t.Helper()
	var out []mdLine
	for _, l := range proseLines(t, file) {
		if m := atxHeading.FindStringSubmatch(l.text); m != nil {
			out = append(out, mdLine{l.n, m[2]})
		}
	}
	return out
}

// slug is the anchor GitHub gives a heading: the rendered text (a link's
// text, no markup) lower-cased, every character but letters, marks,
// digits, connector punctuation (_), hyphens and spaces dropped, each space
// a hyphen.
func slug(heading string) string {
	text := inlineLink.ReplaceAllString(heading, "$1")
	text = htmlTag.ReplaceAllString(text, "")
	text = notInSlug.ReplaceAllString(strings.ToLower(text), "")
	return strings.ReplaceAll(text, " ", "-")
}

// anchors are the file's heading anchors; a repeated heading gets -1, -2 …
// as GitHub numbers them.
func anchors(t *testing.T, file string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	seen := map[string]int{}
	for _, h := range headings(t, file) {
		s := slug(h.text)
		a := s
		if n := seen[s]; n > 0 {
			a = fmt.Sprintf("%s-%d", s, n)
		}
		seen[s]++
		out[a] = true
	}
	return out
}

func TestSlugLikeGitHub(t *testing.T) {
	for _, tc := range []struct{ heading, want string }{ // headings of our docs, anchors GitHub made of them
		{"Runbook: the PostgreSQL primary is lost — promote the standby", "runbook-the-postgresql-primary-is-lost--promote-the-standby"},
		{"Local cluster (`make cluster`)", "local-cluster-make-cluster"},
		{"One core, many dialects", "one-core-many-dialects"},
		{"Money kinds: real, promo and jackpot money", "money-kinds-real-promo-and-jackpot-money"},
		{"GET /api/v1/transactions — scope `transactions:read`", "get-apiv1transactions--scope-transactionsread"},
		{"GGR (`readmodels.ggr_daily`, `ggr_players`)", "ggr-readmodelsggr_daily-ggr_players"},
		{"Why keys stay hashed", "why-keys-stay-hashed"},
		{"See [the map](architecture.md#package-map)", "see-the-map"},
	} {
		if got := slug(tc.heading); got != tc.want {
			t.Errorf("slug(%q) = %q, want %q", tc.heading, got, tc.want)
		}
	}
	// The counter for repeated headings: the file below has none, but the
	// rule must hold where one appears.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.md"), []byte("# A\n## Tests\n```\n# not a heading\n```\n## Tests\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := anchors(t, filepath.Join(dir, "x.md"))
	for _, want := range []string{"a", "tests", "tests-1"} {
		if !got[want] {
			t.Errorf("anchors of a file with two \"Tests\" headings lack %q: %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Error("a line in a fenced code block was read as a heading")
	}
}

// links are the file's Markdown links outside code (fenced blocks and code
// spans), with their line numbers.
func links(t *testing.T, file string) []mdLine {
	t.Helper()
	var out []mdLine
	for _, l := range proseLines(t, file) {
		for _, m := range inlineLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(l.text, "``"), -1) {
			out = append(out, mdLine{l.n, strings.Trim(m[2], "<>")})
		}
	}
	return out
}

// Every relative link in README.md and docs/ names a file or folder that
// exists, and a link with a #fragment into a Markdown file names one of
// its headings.
func TestDocLinksResolve(t *testing.T) {
	anchorsOf := map[string]map[string]bool{}
	checked := 0
	for _, file := range markdownFiles(t) {
		for _, l := range links(t, file) {
			u, err := url.Parse(l.text)
			if err != nil {
				t.Errorf("%s:%d: link %q: %v", file, l.n, l.text, err)
				continue
			}
			if u.Scheme != "" || u.Host != "" || l.text == "" {
				continue // http(s), mailto: not ours to check here
			}
			target := file
			if u.Path != "" {
				target = filepath.ToSlash(filepath.Join(filepath.Dir(file), u.Path))
			}
			checked++
			if strings.HasPrefix(target, "../") {
				t.Errorf("%s:%d: link %q leaves the repository", file, l.n, l.text)
				continue
			}
			if _, err := os.Stat(filepath.Join("..", target)); err != nil {
				t.Errorf("%s:%d: link %q: no file %s", file, l.n, l.text, target)
				continue
			}
			if u.Fragment == "" || !strings.HasSuffix(target, ".md") {
				continue
			}
			if anchorsOf[target] == nil {
				anchorsOf[target] = anchors(t, target)
			}
			if !anchorsOf[target][u.Fragment] {
				t.Errorf("%s:%d: link %q: %s has no heading with the anchor #%s", file, l.n, l.text, target, u.Fragment)
			}
		}
	}
	if checked < 50 {
		t.Errorf("checked only %d relative links: the link pattern reads too little", checked)
	}
}

// diaryHeading is a heading that dates a section or names the issue it
// came from: the shape of a work log, not of reference. The history of
// how a figure or a design moved lives in commits and issues.
var diaryHeading = regexp.MustCompile(`(?i)\b20\d\d-\d\d-\d\d\b|\bissue \d+`)

// Docs say what is, not when it came about: no heading in docs/ names a
// date or an issue.
func TestNoDiaryHeadings(t *testing.T) {
	for _, bad := range []string{"Two batches in flight, 2026-11-27 (fourth)", "The outside review (issue 17), item by item", "Issue 19 item 1"} {
		if !diaryHeading.MatchString(bad) {
			t.Errorf("the rule misses the diary heading %q", bad)
		}
	}
	for _, file := range markdownFiles(t) {
		if !strings.HasPrefix(file, "docs/") {
			continue
		}
		for _, h := range headings(t, file) {
			if diaryHeading.MatchString(h.text) {
				t.Errorf("%s:%d: heading %q names a date or an issue: say what is, and leave the history to commits", file, h.n, h.text)
			}
		}
	}
}

// layoutEntry is a path of the first column of README.md's "Project
// layout" table, as an architecture.Match pattern: "domain/" is the
// package domain, "chaos/..." it and every package below it, "*test"
// every package whose name ends in test; "a/{b,c}" stands for a/b and a/c.
type layoutEntry struct {
	line    int
	pattern string
}

// wildcard reports whether the entry stands for more than one path.
func (e layoutEntry) wildcard() bool {
	return strings.ContainsAny(e.pattern, "*") || strings.HasSuffix(e.pattern, "/...")
}

var braces = regexp.MustCompile(`^(.*)\{([^{}]*)\}(.*)$`)

func layoutEntries(t *testing.T) []layoutEntry {
	t.Helper()
	var out []layoutEntry
	in, table := false, false
	for _, l := range proseLines(t, "README.md") {
		switch {
		case strings.HasPrefix(l.text, "## "):
			in = l.text == "## Project layout"
			continue
		case !in:
			continue
		case !strings.HasPrefix(l.text, "|"):
			if table {
				return out // the table has ended
			}
			continue
		}
		table = true
		cells := strings.Split(l.text, "|")
		if len(cells) < 3 || strings.Trim(cells[1], " -") == "" || strings.TrimSpace(cells[1]) == "folder" {
			continue // the separator and header rows
		}
		spans := codeSpan.FindAllString(cells[1], -1)
		if len(spans) == 0 {
			t.Errorf("README.md:%d: the layout row names no path in `code`: %q", l.n, cells[1])
		}
		for _, s := range spans {
			for _, p := range expandBraces(strings.Trim(s, "`")) {
				out = append(out, layoutEntry{l.n, strings.TrimSuffix(p, "/")})
			}
		}
	}
	if !table {
		t.Fatal(`README.md has no table under "## Project layout"`)
	}
	return out
}

func expandBraces(p string) []string {
	m := braces.FindStringSubmatch(p)
	if m == nil {
		return []string{p}
	}
	var out []string
	for _, alt := range strings.Split(m[2], ",") {
		out = append(out, expandBraces(m[1]+strings.TrimSpace(alt)+m[3])...)
	}
	return out
}

// topFolders are the repository's top-level folders: not hidden, not
// ignored by a "/name/" line of .gitignore (build output, caches).
func topFolders(t *testing.T) []string {
	t.Helper()
	ignore, err := os.ReadFile("../.gitignore")
	if err != nil {
		t.Fatal(err)
	}
	ignored := map[string]bool{}
	for _, line := range strings.Split(string(ignore), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "/") && strings.HasSuffix(line, "/") && strings.Count(line, "/") == 2 {
			ignored[strings.Trim(line, "/")] = true
		}
	}
	entries, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && !ignored[e.Name()] {
			out = append(out, e.Name())
		}
	}
	return out
}

// README.md's "Project layout" table is a summary of the package map a
// newcomer can trust without it repeating the whole map:
//
//   - every top-level folder of the repository has a row;
//   - every room of architecture.Rooms is named by at least one of its
//     packages, spelled out (not only through a wildcard);
//   - every package of the module is in the table: named, or under a row
//     that says where the rest are ("x/..." for x and everything below it,
//     "*test" for the test-support packages);
//   - every path the table names exists, and every wildcard covers a
//     package.
func TestReadmeLayoutCoversThePackageMap(t *testing.T) {
	pkgs := listPackages(t)
	entries := layoutEntries(t)

	for _, dir := range topFolders(t) {
		if !slices.ContainsFunc(entries, func(e layoutEntry) bool {
			first, _, _ := strings.Cut(e.pattern, "/")
			return first == dir
		}) {
			t.Errorf("README.md's layout table has no row for the top-level folder %s/", dir)
		}
	}
	for _, r := range architecture.Rooms {
		if r.Pending != "" {
			continue
		}
		named := slices.ContainsFunc(entries, func(e layoutEntry) bool {
			return !e.wildcard() && r.Covers(e.pattern)
		})
		if !named {
			t.Errorf("README.md's layout table names no package of the room %s (architecture/rooms.go): add one to a row", r.Name())
		}
	}
	for _, p := range sortedKeys(pkgs) {
		if slices.ContainsFunc(entries, func(e layoutEntry) bool { return architecture.Match(e.pattern, p) }) {
			continue
		}
		if dir := filepath.Dir(p); dir != "." {
			t.Errorf("the package %s is in no row of README.md's layout table: name it, or name its folder as %s/...", p, dir)
		} else {
			t.Errorf("the package %s is in no row of README.md's layout table: name it", p)
		}
	}
	for _, e := range entries {
		switch {
		case e.wildcard():
			if !slices.ContainsFunc(sortedKeys(pkgs), func(p string) bool { return architecture.Match(e.pattern, p) }) {
				t.Errorf("README.md:%d: the layout entry %s covers no package", e.line, e.pattern)
			}
		default:
			if fi, err := os.Stat(filepath.Join("..", e.pattern)); err != nil || !fi.IsDir() {
				t.Errorf("README.md:%d: the layout entry %s is no folder of the repository", e.line, e.pattern)
			}
		}
	}
}
