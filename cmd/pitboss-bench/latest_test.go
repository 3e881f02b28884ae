package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// README.md's performance table cannot go stale silently. results.json is
// under out/ (git-ignored), so a clean clone has none: the figures the
// README shows are committed as docs/bench-latest.json, a snapshot taken
// from one run's results.json, with its date, the commit it measured and
// the command that produced it. TestLatestBenchInTheDocs fails when
// README.md's table, or the rows docs/benchmarks.md marks `latest`,
// differ from that snapshot; with -latest-from it first rewrites all
// three from a results.json (docs/benchmarks.md, "Refreshing the tables").

var (
	latestFrom = flag.String("latest-from", "",
		"a make bench run's results.json (relative to the repository, or absolute): rewrite docs/bench-latest.json, "+
			"README.md's performance table and docs/benchmarks.md's `latest` rows from it")
	latestCommit = flag.String("latest-commit", "",
		"with -latest-from: the commit that run measured (results.json does not record it)")
)

const (
	repoRoot      = "../.."
	snapshotFile  = "docs/bench-latest.json"
	readmeFile    = "README.md"
	benchDocFile  = "docs/benchmarks.md"
	latestBegin   = "<!-- bench-latest: generated from docs/bench-latest.json (docs/benchmarks.md, \"Refreshing the tables\"); do not edit by hand -->"
	latestEnd     = "<!-- /bench-latest -->"
	latestRunID   = "latest"
	readmeSection = "## Performance"
)

// latestSnapshot is docs/bench-latest.json.
type latestSnapshot struct {
	// Source is the results.json the figures came from, relative to the
	// repository (out/bench/<time>/results.json: not in the clone).
	Source  string         `json:"source"`
	Started time.Time      `json:"started"`
	Commit  string         `json:"commit"`
	Mode    string         `json:"mode"` // quick (BENCH_QUICK=1) or full
	Command string         `json:"command"`
	Machine string         `json:"machine"`
	Figures []latestFigure `json:"figures"`
}

// latestFigure is one row of the table: its name, the measured value and
// the target `make bench` judged it against (empty: none), as shown.
type latestFigure struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Target string `json:"target,omitempty"`
}

// benchCommand is the command line that runs `make bench` with c's
// settings: the BENCH_* variables whose values differ from the defaults.
func benchCommand(c config) string {
	var env []string
	set := func(cond bool, kv string) {
		if cond {
			env = append(env, kv)
		}
	}
	defDur, defEvents, defSamples := 20*time.Second, 10_000_000, 200
	if c.Quick {
		defDur, defEvents, defSamples = 3*time.Second, 200_000, 50
	}
	steps := make([]string, len(c.Steps))
	for i, s := range c.Steps {
		steps[i] = fmt.Sprint(s)
	}
	set(c.Quick, "BENCH_QUICK=1")
	set(c.Duration != defDur, "BENCH_DURATION="+c.Duration.String())
	set(!slices.Equal(c.Steps, []int{1, 16, 64, 256}), "BENCH_STEPS="+strings.Join(steps, ","))
	set(c.Rate != 0, fmt.Sprintf("BENCH_RATE=%g", c.Rate))
	set(c.Players != 3000, fmt.Sprintf("BENCH_PLAYERS=%d", c.Players))
	set(c.Read && c.Events != defEvents, fmt.Sprintf("BENCH_EVENTS=%d", c.Events))
	set(c.Read && c.Samples != defSamples, fmt.Sprintf("BENCH_READ_SAMPLES=%d", c.Samples))
	set(c.Pgbench && c.PgbenchMaxClients != 100, fmt.Sprintf("BENCH_PGBENCH_MAX_CLIENTS=%d", c.PgbenchMaxClients))
	set(!c.Write, "BENCH_SKIP_WRITE=1")
	set(!c.Read, "BENCH_SKIP_READ=1")
	set(c.Write && !c.Pgbench, "BENCH_SKIP_PGBENCH=1")
	set(c.Write && !c.Seamless, "BENCH_SKIP_SEAMLESS=1")
	set(c.Seamless && c.SeamlessRate != 0, fmt.Sprintf("BENCH_SEAMLESS_RATE=%g", c.SeamlessRate))
	set(c.Seamless && c.OperatorLatency != 5*time.Millisecond, "BENCH_OPERATOR_LATENCY="+c.OperatorLatency.String())
	set(c.Write && !c.Profile, "BENCH_PROFILE=false")
	set(c.Protocol != "" && c.Protocol != "pitboss", "BENCH_PROTOCOL="+c.Protocol)
	set(c.Roles != "", "BENCH_ROLES="+c.Roles)
	set(c.LogLevel != "" && c.LogLevel != "warn", "BENCH_LOG_LEVEL="+c.LogLevel)
	set(c.PoolMaxConns != 0, fmt.Sprintf("BENCH_POOL_MAX_CONNS=%d", c.PoolMaxConns))
	set(c.BatchMax != 0, fmt.Sprintf("BENCH_BATCH_MAX=%d", c.BatchMax))
	return strings.TrimSpace(strings.Join(env, " ") + " make bench")
}

