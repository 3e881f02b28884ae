package operatorsim

import (
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Rule says when a fault strikes a wallet call: every Every-th call
// (counted from when the faults were set; deterministic), or else with
// probability Probability (drawn from the faults' Seed; deterministic for
// one sequence of calls). The zero Rule never strikes.
type Rule struct {
	Probability float64 `json:"probability,omitempty"`
	Every       int     `json:"every,omitempty"`
}

// ParseRule reads a rule from the command line: "0.05" is a probability,
// "1/7" every seventh call, "0" or "" never.
func ParseRule(s string) (Rule, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Rule{}, nil
	}
	if n, ok := strings.CutPrefix(s, "1/"); ok {
		every, err := strconv.Atoi(n)
		if err != nil || every < 1 {
			return Rule{}, fmt.Errorf("rule %q: 1/N wants a whole N of at least 1", s)
		}
		return Rule{Every: every}, nil
	}
	p, err := strconv.ParseFloat(s, 64)
	if err != nil || p < 0 || p > 1 {
		return Rule{}, fmt.Errorf("rule %q: a probability from 0 to 1, or 1/N for every N-th call", s)
	}
	return Rule{Probability: p}, nil
}

func (r Rule) validate(name string) error {
	if r.Probability < 0 || r.Probability > 1 || r.Probability != r.Probability {
		return fmt.Errorf("%s: probability %v is not from 0 to 1", name, r.Probability)
	}
	if r.Every < 0 {
		return fmt.Errorf("%s: every %d is negative", name, r.Every)
	}
	return nil
}

func (r Rule) strikes(n uint64, rng *mrand.Rand) bool {
	if r.Every > 0 && n%uint64(r.Every) == 0 {
		return true
	}
	return r.Probability > 0 && rng.Float64() < r.Probability
}

// Faults is what the simulator does wrong on purpose, to every wallet
// call of the protocol (never to the /_sim/ admin routes). At most one
// fault strikes a call, tried in this order: Restart, Timeout, Error5xx,
// LostAnswer.
type Faults struct {
	// Latency is added to every wallet call before it is handled.
	Latency time.Duration
	// Timeout holds the call, unapplied, until the client gives up (or
	// TimeoutHold passes, then answers 504).
	Timeout     Rule
	TimeoutHold time.Duration
	// Error5xx answers ErrorStatus (default 500) without applying.
	Error5xx    Rule
	ErrorStatus int
	// LostAnswer applies the call (and writes the state), then loses the
	// answer: the connection is dropped, or LostAnswerStatus (a 5xx) is
	// answered when it is set.
	LostAnswer       Rule
	LostAnswerStatus int
	// Restart drops the call unapplied and restarts the server: the
	// listener and connections are closed, the state is read back from the
	// state file, and after RestartPause the same address is listened on
	// again.
	Restart      Rule
	RestartPause time.Duration
	// Seed seeds the probability draws.
	Seed uint64
}

const (
	defaultTimeoutHold  = 30 * time.Second
	defaultRestartPause = 200 * time.Millisecond
)

func (f *Faults) setDefaults() {
	if f.TimeoutHold == 0 {
		f.TimeoutHold = defaultTimeoutHold
	}
	if f.ErrorStatus == 0 {
		f.ErrorStatus = 500
	}
	if f.RestartPause == 0 {
		f.RestartPause = defaultRestartPause
	}
}

// Validate reports every setting that cannot be used, joined.
func (f Faults) Validate() error {
	var errs []error
	for _, r := range []struct {
		name string
		rule Rule
	}{{"timeout", f.Timeout}, {"error5xx", f.Error5xx}, {"lostAnswer", f.LostAnswer}, {"restart", f.Restart}} {
		errs = append(errs, r.rule.validate(r.name))
	}
	if f.Latency < 0 || f.TimeoutHold < 0 || f.RestartPause < 0 {
		errs = append(errs, errors.New("latency, timeoutHold and restartPause must not be negative"))
	}
	if f.ErrorStatus != 0 && (f.ErrorStatus < 500 || f.ErrorStatus > 599) {
		errs = append(errs, fmt.Errorf("errorStatus %d is not a 5xx", f.ErrorStatus))
	}
	if f.LostAnswerStatus != 0 && (f.LostAnswerStatus < 500 || f.LostAnswerStatus > 599) {
		errs = append(errs, fmt.Errorf("lostAnswerStatus %d is not a 5xx (0: drop the connection)", f.LostAnswerStatus))
	}
	return errors.Join(errs...)
}

