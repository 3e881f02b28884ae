package main

import (
	"io"
	"log/slog"
	"os"
	"time"
)

// Long commands (`pitboss replay`, `pitboss verify`) show their progress in
// one of two ways: on a terminal, a line redrawn in place (progressBar,
// progressPrinter); anywhere else — a log file, a CI job, a pipe — a
// structured log line (JSON, on stderr) every progressLogEvery and at the
// end of every phase, which a log pipeline can read and a person can
// still follow (`events`, `total`, `events_per_s`, `eta_s`).

// progressLogEvery is how often a progress log line is written.
const progressLogEvery = 5 * time.Second

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progressStep is one report of a long command's progress.
type progressStep struct {
	Phase   string
	Done    int64
	Total   int64 // 0 when unknown
	Elapsed time.Duration
	End     bool // the phase is over
}

// eta is the time the rest of the phase takes at its rate so far; ok is
// false when it cannot be told (no total, nothing done yet, or done).
func (p progressStep) eta() (time.Duration, bool) {
	if p.Total <= 0 || p.Done <= 0 || p.Done >= p.Total || p.Elapsed <= 0 {
		return 0, false
	}
	rate := float64(p.Done) / p.Elapsed.Seconds()
	return time.Duration(float64(p.Total-p.Done) / rate * float64(time.Second)), true
}

// progressLog writes progressSteps as structured log lines: the first of
// each phase, one every progressLogEvery, and the phase's last ("phase
// done") when the next phase starts, when a step says End, or at finish.
type progressLog struct {
	log     *slog.Logger
	command string
	cur     progressStep // the last step seen
	seen    bool
	logged  bool          // cur has been written
	last    time.Duration // Elapsed of the phase's last line
}

func newProgressLog(w io.Writer, command string) *progressLog {
	return &progressLog{log: slog.New(slog.NewJSONHandler(w, nil)), command: command}
}

func (l *progressLog) update(p progressStep) {
	if l.seen && p.Phase != l.cur.Phase {
		l.finish()
	}
	newPhase := !l.seen
	l.cur, l.seen, l.logged = p, true, false
	if newPhase || p.End || p.Elapsed-l.last >= progressLogEvery {
		l.write(p, p.End)
	}
	if p.End {
		l.seen = false
	}
}

// finish writes the current phase's last step as done, unless it was.
func (l *progressLog) finish() {
	if l.seen && !(l.logged && l.cur.End) {
		l.write(l.cur, true)
	}
	l.seen = false
}

func (l *progressLog) write(p progressStep, done bool) {
	l.last, l.logged = p.Elapsed, true
	attrs := []any{"command", l.command, "phase", p.Phase, "done", p.Done, "elapsed_s", round1(p.Elapsed.Seconds())}
	if p.Total > 0 {
		attrs = append(attrs, "total", p.Total, "percent", round1(100*float64(p.Done)/float64(p.Total)))
	}
	if s := p.Elapsed.Seconds(); s > 0 {
		attrs = append(attrs, "per_s", int64(float64(p.Done)/s))
	}
	if eta, ok := p.eta(); ok && !done {
		attrs = append(attrs, "eta_s", round1(eta.Seconds()))
	}
	msg := l.command + " progress"
	if done {
		msg = l.command + " phase done"
	}
	l.log.Info(msg, attrs...)
}

func round1(x float64) float64 { return float64(int64(x*10+0.5)) / 10 }
