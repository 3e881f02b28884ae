package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/adapters/postgres/auditstore"
	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/audit"
)

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return 1
}

// `pitboss verify` and `pitboss export` as a user runs them: exit codes,
// the report naming the broken position, --json, and the NDJSON export.
func TestVerifyAndExportCommands(t *testing.T) {
	t.Parallel()
	pool, dsn := pgtest.NewDatabase(t)
	if _, err := eventstore.SeedEvents(t.Context(), pool, eventstore.SeedOptions{Events: 300, Clients: 2, PlayersPerClient: 5, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	cfg := config{DatabaseURL: dsn}
	run := func(cmd string, args ...string) (string, string, error) {
		var out, errOut bytes.Buffer
		var err error
		switch cmd {
		case "verify":
			err = verify(t.Context(), cfg, args, &out, &errOut)
		case "export":
			err = export(t.Context(), cfg, args, &out, &errOut)
		}
		return out.String(), errOut.String(), err
	}

	out, progress, err := run("verify", "--batch", "64")
	if exitCode(err) != 0 || !strings.HasPrefix(out, "verify OK: 300 events, head position 300") {
		t.Fatalf("verify of a sound ledger: %v\n%s\n%s", err, out, progress)
	}
	// stderr is not a terminal: progress is structured log lines, the
	// events phase ending at 300 of 300.
	if !progressLogged(t, progress, "verify phase done", "events", 300, 300) {
		t.Fatalf("no progress line for the events phase's end:\n%s", progress)
	}
	// and the last line says what the verification held at its peak.
	if !strings.Contains(progress, `"msg":"verify peak memory","command":"verify","peak_memory_mb":`) {
		t.Fatalf("no peak memory line:\n%s", progress)
	}
	if rep, ok, err := auditstore.NewAudit(pool).LastRun(t.Context()); err != nil || !ok || !rep.OK || rep.Events != 300 {
		t.Fatalf("recorded run %+v ok=%v err=%v", rep, ok, err)
	}

	// an edited amount: exit 1 and the position named, in text and JSON
	var edited int64
	if err := pool.QueryRow(context.Background(), `
UPDATE events SET body = regexp_replace(body::text, '"amount":"([0-9]+)', '"amount":"9\1')::json
 WHERE position = (SELECT min(position) FROM events WHERE position >= 120 AND body::text ~ '"amount":"[0-9]')
RETURNING position`).Scan(&edited); err != nil {
		t.Fatal(err)
	}
	first := fmt.Sprintf("first position %d (event ", edited)
	out, _, err = run("verify", "--quiet", "--skip-read-models", "--record=false")
	if exitCode(err) != exitVerifyFailed || !strings.Contains(out, "FAIL hash_chain") || !strings.Contains(out, first) {
		t.Fatalf("verify of an edited ledger: exit %d (%v)\n%s", exitCode(err), err, out)
	}
	out, _, err = run("verify", "--quiet", "--json", "--skip-read-models", "--record=false")
	var rep audit.Report
	if jerr := json.Unmarshal([]byte(out), &rep); jerr != nil || exitCode(err) != exitVerifyFailed || rep.OK {
		t.Fatalf("--json: %v, exit %d\n%s", jerr, exitCode(err), out)
	}
	if f := rep.Checks[0].Examples[0]; rep.Checks[0].Name != audit.CheckHashChain || f.Position != edited || f.Field != "hash" || len(f.Stored) != 64 {
		t.Fatalf("first finding %+v", f)
	}

	// the export of the same store shows the edit to anyone
	file := filepath.Join(t.TempDir(), "events.ndjson")
	if edited > 130 {
		t.Fatalf("no event with an amount between 120 and 130 (edited %d)", edited)
	}
	_, summary, err := run("export", "--from-position", "100", "--to-position", "130", "--output", file)
	if err != nil || !strings.Contains(summary, "exported 31 events, positions 100..130") {
		t.Fatalf("export: %v: %s", err, summary)
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) != 31 {
		t.Fatalf("%d lines", len(lines))
	}
	var l audit.Line
	if err := json.Unmarshal([]byte(lines[edited-100]), &l); err != nil || l.Position != edited || !strings.Contains(l.Body, `"amount":"9`) {
		t.Fatalf("line 21: %v %+v", err, l)
	}

	// usage errors and an unreachable database: exit 2
	for _, args := range [][]string{{"--nope"}, {"--anchor", "12:xyz"}, {"extra"}} {
		if _, _, err := run("verify", args...); exitCode(err) != exitVerifyError {
			t.Errorf("verify %v: exit %d (%v)", args, exitCode(err), err)
		}
	}
	for _, args := range [][]string{{"--from", "yesterday"}, {"--from-position", "3", "--from", "2025-01-01T00:00:00Z"},
		{"--from-position", "9", "--to-position", "3"}} {
		if _, _, err := run("export", args...); err == nil {
			t.Errorf("export %v: no error", args)
		}
	}
	cfg.DatabaseURL = "postgres://nobody:nothing@127.0.0.1:1/none?sslmode=disable&connect_timeout=2"
	if _, _, err := run("verify"); exitCode(err) != exitVerifyError {
		t.Errorf("verify without a database: exit %d (%v)", exitCode(err), err)
	}
}

// progressLogged reports whether s holds a progress record msg of phase
// with done and total (internal/progress writes them).
func progressLogged(t *testing.T, s, msg, phase string, done, total int64) bool {
	t.Helper()
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var r struct {
			Msg   string `json:"msg"`
			Phase string `json:"phase"`
			Done  int64  `json:"events_done"`
			Total int64  `json:"events_total"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("a progress record that is not JSON: %q (%v)", line, err)
		}
		if r.Msg == msg && r.Phase == phase && r.Done == done && r.Total == total {
			return true
		}
	}
	return false
}
