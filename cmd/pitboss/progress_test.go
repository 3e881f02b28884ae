package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

func TestProgressETA(t *testing.T) {
	tests := []struct {
		name string
		step progressStep
		want time.Duration
		ok   bool
	}{
		{"a quarter in 10 s", progressStep{Done: 250, Total: 1000, Elapsed: 10 * time.Second}, 30 * time.Second, true},
		{"nothing done yet", progressStep{Done: 0, Total: 1000, Elapsed: time.Second}, 0, false},
		{"no total", progressStep{Done: 10, Elapsed: time.Second}, 0, false},
		{"done", progressStep{Done: 1000, Total: 1000, Elapsed: time.Second}, 0, false},
		{"more than the estimate", progressStep{Done: 1200, Total: 1000, Elapsed: time.Second}, 0, false},
		{"no time yet", progressStep{Done: 10, Total: 1000}, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.step.eta()
			if ok != tc.ok || got != tc.want {
				t.Fatalf("eta %v %v, want %v %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// logLine is one progress log line as written.
type logLine struct {
	Msg      string  `json:"msg"`
	Command  string  `json:"command"`
	Phase    string  `json:"phase"`
	Done     int64   `json:"done"`
	Total    int64   `json:"total"`
	PerS     int64   `json:"per_s"`
	ETA      float64 `json:"eta_s"`
	Elapsed  float64 `json:"elapsed_s"`
	Percent  float64 `json:"percent"`
	HasETA   bool    `json:"-"`
	HasTotal bool    `json:"-"`
}

func logLines(t *testing.T, s string) []logLine {
	t.Helper()
	var out []logLine
	for line := range strings.SplitSeq(strings.TrimSpace(s), "\n") {
		if line == "" {
			continue
		}
		var l logLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("not a JSON log line: %q (%v)", line, err)
		}
		l.HasETA, l.HasTotal = strings.Contains(line, `"eta_s"`), strings.Contains(line, `"total"`)
		out = append(out, l)
	}
	return out
}

// progressLogged reports whether s holds a line msg of phase with done and
// total.
func progressLogged(t *testing.T, s, msg, phase string, done, total int64) bool {
	for _, l := range logLines(t, s) {
		if l.Msg == msg && l.Phase == phase && l.Done == done && l.Total == total {
			return true
		}
	}
	return false
}

// TestProgressLog: off a terminal, the first step of a phase, one step
// every five seconds, and each phase's last step are written, with rate
// and ETA; nothing in between.
func TestProgressLog(t *testing.T) {
	var buf bytes.Buffer
	l := newProgressLog(&buf, "verify")
	s := time.Second
	for _, p := range []progressStep{
		{Phase: "events", Done: 100, Total: 1000, Elapsed: 1 * s},     // first of the phase: written
		{Phase: "events", Done: 300, Total: 1000, Elapsed: 3 * s},     // too soon
		{Phase: "events", Done: 600, Total: 1000, Elapsed: 6 * s},     // 5 s on: written, ETA 4 s
		{Phase: "events", Done: 1000, Total: 1000, Elapsed: 10 * s},   // too soon, but the phase's last
		{Phase: "accounts", Done: 5, Elapsed: 11 * s},                 // a new phase: events done, then this
		{Phase: "accounts", Done: 9, Elapsed: 12 * s},                 // too soon; last of the phase at finish
		{Phase: "replayed", Done: 7, Total: 7, Elapsed: s, End: true}, // ends its phase at once
	} {
		l.update(p)
	}
	l.finish()
	got := logLines(t, buf.String())
	want := []struct {
		msg, phase string
		done       int64
		eta        float64
		hasETA     bool
	}{
		{"verify progress", "events", 100, 9, true},
		{"verify progress", "events", 600, 4, true},
		{"verify phase done", "events", 1000, 0, false},
		{"verify progress", "accounts", 5, 0, false},
		{"verify phase done", "accounts", 9, 0, false},
		{"verify phase done", "replayed", 7, 0, false},
	}
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(got), len(want), buf.String())
	}
	for i, w := range want {
		g := got[i]
		if g.Msg != w.msg || g.Phase != w.phase || g.Done != w.done || g.HasETA != w.hasETA || g.ETA != w.eta || g.Command != "verify" {
			t.Errorf("line %d: %+v, want %+v", i, g, w)
		}
	}
	if got[1].PerS != 100 || got[1].Percent != 60 || !got[1].HasTotal || got[3].HasTotal {
		t.Errorf("rate, percent or total wrong: %+v / %+v", got[1], got[3])
	}
}

func TestIsTerminal(t *testing.T) {
	if isTerminal(&bytes.Buffer{}) {
		t.Fatal("a buffer is not a terminal")
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Fatal("a regular file is not a terminal")
	}
}
