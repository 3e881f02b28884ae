package audit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pitboss/pitboss/domain"
)

// Checks of `pitboss verify --since` beside the chain's (docs/audit.md,
// "Incremental verification").
const (
	// CheckSinceCheckpoint: the checkpoint is the platform log's, signed
	// by a checkpoint key of the ledger; so is every later one compared.
	CheckSinceCheckpoint = "log_checkpoint"
	// CheckSinceConsistency: the stored tiles prove the checkpoint's root,
	// its last leaf is the event the log says, and the tree grown from it
	// by the events after it has the stored head's root (and every later
	// signed checkpoint's).
	CheckSinceConsistency = "log_consistency"
)

// NewChainAt starts a chain after a checkpoint: next is the first position
// expected, prev the stored hash of the row before it (a chain from the
// start is NewChain). examples bounds the findings kept per check.
func NewChainAt(examples int, next int64, prev []byte) *Chain {
	c := NewChain(examples)
	c.next, c.prev, c.head = next, prev, next-1
	return c
}

// ExamineEvent is Examine that also returns the decoded event, nil when
// the body does not decode (Examined.Body says why), for the caller's own
// reading (Touched.Add).
func ExamineEvent(r Record) (Examined, *domain.Event) {
	ex := Examined{Hash: domain.ChainHash(r.PrevHash, r.Body)}
	e, err := domain.DecodeBody(r.Body)
	if err != nil {
		ex.Body = &Finding{Position: r.Position, EventID: r.EventID, Field: "body",
			Message: fmt.Sprintf("body does not decode as an event: %v", err)}
		ex.Entry = &Finding{Position: r.Position, EventID: r.EventID, Field: "postings",
			Message: "postings cannot be read: the body does not decode"}
		return ex, nil
	}
	ex.Body = compareColumns(r, e)
	ex.Postings, ex.Entry = postings(r, e)
	return ex, &e
}

// touch is what the events after a checkpoint did to one account.
type touch struct {
	delta      int64 // the sum of its postings, minor units
	badDelta   bool  // a posting could not be read (double entry names it)
	events     int64 // events on its stream
	first      int64 // the first of their versions
	last       int64 // the last
	lastPos    int64 // the last event that touched it
	stated     bool  // an event stated its balance (balance_after)
	atStart    int64 // the balance at the checkpoint that statement implies
	statedAt   int64 // the position of that statement
	problem    string
	problemPos int64
}

// Touched follows every account the events after a checkpoint touch (by
// a posting or on its stream), to compare their stored rows with the
// state at the checkpoint plus those events (Result).
type Touched struct {
	from     int64 // the checkpoint's last position
	accounts map[string]*touch
	t        *tally
}

// NewTouched follows the events after position from; examples bounds the
// findings kept.
func NewTouched(from int64, examples int) *Touched {
	return &Touched{from: from, accounts: map[string]*touch{}, t: newTally(CheckAccounts, examples)}
}

func (t *Touched) get(id string) *touch {
	a := t.accounts[id]
	if a == nil {
		a = &touch{}
		t.accounts[id] = a
	}
	return a
}

// Add reads the next event after the checkpoint, in position order: e is
// its decoded body (nil when it does not decode; the bodies check names
// it, and its postings are then not counted: the balance check of the
// accounts it touched is left out).
//
// A balance the event states (balance_after on its stream's account, not
// a seamless operator's reported one) implies the account's balance at
// the checkpoint: the stated balance minus the postings since. Every such
// statement of an account must imply the same one.
func (t *Touched) Add(r Record, e *domain.Event) {
	s := t.get(r.StreamID)
	if e == nil {
		s.badDelta = true
	} else {
		for _, p := range e.Data.Postings {
			a := t.get(string(p.Account))
			a.lastPos = r.Position
			cur, err := domain.ParseCurrency(p.Account.CurrencyCode())
			if err != nil {
				a.badDelta = true
				continue
			}
			m, err := domain.ParseMoney(p.Amount, cur)
			var ok bool
			if err == nil {
				a.delta, ok = checkedAdd(a.delta, m.Minor())
			}
			a.badDelta = a.badDelta || !ok
		}
	}
	s.lastPos = r.Position
	switch {
	case s.events == 0:
		s.first = r.StreamVersion
	case r.StreamVersion != s.last+1 && s.problem == "":
		s.problem = fmt.Sprintf("its stream's version %d at position %d follows version %d: not consecutive", r.StreamVersion, r.Position, s.last)
		s.problemPos = r.Position
	}
	s.events++
	s.last = r.StreamVersion
	if e == nil || e.Data.BalanceAfter == "" || e.Data.OperatorTxID != "" || s.badDelta {
		return
	}
	cur, err := domain.ParseCurrency(domain.AccountID(r.StreamID).CurrencyCode())
	if err != nil {
		return
	}
	m, err := domain.ParseMoney(e.Data.BalanceAfter, cur)
	if err != nil {
		return
	}
	at := m.Minor() - s.delta
	switch {
	case !s.stated:
		s.stated, s.atStart, s.statedAt = true, at, r.Position
	case at != s.atStart && s.problem == "":
		s.problem = fmt.Sprintf("balance_after %s at position %d implies %s at the checkpoint, position %d's implied %s (a posting or a balance edited?)",
			e.Data.BalanceAfter, r.Position, domain.FormatMinor(at, cur.Exponent()), s.statedAt, domain.FormatMinor(s.atStart, cur.Exponent()))
		s.problemPos = r.Position
	}
}

