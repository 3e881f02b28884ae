// Package audit is the auditor's toolkit as pure functions: it recomputes
// the hash chain over stored event rows, checks every event's postings and
// the per-currency totals (double entry), and compares stored account state
// with the fold of its events. It does no I/O: the Postgres adapter streams
// rows in and collects the Report; `pitboss verify` prints it.
//
// Like domain, it imports only the standard library and domain, so the API
// and the adapters may both use its types.
package audit

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Names of the checks, stable in the JSON report.
const (
	CheckHashChain   = "hash_chain"   // positions 1..N without holes, prev_hash links, hash = SHA-256(prev_hash || body)
	CheckEventBodies = "event_bodies" // body decodes, is canonical and agrees with the row's columns
	CheckDoubleEntry = "double_entry" // every event's postings are valid and sum to zero; totals per currency are zero
	CheckAnchors     = "anchors"      // hashes recorded earlier (--anchor) are still at their positions
	CheckAccounts    = "accounts"     // every account row equals the fold of its events
	CheckTxRecords   = "tx_records"   // every idempotency record names an event that exists, at its position
	CheckReadModels  = "read_models"  // the read models equal a rebuild from the events
)

// Finding is one broken row. Position and EventID name the event; Account
// or Key name the account row or idempotency record when the check is about
// those; Stored and Recomputed show what differs.
type Finding struct {
	Position   int64  `json:"position,omitempty"`
	EventID    string `json:"event_id,omitempty"`
	Account    string `json:"account,omitempty"`
	Key        string `json:"key,omitempty"`
	Field      string `json:"field,omitempty"`
	Stored     string `json:"stored,omitempty"`
	Recomputed string `json:"recomputed,omitempty"`
	Message    string `json:"message"`
}

// String is the one-line form used in the text report.
func (f Finding) String() string {
	var b strings.Builder
	switch {
	case f.Account != "" && f.Position > 0:
		fmt.Fprintf(&b, "account %s (last event at position %d): ", f.Account, f.Position)
		b.WriteString(f.Message)
		return b.String()
	case f.Position > 0 && f.EventID != "":
		fmt.Fprintf(&b, "position %d (event %s): ", f.Position, f.EventID)
	case f.Position > 0:
		fmt.Fprintf(&b, "position %d: ", f.Position)
	}
	if f.Account != "" {
		fmt.Fprintf(&b, "account %s: ", f.Account)
	}
	if f.Key != "" {
		fmt.Fprintf(&b, "record %s: ", f.Key)
	}
	b.WriteString(f.Message)
	return b.String()
}

// CheckResult is the outcome of one check.
type CheckResult struct {
	Name     string `json:"name"`
	OK       bool   `json:"ok"`
	Rows     int64  `json:"rows"`     // rows examined (events, accounts, records, read-model rows)
	Failures int64  `json:"failures"` // rows found broken
	// Examples are the first broken rows in the order met (position order
	// for events, account id order for accounts); Examples[0] is the first.
	Examples []Finding `json:"examples,omitempty"`
	// Skipped says why the check did not run (OK is then false, but the
	// report's verdict does not count it).
	Skipped string `json:"skipped,omitempty"`
	// Note adds context (totals, what was compared).
	Note string `json:"note,omitempty"`
}

// First returns the first broken row, if any.
func (c CheckResult) First() (Finding, bool) {
	if len(c.Examples) == 0 {
		return Finding{}, false
	}
	return c.Examples[0], true
}

// CurrencyTotal is the sum of every posting in one currency: zero when the
// books balance. Amounts are decimal text in the currency's precision.
type CurrencyTotal struct {
	Currency string `json:"currency"`
	Postings int64  `json:"postings"`
	Sum      string `json:"sum"`
	Debits   string `json:"debits"` // the volume moved: the sum of the negative postings, as a positive amount
}

// Report is the outcome of a verification.
type Report struct {
	OK           bool            `json:"ok"`
	StartedAt    time.Time       `json:"started_at"`
	FinishedAt   time.Time       `json:"finished_at"`
	Events       int64           `json:"events"`
	HeadPosition int64           `json:"head_position"`
	HeadHash     string          `json:"head_hash"` // hex; record it to anchor a later verify (--anchor)
	Currencies   []CurrencyTotal `json:"currencies"`
	Checks       []CheckResult   `json:"checks"`
	// Clients is each client's part of the chain that was verified, in
	// client id order. Nil in a run recorded before it existed.
	Clients []ClientSpan `json:"clients"`
}