// thousands is f rounded, with a comma every three digits.
func thousands(f float64) string {
	s := fmt.Sprintf("%.0f", f)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

// ms is a time in milliseconds as the report shows it (num), with
// thousands separated.
func ms(f float64) string {
	if f >= 1000 {
		return thousands(f)
	}
	return num(f)
}

// snapshotOf takes the README's figures from one run.
func snapshotOf(rep Report, source, commit string) latestSnapshot {
	s := latestSnapshot{Source: source, Started: rep.Started.UTC().Truncate(time.Second), Commit: commit, Mode: "full", Command: benchCommand(rep.Config)}
	if rep.Config.Quick {
		s.Mode = "quick"
	}
	m := rep.Machine
	pg, _, _ := strings.Cut(m.Postgres, " ")
	s.Machine = fmt.Sprintf("%d cores (%s), %.1f GB RAM, PostgreSQL %s, load average %s at the start",
		m.Cores, m.CPUModel, m.MemoryGB, pg, strings.Fields(m.LoadStart + " ?")[0])
	f := figures{rep: rep, targets: map[string]Target{}}
	for _, t := range rep.Targets {
		f.targets[t.Name] = t
	}
	if w := rep.Write; w != nil && len(rep.Config.Steps) > 0 {
		c := closest(rep.Config.Steps, 64)
		f.wallet(w, c)
		errs := int64(0)
		for _, st := range w.Steps {
			errs += sum(st.Errors)
		}
		if sr := w.Seamless; sr != nil {
			f.seamless(sr, c)
			for _, st := range seamlessRows(sr) {
				errs += sum(st.Step.Errors)
			}
		}
		f.add("wallet errors, every step", thousands(float64(errs)), "")
	}
	if r := rep.Read; r != nil {
		f.read(r)
	}
	s.Figures = f.out
	return s
}

func sum(m map[string]int64) (n int64) {
	for _, v := range m {
		n += v
	}
	return n
}

// figures collects a run's figures, each with the target the run judged
// it against.
type figures struct {
	rep     Report
	targets map[string]Target
	out     []latestFigure
}

func (f *figures) add(name, value, target string) {
	f.out = append(f.out, latestFigure{Name: name, Value: value, Target: target})
}

// target is the run's verdict on the target of that name, as a cell; ""
// when the run judged none.
func (f *figures) target(name, prefix string) string {
	t, ok := f.targets[name]
	if !ok {
		return ""
	}
	verdict := "met"
	if !t.Met {
		verdict = "missed"
	}
	return prefix + t.Want + ": " + verdict
}

// wallet: the ledger-mode steps, at the step c (the one nearest 64).
func (f *figures) wallet(w *WriteReport, c int) {
	st := f.rep.step(c)
	if st == nil {
		return
	}
	l := st.Latency["all"]
	v := thousands(st.CallsPerSec)
	if st.Pgbench != nil {
		v += fmt.Sprintf(" (%.2f× pgbench's %s one-row inserts/s)", st.VsPgbench, thousands(st.Pgbench.TPS))
	}
	f.add(fmt.Sprintf("wallet calls/s, closed loop at %d", c), v,
		f.target(fmt.Sprintf("wallet calls/s at %d ÷ pgbench insert tps", c), "pgbench ratio "))
	f.add(fmt.Sprintf("wallet latency p50 / p99 at %d", c), fmt.Sprintf("%s / %s ms", ms(l.P50), ms(l.P99)),
		f.target(fmt.Sprintf("wallet p99 at %d", c), "p99 "))
	if top := slices.Max(f.rep.Config.Steps); top != c {
		if t := f.rep.step(top); t != nil {
			v := fmt.Sprintf("%s (p99 %s ms)", thousands(t.CallsPerSec), ms(t.Latency["all"].P99))
			if t.Pgbench != nil {
				v = fmt.Sprintf("%s (p99 %s ms; %.2f× pgbench's %s at %d clients)", thousands(t.CallsPerSec),
					ms(t.Latency["all"].P99), t.VsPgbench, thousands(t.Pgbench.TPS), t.Pgbench.Clients)
			}
			f.add(fmt.Sprintf("wallet calls/s, closed loop at %d", top), v, "")
		}
	}
	for _, o := range w.Steps {
		if o.Mode == "open" {
			f.add(fmt.Sprintf("open loop, spins due at %s calls/s: calls/s, p99", thousands(o.TargetRate)),
				fmt.Sprintf("%s, %s ms", thousands(o.CallsPerSec), ms(o.Latency["all"].P99)), "")
		}
	}
	f.add(fmt.Sprintf("relay lag p50 / p99 at %d", c), fmt.Sprintf("%s / %s ms", ms(st.Lag.Relay.P50ms), ms(st.Lag.Relay.P99ms)),
		f.target(fmt.Sprintf("relay lag p99 at %d", c), "p99 "))
	if st.Lag.ProjectionBalances.Events > 0 {
		f.add(fmt.Sprintf("projection lag p99 at %d, balances / history", c),
			fmt.Sprintf("%s / %s ms", ms(st.Lag.ProjectionBalances.P99ms), ms(st.Lag.ProjectionHistory.P99ms)),
			f.target(fmt.Sprintf("projection lag p99 at %d (balances)", c), "balances "))
	}
	if st.CallsPerSec > 0 {
		f.add(fmt.Sprintf("service CPU per wallet call at %d", c), fmt.Sprintf("%s µs", thousands(st.CPU.Service/st.CallsPerSec*1e6)), "")
		f.add(fmt.Sprintf("machine CPU per wallet call at %d, load generator excluded", c),
			fmt.Sprintf("%s µs (%.2f of %d cores busy)", thousands((st.CPU.MachineBusy-st.CPU.LoadGenerator)/st.CallsPerSec*1e6),
				st.CPU.MachineBusy, st.CPU.Cores), "")
	}
	if w.PeakRSSMB > 0 {
		f.add("service peak RSS", fmt.Sprintf("%s MB", thousands(w.PeakRSSMB)), f.target("service peak RSS", ""))
	}
}

// seamless: the seamless step at c, and its one rate in both modes.
func (f *figures) seamless(sr *SeamlessReport, c int) {
	for _, st := range sr.Steps {
		if st.Concurrency != c || st.Ledger == nil {
			continue
		}
		f.add(fmt.Sprintf("seamless (the operator's wallet answers in %g ms) at %d: calls/s", sr.OperatorLatency, c),
			thousands(st.Step.CallsPerSec), "")
		f.add(fmt.Sprintf("seamless at %d: latency added p50 / p99", c), fmt.Sprintf("%s / %s ms", ms(st.Added.P50), ms(st.Added.P99)),
			f.target(fmt.Sprintf("seamless at %d: latency added p50 / p99", c), ""))
	}
	if st := sr.RateMatched; st != nil && st.Ledger != nil {
		f.add(fmt.Sprintf("seamless, one open-loop rate (%s/s) in both modes: service CPU per call", thousands(st.Step.TargetRate)),
			fmt.Sprintf("%s µs (%.2f× ledger mode's)", thousands(st.ServiceUsPerCall), st.Ledger.CPU),
			f.target(fmt.Sprintf("seamless at open %.0f/s: service CPU per call", st.Step.TargetRate), ""))
	}
}

// read: the read side's worst page, balance, GGR, replay and verify.
func (f *figures) read(r *ReadReport) {
	events := fmt.Sprintf("%s M events", num(float64(r.Events)/1e6))
	worst, worstName := 0.0, ""
	for _, q := range r.Queries {
		if strings.HasPrefix(q.Name, "transactions") && q.Latency.P99 > worst {
			worst, worstName = q.Latency.P99, q.Name
		}
	}
	if worstName != "" {
		f.add(fmt.Sprintf("transactions page p99, worst of every depth and filter, at %s", events),
			fmt.Sprintf("%s ms (%s)", ms(worst), worstName),
			f.target(fmt.Sprintf("transactions page p99, any depth (worst: %s)", worstName), ""))
	}
	if q := f.rep.query("wallet balance (player)"); q != nil {
		f.add("balance p99", ms(q.Latency.P99)+" ms", f.target("balance p99", ""))
	}
	if q := f.rep.query("GGR report, 30 days"); q != nil {
		f.add("30-day GGR p99", ms(q.Latency.P99)+" ms", f.target("30-day GGR p99", ""))
	}
	if x := r.Replay; x.EventsPerSec > 0 {
		f.add(fmt.Sprintf("replay --full --swap at %s, whole command (its rebuild by its own count); peak RSS", events),
			fmt.Sprintf("%s events/s (%s); %s MB", thousands(x.WallPerSec), thousands(x.EventsPerSec), thousands(x.PeakRSSMB)),
			f.target("replay, whole command", ""))
	}
	if v := r.Verify; v.OK {
		f.add(fmt.Sprintf("verify at %s, whole command; peak RSS", events),
			fmt.Sprintf("%s events/s; %s MB", thousands(v.EventsPerSec), thousands(v.PeakRSSMB)),
			f.target("verify, whole command", ""))
	}
}

// caption is the line above the README's table: which run, measured how.
func (s latestSnapshot) caption() string {
	mode := "**Full mode** (20-s steps)"
	if s.Mode == "quick" {
		mode = "**Quick mode** (`BENCH_QUICK=1`: 3-s steps, not comparable with a full run's 20-s steps)"
	}
	return fmt.Sprintf("%s, %s, code at `%s`: `%s`. %s; every role in one `pitboss serve`, PostgreSQL, Kafka and the load generator "+
		"on the same box. A wallet call is a bet, a win or (one spin in twenty) a rollback, signed, over HTTP.",
		mode, s.Started.Format("2006-01-02 15:04 UTC"), s.Commit, s.Command, s.Machine)
}

func cell(s string) string {
	if s == "" {
		return "—"
	}
	return strings.ReplaceAll(s, "|", `\|`)
}

// readmeBlock is README.md's generated block, markers included.
func (s latestSnapshot) readmeBlock() []string {
	out := []string{latestBegin, "", s.caption(), "", "| figure | measured | target (`make bench` judges) |", "|---|---|---|"}
	for _, f := range s.Figures {
		out = append(out, fmt.Sprintf("| %s | %s | %s |", cell(f.Name), cell(f.Value), cell(f.Target)))
	}
	return append(out, "", latestEnd)
}

// docRows are docs/benchmarks.md's rows of the snapshot's figures: the
// README's, with the run's id.
func (s latestSnapshot) docRows() []string {
	var out []string
	for _, f := range s.Figures {
		out = append(out, fmt.Sprintf("| %s | %s | %s | %s |", cell(f.Name), cell(f.Value), cell(f.Target), latestRunID))
	}
	return out
}

// runRow is docs/benchmarks.md's row of the run in its table of runs.
func (s latestSnapshot) runRow() string {
	return fmt.Sprintf("| %s | %s | `%s` | `%s` | %s mode; `%s` |", latestRunID, s.Started.Format("2006-01-02 15:04 UTC"), s.Commit,
		s.Command, s.Mode, filepath.Dir(s.Source))
}

// tableCells are a Markdown table row's cells, trimmed; nil for a line
// that is no row.
func tableCells(line string) []string {
	t := strings.TrimSpace(line)
	if !strings.HasPrefix(t, "|") || !strings.HasSuffix(t, "|") || len(t) < 2 {
		return nil
	}
	var cells []string
	for _, c := range regexp.MustCompile(`\s*(?:[^\\|]|\\.)*\s*\|`).FindAllString(t[1:], -1) {
		cells = append(cells, strings.TrimSpace(strings.TrimSuffix(c, "|")))
	}
	return cells
}

// checkReadme reports how README.md (its text) differs from the snapshot.
func checkReadme(readme string, s latestSnapshot) []error {
	lines := strings.Split(readme, "\n")
	begin, end := slices.Index(lines, latestBegin), slices.Index(lines, latestEnd)
	if begin < 0 || end < begin {
		return []error{fmt.Errorf("README.md has no generated performance block (%q … %q)", latestBegin, latestEnd)}
	}
	var errs []error
	section := ""
	for _, l := range lines[:begin] {
		if strings.HasPrefix(l, "## ") {
			section = l
		}
	}
	if !strings.HasPrefix(section, readmeSection) {
		errs = append(errs, fmt.Errorf("README.md's performance block is under %q, not under %q", section, readmeSection))
	}
	got, want := lines[begin:end+1], s.readmeBlock()
	for i := range max(len(got), len(want)) {
		g, w := "(nothing)", "(nothing)"
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			errs = append(errs, fmt.Errorf("README.md:%d: %q, but docs/bench-latest.json makes it %q", begin+i+1, g, w))
		}
	}
	return errs
}

