package architecture

import (
	"fmt"
	"strings"
)

// A Room is one row of the package map (Rooms): the packages it covers,
// what they hold, and which of our packages they may import directly.
type Room struct {
	// Packages are the room's packages, as patterns of paths relative to
	// the module (Match): "domain" is that package, "chaos/..." it and
	// every package below it, "api/dialect/*" the packages one level
	// below, "*test" every package whose last element ends in "test".
	Packages []string
	// Holds is what the room holds: the doc table's middle column
	// (Markdown, one line, no "|").
	Holds string
	// Imports are the packages of ours the room may import directly, as
	// patterns like Packages'; a room may always import its own packages.
	// Everything is every package of ours the global rules allow (no cmd,
	// no test support in production code). Empty: nothing of ours.
	Imports []string
	// Note follows the imports in the doc's last column: what else is
	// checked, or why the list is what it is.
	Note string
	// Pending, when set, says why the room may match no package (yet, or
	// any more): a refactor in flight adds or retires it. The checks of
	// the packages it does match are the same. Clear it once the packages
	// have landed (or delete the room once they are gone).
	Pending string
}

// Everything, alone in Imports: any package of ours (cmd and test support
// still excluded by the global rules).
const Everything = "..."

// Match reports whether the package path p (relative to the module)
// matches pattern: the path itself; "x/..." for x and every package below
// it; "x/*" for the packages one level below x; "*suffix" for every
// package whose last path element ends in suffix.
func Match(pattern, p string) bool {
	switch {
	case strings.HasSuffix(pattern, "/..."):
		base := strings.TrimSuffix(pattern, "/...")
		return p == base || strings.HasPrefix(p, base+"/")
	case strings.HasSuffix(pattern, "/*"):
		rest, ok := strings.CutPrefix(p, strings.TrimSuffix(pattern, "*"))
		return ok && rest != "" && !strings.Contains(rest, "/")
	case strings.HasPrefix(pattern, "*"):
		last := p[strings.LastIndex(p, "/")+1:]
		return strings.HasSuffix(last, pattern[1:])
	}
	return p == pattern
}

// Covers reports whether p is one of the room's packages.
func (r Room) Covers(p string) bool {
	for _, pat := range r.Packages {
		if Match(pat, p) {
			return true
		}
	}
	return false
}

// MayImport reports whether a package of the room may import imp (a path
// of ours, relative to the module).
func (r Room) MayImport(imp string) bool {
	if r.Covers(imp) {
		return true
	}
	for _, pat := range r.Imports {
		if pat == Everything || Match(pat, imp) {
			return true
		}
	}
	return false
}

// Name is how messages name the room: its first pattern.
func (r Room) Name() string { return r.Packages[0] }

// Markdown is the package map as docs/architecture.md shows it: one table
// row per room, in Rooms' order.
func Markdown(rooms []Room) (string, error) {
	var b strings.Builder
	b.WriteString("| room | holds | may import (of ours) |\n|---|---|---|\n")
	for _, r := range rooms {
		room := code(r.Packages)
		holds := r.Holds
		if r.Pending != "" {
			holds += " *(" + r.Pending + ")*"
		}
		var imports string
		switch {
		case len(r.Imports) == 1 && r.Imports[0] == Everything:
			imports = "everything"
		case len(r.Imports) == 0:
			imports = "nothing of ours"
		default:
			imports = code(r.Imports)
		}
		if r.Note != "" {
			imports += " — " + r.Note
		}
		for _, cell := range []string{room, holds, imports} {
			if strings.ContainsAny(cell, "|\n") {
				return "", fmt.Errorf("room %s: a cell holds a | or a line break: %q", r.Name(), cell)
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", room, holds, imports)
	}
	return b.String(), nil
}

func code(paths []string) string {
	out := make([]string, len(paths))
	for i, p := range paths {
		if p == "*test" {
			out[i] = "`…test` packages"
			continue
		}
		out[i] = "`" + p + "`"
	}
	return strings.Join(out, ", ")
}
