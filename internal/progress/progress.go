// Package progress is how long commands (`pitboss replay`, `pitboss
// verify`) report their progress two ways at once (docs/read-models.md, "Progress"):
//
//   - for a person: on a terminal, one line redrawn in place at most every
//     progressDrawEvery; off a terminal (a log file, a CI job, a pipe) the
//     log records below are the periodic lines;
//   - for a log pipeline: structured log records (slog, JSON unless
//     PITBOSS_LOG_FORMAT=text) on stderr, the first of each phase, one
//     every progressLogEvery, and the phase's last: `events_done`,
//     `events_total`, `percent`, `rate` (per second), `eta_seconds`,
//     `pass`/`passes` (a replay's slices), `elapsed_seconds`.
//
// The throttle works on the steps' own Elapsed, so the reporter reads no
// clock and costs a comparison per step in between.
package progress

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/pitboss/pitboss/internal/procmem"
)

// progressLogEvery is how often a progress record is logged.
const progressLogEvery = 5 * time.Second

// progressDrawEvery is how often the line on a terminal is redrawn.
const progressDrawEvery = 200 * time.Millisecond

// IsTerminal reports whether w is a character device (a terminal).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Step is one report of a long command's progress.
type Step struct {
	Phase   string
	Done    int64 // events (rows, in verify's other phases) done
	Total   int64 // 0 when unknown
	Resumed int64 // of Done, those an interrupted run had done: not in the rate
	// Pass is the pass (a replay's slice) under way of Passes, 0 if none.
	Pass, Passes int
	Elapsed      time.Duration // since this run began the phase
	End          bool          // the phase is over
}

// rate is this run's events per second so far.
func (p Step) rate() (float64, bool) {
	if p.Elapsed <= 0 {
		return 0, false
	}
	return float64(p.Done-p.Resumed) / p.Elapsed.Seconds(), true
}

// eta is the time the rest of the phase takes at its rate so far; ok is
// false when it cannot be told (no total, nothing done yet, or done).
func (p Step) eta() (time.Duration, bool) {
	rate, ok := p.rate()
	if !ok || rate <= 0 || p.Total <= 0 || p.Done >= p.Total {
		return 0, false
	}
	return time.Duration(float64(p.Total-p.Done) / rate * float64(time.Second)), true
}

// Reporter reports Steps on w: a line redrawn in place when tty,
// and structured log records (which, on a terminal, clear the line first
// and redraw it after).
type Reporter struct {
	command string
	w       io.Writer
	tty     bool
	log     *slog.Logger
	cur     Step // the last step seen
	seen    bool
	logged  bool // cur has been logged
	// Elapsed of the phase's last record and last drawing.
	lastLog, lastDraw time.Duration
	width             int // of the line drawn, 0 when there is none
}

// New returns the reporter of command on w; format is
// PITBOSS_LOG_FORMAT's ("text", else JSON).
func New(w io.Writer, tty bool, format, command string) *Reporter {
	p := &Reporter{command: command, w: w, tty: tty}
	out := w
	if tty {
		out = lineClearing{p}
	}
	var h slog.Handler = slog.NewJSONHandler(out, nil)
	if format == "text" {
		h = slog.NewTextHandler(out, nil)
	}
	p.log = slog.New(h)
	return p
}

// lineClearing writes a log record on a terminal below the progress line:
// it clears the line, writes the record, and draws the line again.
type lineClearing struct{ p *Reporter }

func (c lineClearing) Write(b []byte) (int, error) {
	if c.p.width > 0 {
		fmt.Fprint(c.p.w, "\r"+strings.Repeat(" ", c.p.width)+"\r")
		c.p.width = 0
	}
	n, err := c.p.w.Write(b)
	if c.p.seen {
		c.p.draw()
	}
	return n, err
}

func (p *Reporter) Update(s Step) {
	if p.seen && s.Phase != p.cur.Phase {
		p.Finish()
	}
	first := !p.seen
	if first {
		p.lastLog, p.lastDraw = 0, 0
	}
	p.cur, p.seen, p.logged = s, true, false
	if p.tty && (first || s.End || s.Elapsed-p.lastDraw >= progressDrawEvery) {
		p.lastDraw = s.Elapsed
		p.draw()
	}
	if first || s.End || s.Elapsed-p.lastLog >= progressLogEvery {
		p.write(s, s.End)
	}
	if s.End {
		p.endLine()
		p.seen = false
	}
}

// finish ends the current phase: its last step is logged as done, unless
// it was, and the line on a terminal is left as it is.
func (p *Reporter) Finish() {
	if p.seen && !(p.logged && p.cur.End) {
		p.write(p.cur, true)
	}
	p.endLine()
	p.seen = false
}

func (p *Reporter) endLine() {
	if p.width > 0 {
		fmt.Fprintln(p.w)
		p.width = 0
	}
}

// draw redraws the line of the current step.
func (p *Reporter) draw() {
	s := p.cur
	var b strings.Builder
	fmt.Fprintf(&b, "\r%s %s", p.command, s.Phase)
	if s.Passes > 0 {
		fmt.Fprintf(&b, "  pass %d/%d", s.Pass, s.Passes)
	}
	if s.Total > 0 {
		const width = 24
		frac := min(float64(s.Done)/float64(s.Total), 1)
		filled := int(frac * width)
		fmt.Fprintf(&b, "  [%s%s] %3.0f%%  %d/%d", strings.Repeat("=", filled), strings.Repeat(" ", width-filled),
			frac*100, s.Done, s.Total)
	} else {
		fmt.Fprintf(&b, "  %d", s.Done)
	}
	if rate, ok := s.rate(); ok {
		fmt.Fprintf(&b, "  %.0f/s", rate)
	}
	if eta, ok := s.eta(); ok {
		fmt.Fprintf(&b, "  ETA %s", eta.Round(time.Second))
	}
	line := b.String()
	pad := max(p.width-len(line), 0)
	p.width = len(line)
	fmt.Fprint(p.w, line+strings.Repeat(" ", pad))
}

func (p *Reporter) write(s Step, done bool) {
	p.lastLog, p.logged = s.Elapsed, true
	attrs := []any{"command", p.command, "phase", s.Phase, "events_done", s.Done}
	if s.Total > 0 {
		attrs = append(attrs, "events_total", s.Total, "percent", round1(100*float64(s.Done)/float64(s.Total)))
	}
	if s.Resumed > 0 {
		attrs = append(attrs, "events_resumed", s.Resumed)
	}
	if rate, ok := s.rate(); ok {
		attrs = append(attrs, "rate", int64(rate))
	}
	if eta, ok := s.eta(); ok && !done {
		attrs = append(attrs, "eta_seconds", round1(eta.Seconds()))
	}
	if s.Passes > 0 {
		attrs = append(attrs, "pass", s.Pass, "passes", s.Passes)
	}
	attrs = append(attrs, "elapsed_seconds", round1(s.Elapsed.Seconds()))
	msg := p.command + " progress"
	if done {
		msg = p.command + " phase done"
	}
	p.log.Info(msg, attrs...)
}

// peakMemory logs the command's peak resident memory.
// PeakMemory logs the command's peak resident memory (VmHWM).
func (p *Reporter) PeakMemory() {
	if _, hwm, err := procmem.KB("self"); err == nil && hwm > 0 {
		p.log.Info(p.command+" peak memory", "command", p.command, "peak_memory_mb", hwm>>10)
	}
}

func round1(x float64) float64 { return float64(int64(x*10+0.5)) / 10 }
