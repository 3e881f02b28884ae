package progress

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestProgressETA(t *testing.T) {
	tests := []struct {
		name string
		step Step
		want time.Duration
		ok   bool
	}{
		{"a quarter in 10 s", Step{Done: 250, Total: 1000, Elapsed: 10 * time.Second}, 30 * time.Second, true},
		{"nothing done yet", Step{Done: 0, Total: 1000, Elapsed: time.Second}, 0, false},
		{"no total", Step{Done: 10, Elapsed: time.Second}, 0, false},
		{"done", Step{Done: 1000, Total: 1000, Elapsed: time.Second}, 0, false},
		{"more than the estimate", Step{Done: 1200, Total: 1000, Elapsed: time.Second}, 0, false},
		{"no time yet", Step{Done: 10, Total: 1000}, 0, false},
		{"resumed at 500: this run's 100 in 10 s", Step{Done: 600, Total: 1000, Resumed: 500, Elapsed: 10 * time.Second}, 40 * time.Second, true},
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

// logLine is one progress log record as written.
type logLine struct {
	Msg      string  `json:"msg"`
	Command  string  `json:"command"`
	Phase    string  `json:"phase"`
	Done     int64   `json:"events_done"`
	Total    int64   `json:"events_total"`
	Rate     int64   `json:"rate"`
	ETA      float64 `json:"eta_seconds"`
	Elapsed  float64 `json:"elapsed_seconds"`
	Percent  float64 `json:"percent"`
	Pass     int     `json:"pass"`
	Passes   int     `json:"passes"`
	Resumed  int64   `json:"events_resumed"`
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
		l.HasETA, l.HasTotal = strings.Contains(line, `"eta_seconds"`), strings.Contains(line, `"events_total"`)
		out = append(out, l)
	}
	return out
}

// TestProgressLog: off a terminal, the first step of a phase, one step
// every five seconds (of the steps' time: the clock is theirs), and each
// phase's last step are logged as structured records, with rate, ETA and
// pass; nothing in between.
func TestProgressLog(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf, false, "json", "replay")
	s := time.Second
	for _, p := range []Step{
		{Phase: "events", Done: 100, Total: 1000, Pass: 1, Passes: 4, Elapsed: 1 * s},   // first of the phase: logged
		{Phase: "events", Done: 300, Total: 1000, Pass: 2, Passes: 4, Elapsed: 3 * s},   // too soon
		{Phase: "events", Done: 600, Total: 1000, Pass: 3, Passes: 4, Elapsed: 6 * s},   // 5 s on: logged, ETA 4 s
		{Phase: "events", Done: 1000, Total: 1000, Pass: 4, Passes: 4, Elapsed: 10 * s}, // too soon, but the phase's last
		{Phase: "accounts", Done: 5, Elapsed: 11 * s},                                   // a new phase: events done, then this
		{Phase: "accounts", Done: 9, Elapsed: 12 * s},                                   // too soon; last of the phase at finish
		{Phase: "replayed", Done: 7, Total: 7, Elapsed: s, End: true},                   // ends its phase at once
		{Phase: "resumed", Done: 600, Total: 1000, Resumed: 500, Elapsed: 10 * s},       // 100 this run in 10 s
	} {
		l.Update(p)
	}
	l.Finish()
	if strings.Contains(buf.String(), "\r") {
		t.Errorf("a line drawn off a terminal:\n%q", buf.String())
	}
	got := logLines(t, buf.String())
	want := []logLine{
		{Msg: "replay progress", Phase: "events", Done: 100, Total: 1000, Rate: 100, ETA: 9, HasETA: true, Pass: 1, Passes: 4},
		{Msg: "replay progress", Phase: "events", Done: 600, Total: 1000, Rate: 100, ETA: 4, HasETA: true, Pass: 3, Passes: 4},
		{Msg: "replay phase done", Phase: "events", Done: 1000, Total: 1000, Rate: 100, Pass: 4, Passes: 4},
		{Msg: "replay progress", Phase: "accounts", Done: 5},
		{Msg: "replay phase done", Phase: "accounts", Done: 9, Rate: 0},
		{Msg: "replay phase done", Phase: "replayed", Done: 7, Total: 7, Rate: 7},
		{Msg: "replay progress", Phase: "resumed", Done: 600, Total: 1000, Resumed: 500, Rate: 10, ETA: 40, HasETA: true},
		{Msg: "replay phase done", Phase: "resumed", Done: 600, Total: 1000, Resumed: 500, Rate: 10},
	}
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d:\n%s", len(got), len(want), buf.String())
	}
	for i, w := range want {
		g := got[i]
		w.Command, w.Elapsed, w.Percent, w.HasTotal = "replay", g.Elapsed, g.Percent, w.Total > 0
		if w.Msg == "replay progress" && w.Phase == "accounts" {
			w.Rate = 0 // 5 in 11 s
		}
		if g != w {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
	if got[1].Percent != 60 || got[1].Elapsed != 6 {
		t.Errorf("percent or elapsed wrong: %+v", got[1])
	}
}

// TestProgressTerminal: on a terminal the step is drawn on one line,
// redrawn in place at most every 200 ms (of the steps' time), and a log
// record clears the line, is written, and the line is drawn again below
// it; the phase's end leaves the line and a newline.
func TestProgressTerminal(t *testing.T) {
	var buf bytes.Buffer
	p := New(&buf, true, "text", "replay")
	ms := time.Millisecond
	step := func(done int64, elapsed time.Duration) Step {
		return Step{Phase: "events", Done: done, Total: 10000, Pass: 2, Passes: 5, Elapsed: elapsed}
	}
	p.Update(step(1000, 1000*ms)) // first: drawn and logged
	p.Update(step(1100, 1100*ms)) // too soon for either
	p.Update(step(1300, 1300*ms)) // drawn
	p.Update(step(7000, 7000*ms)) // drawn and logged
	end := step(10000, 8000*ms)
	end.End = true
	p.Update(end)
	out := buf.String()
	lines := strings.Split(out, "\r")
	var drawn []string
	for _, l := range lines {
		if strings.HasPrefix(l, "replay events") {
			drawn = append(drawn, strings.TrimRight(l, " \n"))
		}
	}
	wantFirst := "replay events  pass 2/5  [==                      ]  10%  1000/10000  1000/s  ETA 9s"
	if len(drawn) == 0 || drawn[0] != wantFirst {
		t.Fatalf("first line drawn %q, want %q; all:\n%q", drawn, wantFirst, out)
	}
	if strings.Contains(out, "1100/10000") {
		t.Errorf("a step 100 ms after the last drawing was drawn:\n%q", out)
	}
	if !strings.Contains(out, "1300/10000") || !strings.Contains(out, "100%  10000/10000") {
		t.Errorf("steps 200 ms apart, or the last one, not drawn:\n%q", out)
	}
	// Records: the first, the one 5 s on, the end; each after the line was
	// cleared, each followed by the line drawn again.
	records := strings.Count(out, "msg=")
	if records != 3 || !strings.Contains(out, "msg=\"replay progress\" command=replay phase=events events_done=1000 events_total=10000") ||
		!strings.Contains(out, "events_done=7000") || !strings.Contains(out, "msg=\"replay phase done\"") {
		t.Errorf("%d records, want the first, the one 5 s on and the end:\n%s", records, out)
	}
	if n := len(regexp.MustCompile(`\r {40,}\rtime=`).FindAllString(out, -1)); n != 3 {
		t.Errorf("%d records written on a cleared line, want 3:\n%q", n, out)
	}
	if n := len(regexp.MustCompile(`\n\rreplay events `).FindAllString(out, -1)); n != 3 {
		t.Errorf("the line drawn again after %d records, want 3:\n%q", n, out)
	}
	if !strings.HasSuffix(out, "\n") || strings.Count(out, "\n") != 4 {
		t.Errorf("want 3 records and the line ended by a newline:\n%q", out)
	}
}

func TestIsTerminal(t *testing.T) {
	if IsTerminal(&bytes.Buffer{}) {
		t.Fatal("a buffer is not a terminal")
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Fatal("a regular file is not a terminal")
	}
}