// faultsJSON is Faults on the admin API: durations as Go duration text.
type faultsJSON struct {
	Latency          string `json:"latency"`
	Timeout          Rule   `json:"timeout"`
	TimeoutHold      string `json:"timeoutHold"`
	Error5xx         Rule   `json:"error5xx"`
	ErrorStatus      int    `json:"errorStatus"`
	LostAnswer       Rule   `json:"lostAnswer"`
	LostAnswerStatus int    `json:"lostAnswerStatus"`
	Restart          Rule   `json:"restart"`
	RestartPause     string `json:"restartPause"`
	Seed             uint64 `json:"seed"`
}

// MarshalJSON writes the durations as text ("5ms").
func (f Faults) MarshalJSON() ([]byte, error) {
	return json.Marshal(faultsJSON{Latency: f.Latency.String(), Timeout: f.Timeout, TimeoutHold: f.TimeoutHold.String(),
		Error5xx: f.Error5xx, ErrorStatus: f.ErrorStatus, LostAnswer: f.LostAnswer, LostAnswerStatus: f.LostAnswerStatus,
		Restart: f.Restart, RestartPause: f.RestartPause.String(), Seed: f.Seed})
}

// UnmarshalJSON reads durations as text ("5ms"); a missing one is zero.
func (f *Faults) UnmarshalJSON(b []byte) error {
	var j faultsJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	out := Faults{Timeout: j.Timeout, Error5xx: j.Error5xx, ErrorStatus: j.ErrorStatus, LostAnswer: j.LostAnswer,
		LostAnswerStatus: j.LostAnswerStatus, Restart: j.Restart, Seed: j.Seed}
	for _, d := range []struct {
		name, text string
		to         *time.Duration
	}{{"latency", j.Latency, &out.Latency}, {"timeoutHold", j.TimeoutHold, &out.TimeoutHold},
		{"restartPause", j.RestartPause, &out.RestartPause}} {
		if d.text == "" {
			continue
		}
		v, err := time.ParseDuration(d.text)
		if err != nil {
			return fmt.Errorf("%s: %w", d.name, err)
		}
		*d.to = v
	}
	*f = out
	return nil
}

// fault is the one fault drawn for a call.
type fault int

const (
	noFault fault = iota
	faultRestart
	faultTimeout
	faultError
	faultLost
)

func (f fault) String() string {
	return [...]string{"", "restart", "timeout", "5xx", "lost-answer"}[f]
}

// Counts are how many wallet calls the simulator took and how many of
// each fault it caused (shown in /_sim/state).
type Counts struct {
	Calls       uint64 `json:"calls"`
	Delayed     uint64 `json:"delayed"`
	Timeouts    uint64 `json:"timeouts"`
	Errors5xx   uint64 `json:"errors5xx"`
	LostAnswers uint64 `json:"lostAnswers"`
	// Restarts counts every restart: the fault's and the admin API's.
	Restarts uint64 `json:"restarts"`
}

// faultBox holds the faults in force and draws one per call.
type faultBox struct {
	mu     sync.Mutex
	f      Faults
	n      uint64 // calls since the faults were set
	rng    *mrand.Rand
	counts Counts
}

func (b *faultBox) set(f Faults) {
	f.setDefaults()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.f, b.n = f, 0
	b.rng = mrand.New(mrand.NewPCG(f.Seed, f.Seed^0x9e3779b97f4a7c15))
}

func (b *faultBox) get() Faults {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.f
}

// draw counts a call and picks its fault; it returns the faults in force
// with it.
func (b *faultBox) draw() (fault, Faults) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n++
	b.counts.Calls++
	if b.f.Latency > 0 {
		b.counts.Delayed++
	}
	f := noFault
	switch {
	case b.f.Restart.strikes(b.n, b.rng):
		f = faultRestart
	case b.f.Timeout.strikes(b.n, b.rng):
		f, b.counts.Timeouts = faultTimeout, b.counts.Timeouts+1
	case b.f.Error5xx.strikes(b.n, b.rng):
		f, b.counts.Errors5xx = faultError, b.counts.Errors5xx+1
	case b.f.LostAnswer.strikes(b.n, b.rng):
		f, b.counts.LostAnswers = faultLost, b.counts.LostAnswers+1
	}
	return f, b.f
}

func (b *faultBox) countRestart() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.counts.Restarts++
}

func (b *faultBox) snapshot() Counts {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.counts
}