// ClientSpan is one client's part of a verified chain: how many of its
// events there were up to the verified head, and its last one there (its
// position and the chain's hash at it, an anchor for that client).
type ClientSpan struct {
	Client       string `json:"client"`
	Events       int64  `json:"events"`
	HeadPosition int64  `json:"head_position"`
	HeadHash     string `json:"head_hash"`
}

// Client returns the span of clientID. found is false when the run has no
// per-client spans (recorded before they existed); a client without events
// up to the verified head has a zero span and found true.
func (r Report) Client(clientID string) (span ClientSpan, found bool) {
	if r.Clients == nil {
		return ClientSpan{Client: clientID}, false
	}
	for _, s := range r.Clients {
		if s.Client == clientID {
			return s, true
		}
	}
	return ClientSpan{Client: clientID}, true
}

// Check returns the result of the named check.
func (r Report) Check(name string) (CheckResult, bool) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return CheckResult{}, false
}

// Finish sets OK (every check that ran held) and the finishing time. A
// check skipped on request does not fail the verdict; the report shows it
// as skipped.
func (r *Report) Finish(at time.Time) {
	r.FinishedAt = at
	r.OK = len(r.Checks) > 0
	for _, c := range r.Checks {
		if !c.OK && c.Skipped == "" {
			r.OK = false
		}
	}
}

// Skipped returns the names of the checks that did not run.
func (r Report) Skipped() []string {
	var s []string
	for _, c := range r.Checks {
		if c.Skipped != "" {
			s = append(s, c.Name)
		}
	}
	return s
}

// WriteText writes the human-readable report.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	verdict := "OK"
	if !r.OK {
		verdict = "FAILED"
	}
	if sk := r.Skipped(); len(sk) > 0 {
		verdict += " (skipped: " + strings.Join(sk, ", ") + ")"
	}
	fmt.Fprintf(&b, "verify %s: %d events, head position %d, head hash %s (%s)\n", verdict, r.Events,
		r.HeadPosition, orDash(r.HeadHash), r.FinishedAt.Sub(r.StartedAt).Round(time.Millisecond))
	for _, c := range r.Checks {
		state := "ok  "
		switch {
		case c.Skipped != "":
			state = "SKIP"
		case !c.OK:
			state = "FAIL"
		}
		fmt.Fprintf(&b, "  %s %-13s %d rows, %d broken", state, c.Name, c.Rows, c.Failures)
		if c.Skipped != "" {
			fmt.Fprintf(&b, " (skipped: %s)", c.Skipped)
		}
		if c.Note != "" {
			fmt.Fprintf(&b, "; %s", c.Note)
		}
		b.WriteByte('\n')
		for i, f := range c.Examples {
			label := "      "
			if i == 0 {
				label = "first "
			}
			fmt.Fprintf(&b, "       %s%s\n", label, f)
		}
	}
	if len(r.Currencies) > 0 {
		b.WriteString("  postings per currency:\n")
		for _, t := range r.Currencies {
			fmt.Fprintf(&b, "       %-6s %d postings, sum %s, volume %s\n", t.Currency, t.Postings, t.Sum, t.Debits)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// tally accumulates one check's findings, keeping the first few.
type tally struct {
	name     string
	rows     int64
	failures int64
	examples []Finding
	max      int
}

func newTally(name string, examples int) *tally {
	if examples <= 0 {
		examples = DefaultExamples
	}
	return &tally{name: name, max: examples}
}

// DefaultExamples is how many broken rows a check lists by default.
const DefaultExamples = 10

func (t *tally) fail(f Finding) {
	t.failures++
	if len(t.examples) < t.max {
		t.examples = append(t.examples, f)
	}
}

func (t *tally) result() CheckResult {
	return CheckResult{Name: t.name, OK: t.failures == 0, Rows: t.rows, Failures: t.failures, Examples: t.examples}
}

// Progress tells how far a verification or an export got.
type Progress struct {
	Phase   string // "events", "accounts", "tx_records", "read_models", "export"
	Done    int64  // rows done in this phase
	Total   int64  // rows expected in this phase (an estimate: the head position for events); 0 when unknown
	Elapsed time.Duration
	// Pass is the slice under way of Passes of the read models' rebuild;
	// 0 in the other phases.
	Pass, Passes int
}