// Accounts are the ids of the accounts touched, in byte order.
func (t *Touched) Accounts() []string {
	ids := make([]string, 0, len(t.accounts))
	for id := range t.accounts {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// SinceRow is a stored account row and its stream's last version at or
// below the checkpoint's position (0: none).
type SinceRow struct {
	AccountRow
	VersionAtCheckpoint int64
}

// Result compares the stored rows of the accounts touched and of every
// row whose last_position is after the checkpoint (rows, any order) with
// what the events after it did: the version is the version at the
// checkpoint plus the stream's events since, their versions consecutive
// from it; last_position is the last event that touched it; kind and
// currency are the id's; a wallet is not below zero; and where the events
// state a balance, the stored balance minus the postings since is the
// balance at the checkpoint they state. An account without such a
// statement has its balance checked by the full verification only (the
// note counts them).
func (t *Touched) Result(rows []SinceRow) CheckResult {
	byID := make(map[string]*SinceRow, len(rows))
	for i := range rows {
		byID[rows[i].Account] = &rows[i]
	}
	ids := t.Accounts()
	for id := range byID {
		if t.accounts[id] == nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	var stated, unstated int
	for _, id := range ids {
		a, r := t.accounts[id], byID[id]
		t.t.rows++
		switch {
		case r == nil:
			t.t.fail(Finding{Account: id, Position: a.lastPos, Field: "account", Recomputed: "row",
				Message: fmt.Sprintf("events after the checkpoint touch the account (last at position %d) but it has no row (deleted?)", a.lastPos)})
			continue
		case a == nil:
			t.t.fail(Finding{Account: id, Position: r.LastPosition, Field: "last_position", Stored: fmt.Sprint(r.LastPosition),
				Message: fmt.Sprintf("stored last_position %d is after the checkpoint (%d) but no event after it touches the account", r.LastPosition, t.from)})
			continue
		}
		if a.stated && !a.badDelta {
			stated++
		} else {
			unstated++
		}
		t.compare(id, a, r)
	}
	res := t.t.result()
	res.Note = fmt.Sprintf("%d accounts touched after position %d: %d with a balance the events state (checked), %d without (balance left to the full verification)",
		len(ids), t.from, stated, unstated)
	return res
}

func (t *Touched) compare(id string, a *touch, r *SinceRow) {
	aid := domain.AccountID(id)
	var diffs []string
	var field, stored, want string
	add := func(name, s, w, msg string) {
		diffs = append(diffs, msg)
		if field == "" {
			field, stored, want = name, s, w
		}
	}
	if a.problem != "" {
		add("stream", "", "", a.problem)
	}
	wantVersion := r.VersionAtCheckpoint + a.events
	if a.events > 0 && a.first != r.VersionAtCheckpoint+1 {
		add("stream_version", fmt.Sprint(a.first), fmt.Sprint(r.VersionAtCheckpoint+1),
			fmt.Sprintf("its first event after the checkpoint has version %d, its stream was at %d at the checkpoint", a.first, r.VersionAtCheckpoint))
	}
	if r.Version != wantVersion {
		add("version", fmt.Sprint(r.Version), fmt.Sprint(wantVersion),
			fmt.Sprintf("stored version %d ≠ %d at the checkpoint + %d events on its stream since", r.Version, r.VersionAtCheckpoint, a.events))
	}
	if r.LastPosition != a.lastPos {
		add("last_position", fmt.Sprint(r.LastPosition), fmt.Sprint(a.lastPos),
			fmt.Sprintf("stored last_position %d ≠ %d, the last event that touched it", r.LastPosition, a.lastPos))
	}
	exp := 0
	if cur, err := domain.ParseCurrency(aid.CurrencyCode()); err == nil {
		exp = cur.Exponent()
	}
	if a.stated && !a.badDelta && r.Balance-a.delta != a.atStart {
		s, w := domain.FormatMinor(r.Balance, exp), domain.FormatMinor(a.atStart+a.delta, exp)
		add("balance", s, w, fmt.Sprintf("stored balance %s ≠ %s: the balance at the checkpoint position %d's balance_after implies, plus the postings since (balance edited?)",
			s, w, a.statedAt))
	}
	if k := aid.Kind().String(); r.Kind != k {
		add("kind", r.Kind, k, fmt.Sprintf("stored kind %q ≠ %q from its id", r.Kind, k))
	}
	if c := aid.CurrencyCode(); r.Currency != c {
		add("currency", r.Currency, c, fmt.Sprintf("stored currency %q ≠ %q from its id", r.Currency, c))
	}
	if r.Balance < 0 && !aid.Kind().MayGoNegative() {
		add("balance", domain.FormatMinor(r.Balance, exp), "≥ 0", "a wallet balance below zero")
	}
	if len(diffs) > 0 {
		t.t.fail(Finding{Account: id, Position: a.lastPos, Field: field, Stored: stored, Recomputed: want,
			Message: strings.Join(diffs, "; ")})
	}
}