// checkBenchDoc reports how docs/benchmarks.md (its text) differs from
// the snapshot: its rows marked `latest` must be the snapshot's figures,
// in order, and its table of runs must name the snapshot's run.
func checkBenchDoc(doc string, s latestSnapshot) []error {
	var errs []error
	var rows []string
	runRows := 0
	for i, l := range strings.Split(doc, "\n") {
		c := tableCells(l)
		switch {
		case len(c) == 0:
		case c[len(c)-1] == latestRunID:
			rows = append(rows, l)
		case c[0] == latestRunID:
			runRows++
			if l != s.runRow() {
				errs = append(errs, fmt.Errorf("docs/benchmarks.md:%d: the run %q is %q, but docs/bench-latest.json makes it %q", i+1, latestRunID, l, s.runRow()))
			}
		}
	}
	if runRows != 1 {
		errs = append(errs, fmt.Errorf("docs/benchmarks.md has %d rows of the run %q in its table of runs, want 1", runRows, latestRunID))
	}
	if want := s.docRows(); !slices.Equal(rows, want) {
		errs = append(errs, fmt.Errorf("docs/benchmarks.md's rows of the run %q are\n\t%s\nbut docs/bench-latest.json makes them\n\t%s",
			latestRunID, strings.Join(rows, "\n\t"), strings.Join(want, "\n\t")))
	}
	return errs
}

// checkSnapshot reports what is wrong with the snapshot on its own.
func checkSnapshot(s latestSnapshot) []error {
	var errs []error
	if !regexp.MustCompile(`^out/bench/[^/]+/results\.json$`).MatchString(s.Source) {
		errs = append(errs, fmt.Errorf("source %q: want out/bench/<run>/results.json", s.Source))
	}
	if !regexp.MustCompile(`^[0-9a-f]{7,40}$`).MatchString(s.Commit) {
		errs = append(errs, fmt.Errorf("commit %q: want a commit hash", s.Commit))
	}
	if s.Started.IsZero() {
		errs = append(errs, errors.New("no start time"))
	}
	if quick := strings.Contains(s.Command, "BENCH_QUICK=1"); quick != (s.Mode == "quick") || (s.Mode != "quick" && s.Mode != "full") {
		errs = append(errs, fmt.Errorf("mode %q and command %q disagree", s.Mode, s.Command))
	}
	if len(s.Figures) == 0 {
		errs = append(errs, errors.New("no figures"))
	}
	for _, f := range s.Figures {
		if f.Name == "" || f.Value == "" || strings.Contains(f.Name+f.Value+f.Target, "\n") {
			errs = append(errs, fmt.Errorf("figure %+v: want a name and a value on one line", f))
		}
	}
	return errs
}

func readSnapshot(t *testing.T) latestSnapshot {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, snapshotFile))
	if err != nil {
		t.Fatal(err)
	}
	var s latestSnapshot
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("%s: %v", snapshotFile, err)
	}
	return s
}

func readResults(path string) (Report, error) {
	var rep Report
	b, err := os.ReadFile(path)
	if err != nil {
		return rep, err
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		return rep, fmt.Errorf("%s: %w", path, err)
	}
	return rep, nil
}

// refreshLatest rewrites the snapshot, README.md's block and
// docs/benchmarks.md's `latest` rows from the results.json at from.
func refreshLatest(t *testing.T, from, commit string) {
	t.Helper()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(from) {
		from = filepath.Join(root, from)
	}
	source, err := filepath.Rel(root, from)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := readResults(from)
	if err != nil {
		t.Fatal(err)
	}
	if commit == "" {
		t.Fatal("-latest-from needs -latest-commit: the commit the run measured (results.json does not record it)")
	}
	out, err := exec.Command("git", "-C", root, "rev-parse", "--verify", "--short", commit+"^{commit}").Output()
	if err != nil {
		t.Fatalf("-latest-commit %s: no commit of this repository (%v)", commit, err)
	}
	s := snapshotOf(rep, filepath.ToSlash(source), strings.TrimSpace(string(out)))
	if errs := checkSnapshot(s); len(errs) > 0 {
		t.Fatal(errors.Join(errs...))
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(snapshotFile, string(b)+"\n")

	readme, err := os.ReadFile(filepath.Join(root, readmeFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(readme), "\n")
	begin, end := slices.Index(lines, latestBegin), slices.Index(lines, latestEnd)
	if begin < 0 || end < begin {
		t.Fatalf("README.md: no block %q … %q to rewrite", latestBegin, latestEnd)
	}
	write(readmeFile, strings.Join(slices.Concat(lines[:begin], s.readmeBlock(), lines[end+1:]), "\n"))

	doc, err := os.ReadFile(filepath.Join(root, benchDocFile))
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	at := -1
	for _, l := range strings.Split(string(doc), "\n") {
		c := tableCells(l)
		switch {
		case len(c) > 0 && c[len(c)-1] == latestRunID:
			if at < 0 {
				at = len(kept)
			}
		case len(c) > 0 && c[0] == latestRunID:
			kept = append(kept, s.runRow())
		default:
			kept = append(kept, l)
		}
	}
	if at < 0 {
		t.Fatalf("docs/benchmarks.md: no row marked %q to rewrite", latestRunID)
	}
	write(benchDocFile, strings.Join(slices.Concat(kept[:at], s.docRows(), kept[at:]), "\n"))
}

// TestLatestBenchInTheDocs: README.md's performance table and the rows
// docs/benchmarks.md marks `latest` are docs/bench-latest.json's figures;
// and where the run's results.json is at hand (the machine that ran it),
// the snapshot is what that file says.
func TestLatestBenchInTheDocs(t *testing.T) {
	if *latestFrom != "" {
		refreshLatest(t, *latestFrom, *latestCommit)
	}
	s := readSnapshot(t)
	errs := checkSnapshot(s)
	readme, err := os.ReadFile(filepath.Join(repoRoot, readmeFile))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(repoRoot, benchDocFile))
	if err != nil {
		t.Fatal(err)
	}
	errs = append(errs, checkReadme(string(readme), s)...)
	errs = append(errs, checkBenchDoc(string(doc), s)...)
	if rep, err := readResults(filepath.Join(repoRoot, s.Source)); err == nil {
		again := snapshotOf(rep, s.Source, s.Commit)
		if !slices.Equal(again.Figures, s.Figures) || again.Command != s.Command || !again.Started.Equal(s.Started) {
			errs = append(errs, fmt.Errorf("%s is not what %s says: refresh it", snapshotFile, s.Source))
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	for _, err := range errs {
		t.Error(err)
	}
	if len(errs) > 0 {
		t.Logf("to refresh from a run: go test ./cmd/pitboss-bench -run TestLatestBenchInTheDocs -latest-from out/bench/<run>/results.json -latest-commit <commit>")
	}
}

// The checks catch a stale table: a changed figure, a row too many or
// too few, another run's caption, a block moved out of its section.
func TestLatestBenchChecksCatchStaleTables(t *testing.T) {
	t.Parallel()
	s := latestSnapshot{Source: "out/bench/x/results.json", Started: time.Date(2026, 11, 29, 1, 9, 0, 0, time.UTC), Commit: "b07bb8a",
		Mode: "quick", Command: "BENCH_QUICK=1 make bench", Machine: "2 cores",
		Figures: []latestFigure{{"wallet calls/s, closed loop at 64", "4,034", ""}, {"service peak RSS", "185 MB", "≤ 256 MB: met"}}}
	readme := strings.Join(slices.Concat([]string{"# P", "", "## Performance (latest `make bench`)", ""}, s.readmeBlock(), []string{"", "## Next"}), "\n")
	doc := strings.Join(slices.Concat([]string{"| figure | measured | target | run |", "|---|---|---|---|"}, s.docRows(),
		[]string{"| old figure | 1 | — | F |", "", "| run | when | commit | command | what |", "|---|---|---|---|---|", s.runRow()}), "\n")
	if errs := slices.Concat(checkSnapshot(s), checkReadme(readme, s), checkBenchDoc(doc, s)); len(errs) > 0 {
		t.Fatalf("the checks refuse docs made from the snapshot: %v", errs)
	}
	for _, tc := range []struct {
		name        string
		readme, doc string
	}{
		{"a README figure changed", strings.Replace(readme, "| 4,034 |", "| 4,035 |", 1), doc},
		{"a README row dropped", strings.Replace(readme, "| service peak RSS | 185 MB | ≤ 256 MB: met |\n", "", 1), doc},
		{"a README row added", strings.Replace(readme, "\n\n"+latestEnd, "\n| extra | 1 | — |\n\n"+latestEnd, 1), doc},
		{"another run's caption", strings.Replace(readme, "`b07bb8a`", "`bf152c8`", 1), doc},
		{"the block in another section", strings.Replace(readme, "## Performance", "## Speed", 1), doc},
		{"the block gone", strings.Replace(readme, latestEnd, "", 1), doc},
		{"a doc figure changed", readme, strings.Replace(doc, "| 185 MB |", "| 186 MB |", 1)},
		{"a doc row not marked latest", readme, strings.Replace(doc, "| ≤ 256 MB: met | latest |", "| ≤ 256 MB: met | F |", 1)},
		{"another run in the doc's runs", readme, strings.Replace(doc, "| latest | 2026-11-29 01:09 UTC | `b07bb8a`", "| latest | 2026-11-29 01:09 UTC | `bf152c8`", 1)},
		{"the doc's run row gone", readme, strings.Replace(doc, s.runRow(), "", 1)},
	} {
		if readme == tc.readme && doc == tc.doc {
			t.Fatalf("%s: the mutation changed nothing", tc.name)
		}
		if errs := slices.Concat(checkReadme(tc.readme, s), checkBenchDoc(tc.doc, s)); len(errs) == 0 {
			t.Errorf("%s: no check failed", tc.name)
		}
	}
	bad := s
	bad.Mode = "full"
	if len(checkSnapshot(bad)) == 0 {
		t.Error("a full-mode snapshot of a BENCH_QUICK=1 command passed")
	}
}

func TestBenchCommand(t *testing.T) {
	t.Parallel()
	full := config{Duration: 20 * time.Second, Steps: []int{1, 16, 64, 256}, Players: 3000, Events: 10_000_000, Samples: 200,
		PgbenchMaxClients: 100, Write: true, Read: true, Pgbench: true, Seamless: true, OperatorLatency: 5 * time.Millisecond,
		Profile: true, Protocol: "pitboss", LogLevel: "warn"}
	quick := full
	quick.Quick, quick.Duration, quick.Events, quick.Samples = true, 3*time.Second, 200_000, 50
	for _, tc := range []struct {
		name string
		edit func(*config)
		from config
		want string
	}{
		{"the defaults", func(*config) {}, full, "make bench"},
		{"quick", func(*config) {}, quick, "BENCH_QUICK=1 make bench"},
		{"the seamless step's A/B settings", func(c *config) { c.Read, c.Pgbench, c.SeamlessRate = false, false, 300 }, quick,
			"BENCH_QUICK=1 BENCH_SKIP_READ=1 BENCH_SKIP_PGBENCH=1 BENCH_SEAMLESS_RATE=300 make bench"},
		{"the read side alone, 2M events", func(c *config) { c.Write, c.Events = false, 2_000_000 }, full,
			"BENCH_EVENTS=2000000 BENCH_SKIP_WRITE=1 make bench"},
		{"api,relay at 64 for 15 s", func(c *config) {
			c.Roles, c.Steps, c.Duration, c.Read, c.Seamless = "api,relay", []int{64}, 15*time.Second, false, false
		}, quick, "BENCH_QUICK=1 BENCH_DURATION=15s BENCH_STEPS=64 BENCH_SKIP_READ=1 BENCH_SKIP_SEAMLESS=1 BENCH_ROLES=api,relay make bench"},
		{"another protocol", func(c *config) { c.Protocol = "tbb" }, full, "BENCH_PROTOCOL=tbb make bench"},
	} {
		c := tc.from
		c.Steps = slices.Clone(c.Steps)
		tc.edit(&c)
		if got := benchCommand(c); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestSnapshotOfARun: the figures come from the 64 step (or the step
// nearest it), pgbench's ratio and the read side only when the run
// measured them, and the targets as the run judged them.
func TestSnapshotOfARun(t *testing.T) {
	t.Parallel()
	step := func(c int, calls float64) WalletStep {
		return WalletStep{Mode: "closed", Concurrency: c, CallsPerSec: calls,
			Latency: map[string]Latency{"all": {P50: 14.055, P99: 41.279}},
			Lag: StepLag{Relay: LagStats{P50ms: 17.3, P99ms: 67.4}, ProjectionBalances: LagStats{Events: 1, P99ms: 676.351},
				ProjectionHistory: LagStats{Events: 1, P99ms: 1247.2}},
			CPU: CPUUse{Service: 0.55, MachineBusy: 1.88, LoadGenerator: 0.24, Cores: 2}}
	}
	rep := Report{Started: time.Date(2026, 11, 29, 1, 9, 42, 0, time.UTC),
		Machine: Machine{Cores: 2, CPUModel: "AMD EPYC", MemoryGB: 23.5, Postgres: "15.18 (Debian)", LoadStart: "1.10 2.77 4.16"},
		Config:  config{Quick: true, Duration: 3 * time.Second, Steps: []int{1, 64, 256}, Players: 3000, PgbenchMaxClients: 100, Write: true, Profile: true, LogLevel: "warn"},
		Write:   &WriteReport{Steps: []WalletStep{step(1, 633), step(64, 4034.4), step(256, 5878)}, PeakRSSMB: 185.3},
		Targets: []Target{{Name: "wallet p99 at 64", Want: "≤ 25.0 ms", Met: false}, {Name: "service peak RSS", Want: "≤ 256 MB", Met: true}}}
	rep.Write.Steps[1].Errors = map[string]int64{"500": 2}
	s := snapshotOf(rep, "out/bench/r/results.json", "b07bb8a")
	if errs := checkSnapshot(s); len(errs) > 0 {
		t.Fatal(errs)
	}
	want := map[string]latestFigure{
		"wallet calls/s, closed loop at 64":                          {Value: "4,034"},
		"wallet latency p50 / p99 at 64":                             {Value: "14.1 / 41.3 ms", Target: "p99 ≤ 25.0 ms: missed"},
		"wallet calls/s, closed loop at 256":                         {Value: "5,878 (p99 41.3 ms)"},
		"projection lag p99 at 64, balances / history":               {Value: "676 / 1,247 ms"},
		"service CPU per wallet call at 64":                          {Value: "136 µs"},
		"machine CPU per wallet call at 64, load generator excluded": {Value: "407 µs (1.88 of 2 cores busy)"},
		"service peak RSS":                                           {Value: "185 MB", Target: "≤ 256 MB: met"},
		"wallet errors, every step":                                  {Value: "2"},
	}
	got := map[string]latestFigure{}
	for _, f := range s.Figures {
		got[f.Name] = f
	}
	for name, w := range want {
		if g := got[name]; g.Value != w.Value || g.Target != w.Target {
			t.Errorf("%s: %q (target %q), want %q (target %q)", name, g.Value, g.Target, w.Value, w.Target)
		}
	}
	for name := range got {
		if strings.Contains(name, "pgbench") || strings.Contains(name, "replay") || strings.Contains(name, "seamless") {
			t.Errorf("figure %q from a run that did not measure it", name)
		}
	}
	if s.Mode != "quick" || s.Command != "BENCH_QUICK=1 BENCH_STEPS=1,64,256 BENCH_SKIP_READ=1 BENCH_SKIP_PGBENCH=1 BENCH_SKIP_SEAMLESS=1 make bench" {
		t.Errorf("mode %q, command %q", s.Mode, s.Command)
	}

	rep.Config.Pgbench = true
	rep.Write.Steps[1].Pgbench, rep.Write.Steps[1].VsPgbench = &PgbenchResult{TPS: 8523, Clients: 64}, 0.4734
	rep.Targets = append(rep.Targets, Target{Name: "wallet calls/s at 64 ÷ pgbench insert tps", Want: "≥ 1.00 ×", Met: false})
	s = snapshotOf(rep, "out/bench/r/results.json", "b07bb8a")
	if f := s.Figures[0]; f.Value != "4,034 (0.47× pgbench's 8,523 one-row inserts/s)" || f.Target != "pgbench ratio ≥ 1.00 ×: missed" {
		t.Errorf("with pgbench: %+v", f)
	}

	ledger := &LedgerSide{Latency: Latency{P50: 14.1, P99: 41.3}, CPU: 1.04}
	rep.Write.Seamless = &SeamlessReport{OperatorLatency: 5,
		Steps: []SeamlessStep{{Concurrency: 64, Step: WalletStep{CallsPerSec: 1811}, Added: Latency{P50: 25.68, P99: 76.351}, Ledger: ledger},
			{Concurrency: 256, Step: WalletStep{CallsPerSec: 2726}, Ledger: ledger}},
		RateMatched: &SeamlessStep{Step: WalletStep{Mode: "open", TargetRate: 300, Errors: map[string]int64{"502": 1}}, ServiceUsPerCall: 1261, Ledger: ledger}}
	rep.Read = &ReadReport{Events: 2_000_000, Replay: ReplayTiming{EventsPerSec: 62229, WallPerSec: 34577, PeakRSSMB: 468},
		Verify:  VerifyTiming{OK: true, EventsPerSec: 23608, PeakRSSMB: 471},
		Queries: []QueryResult{{Name: "transactions, type=bet page 2000", Latency: Latency{P99: 5.62}}, {Name: "transactions, first page", Latency: Latency{P99: 3}}}}
	rep.Targets = append(rep.Targets, Target{Name: "seamless at open 300/s: service CPU per call", Want: "≤ 1.3 × ledger-mode's 1215 µs", Met: true})
	got = map[string]latestFigure{}
	for _, f := range snapshotOf(rep, "out/bench/r/results.json", "b07bb8a").Figures {
		got[f.Name] = f
	}
	for name, w := range map[string]latestFigure{
		"seamless (the operator's wallet answers in 5 ms) at 64: calls/s": {Value: "1,811"},
		"seamless at 64: latency added p50 / p99":                         {Value: "25.7 / 76.4 ms"},
		"seamless, one open-loop rate (300/s) in both modes: service CPU per call": {Value: "1,261 µs (1.04× ledger mode's)",
			Target: "≤ 1.3 × ledger-mode's 1215 µs: met"},
		"wallet errors, every step": {Value: "3"},
		"transactions page p99, worst of every depth and filter, at 2.00 M events":                      {Value: "5.62 ms (transactions, type=bet page 2000)"},
		"replay --full --swap at 2.00 M events, whole command (its rebuild by its own count); peak RSS": {Value: "34,577 events/s (62,229); 468 MB"},
		"verify at 2.00 M events, whole command; peak RSS":                                              {Value: "23,608 events/s; 471 MB"},
	} {
		if g := got[name]; g.Value != w.Value || g.Target != w.Target {
			t.Errorf("%s: %q (target %q), want %q (target %q)", name, g.Value, g.Target, w.Value, w.Target)
		}
	}
}
