package audit

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/pitboss/pitboss/domain"
)

// Examined is what one row says on its own, before it is linked into the
// chain: its recomputed hash, what is wrong with its body, and its postings
// per currency. Examine is pure and independent per row, so callers may
// examine rows in parallel and feed them to Chain.Add in position order.
type Examined struct {
	Hash     []byte   // SHA-256(row.prev_hash || row.body)
	Body     *Finding // nil when the body decodes, is canonical and agrees with the columns
	Entry    *Finding // nil when the postings are valid and sum to zero
	Postings []CurrencySum
}

// CurrencySum is one event's postings in one currency, in minor units.
type CurrencySum struct {
	Currency string
	Count    int64
	Sum      int64
	Debits   int64 // the sum of the negative postings, negated
}

// Examine checks one row on its own.
func Examine(r Record) Examined {
	ex := Examined{Hash: domain.ChainHash(r.PrevHash, r.Body)}
	e, err := domain.DecodeBody(r.Body)
	if err != nil {
		ex.Body = &Finding{Position: r.Position, EventID: r.EventID, Field: "body",
			Message: fmt.Sprintf("body does not decode as an event: %v", err)}
		ex.Entry = &Finding{Position: r.Position, EventID: r.EventID, Field: "postings",
			Message: "postings cannot be read: the body does not decode"}
		return ex
	}
	ex.Body = compareColumns(r, e)
	ex.Postings, ex.Entry = postings(r, e)
	return ex
}

// compareColumns checks that the body is canonical and says what the row's
// columns say.
func compareColumns(r Record, e domain.Event) *Finding {
	var diffs []string
	var field, stored, inBody string
	add := func(name, col, body string) {
		diffs = append(diffs, fmt.Sprintf("column %s is %s but the body says %s", name, col, body))
		if field == "" {
			field, stored, inBody = name, col, body
		}
	}
	if e.Position != r.Position {
		add("position", fmt.Sprint(r.Position), fmt.Sprint(e.Position))
	}
	if !strings.EqualFold(e.ID, r.EventID) {
		add("event_id", r.EventID, e.ID)
	}
	if string(e.StreamID) != r.StreamID {
		add("stream_id", r.StreamID, string(e.StreamID))
	}
	if e.Version != r.StreamVersion {
		add("stream_version", fmt.Sprint(r.StreamVersion), fmt.Sprint(e.Version))
	}
	if string(e.Type) != r.Type {
		add("event_type", r.Type, string(e.Type))
	}
	// The column holds microseconds, the body nanoseconds.
	if d := e.OccurredAt.Sub(r.OccurredAt); d <= -time.Microsecond || d >= time.Microsecond {
		add("occurred_at", r.OccurredAt.UTC().Format(time.RFC3339Nano), e.OccurredAt.UTC().Format(time.RFC3339Nano))
	}
	if len(diffs) == 0 {
		canon, err := domain.EncodeBody(e)
		switch {
		case err != nil:
			diffs, field = append(diffs, fmt.Sprintf("body cannot be re-encoded: %v", err)), "body"
		case !bytes.Equal(canon, r.Body):
			diffs, field = append(diffs, "body is not in canonical form (re-encoding it gives other bytes: an edited or injected field?)"), "body"
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	return &Finding{Position: r.Position, EventID: r.EventID, Field: field, Stored: stored, Recomputed: inBody,
		Message: strings.Join(diffs, "; ")}
}

// postings reads the event's postings exactly and checks they are in the
// event's currency, within its precision, and sum to zero.
func postings(r Record, e domain.Event) ([]CurrencySum, *Finding) {
	if len(e.Data.Postings) == 0 {
		return nil, nil
	}
	var problems []string
	cur, err := domain.ParseCurrency(e.Data.Currency)
	if err != nil {
		problems = append(problems, fmt.Sprintf("event currency %q is not configured", e.Data.Currency))
	}
	var sums []CurrencySum
	for i, p := range e.Data.Postings {
		code := p.Account.CurrencyCode()
		if code != e.Data.Currency {
			problems = append(problems, fmt.Sprintf("posting %d on %s is not in the event's currency %s", i, p.Account, e.Data.Currency))
		}
		c := cur
		if code != cur.Code() {
			if c, err = domain.ParseCurrency(code); err != nil {
				problems = append(problems, fmt.Sprintf("posting %d on %s: currency %q is not configured", i, p.Account, code))
				continue
			}
		}
		m, err := domain.ParseMoney(p.Amount, c)
		if err != nil {
			problems = append(problems, fmt.Sprintf("posting %d on %s: amount %q: %v", i, p.Account, p.Amount, err))
			continue
		}
		j := slices.IndexFunc(sums, func(s CurrencySum) bool { return s.Currency == code })
		if j < 0 {
			sums = append(sums, CurrencySum{Currency: code})
			j = len(sums) - 1
		}
		s := &sums[j]
		s.Count++
		var ok bool
		if s.Sum, ok = checkedAdd(s.Sum, m.Minor()); !ok {
			problems = append(problems, fmt.Sprintf("postings in %s overflow 64 bits", code))
		}
		if m.IsNegative() {
			if s.Debits, ok = checkedAdd(s.Debits, -m.Minor()); !ok {
				problems = append(problems, fmt.Sprintf("debits in %s overflow 64 bits", code))
			}
		}
	}
	var stored string
	for _, s := range sums {
		if s.Sum != 0 {
			c, _ := domain.ParseCurrency(s.Currency)
			stored = domain.FormatMinor(s.Sum, c.Exponent())
			problems = append(problems, fmt.Sprintf("postings in %s sum to %s, not zero (money created or destroyed)", s.Currency, stored))
		}
	}
	if len(problems) == 0 {
		return sums, nil
	}
	return sums, &Finding{Position: r.Position, EventID: r.EventID, Field: "postings", Stored: stored, Recomputed: zeroIf(stored),
		Message: strings.Join(problems, "; ")}
}

func zeroIf(s string) string {
	if s == "" {
		return ""
	}
	return "0"
}

func checkedAdd(a, b int64) (int64, bool) {
	s := a + b
	if (a > 0 && b > 0 && s < 0) || (a < 0 && b < 0 && s >= 0) {
		return s, false
	}
	return s, true
}

// Chain links examined rows in position order: it checks positions run
// 1..N without holes, that each prev_hash is the previous row's hash (the
// genesis hash for position 1), that each hash covers its row, and it sums
// the postings per currency.
//
// A row is judged against its stored neighbours, so one edited body is
// reported at its own position only, not at every later one; by induction,
// when every row passes, recomputing the chain from the genesis hash gives
// every stored hash.
type Chain struct {
	next    int64  // the position expected next
	prev    []byte // the stored hash of the previous row
	events  int64
	head    int64
	hash    *tally
	bodies  *tally
	entries *tally
	anchors *tally
	wanted  map[int64][]byte // anchors still to meet
	totals  currencyTotals
	clients map[string]*clientSpan
}

// clientSpan is what the chain saw of one client's events.
type clientSpan struct {
	events   int64
	position int64
	hash     [32]byte
}

type total struct {
	postings int64
	sum      big.Int
	debits   big.Int
}

// currencyTotals are postings tallied per currency code: the chain's
// double-entry totals and a checkpoint's alike.
type currencyTotals map[string]*total

// add tallies postings postings of code summing to sum, of which debits
// (the negative ones, negated).
func (m currencyTotals) add(code string, postings, sum, debits int64) {
	t := m[code]
	if t == nil {
		t = &total{}
		m[code] = t
	}
	t.postings += postings
	t.sum.Add(&t.sum, big.NewInt(sum))
	t.debits.Add(&t.debits, big.NewInt(debits))
}

// list is the totals in currency order, as decimal text at each
// currency's precision.
func (m currencyTotals) list() []CurrencyTotal {
	codes := make([]string, 0, len(m))
	for c := range m {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	out := make([]CurrencyTotal, 0, len(codes))
	for _, c := range codes {
		t, exp := m[c], currencyExp(c)
		out = append(out, CurrencyTotal{Currency: c, Postings: t.postings, Sum: formatBig(&t.sum, exp), Debits: formatBig(&t.debits, exp)})
	}
	return out
}

// Anchor is a hash recorded earlier at a position (for example the head
// hash of a previous verify, kept outside the database). If history up to
// that position were rewritten and re-hashed, the chain would be
// consistent again but the anchor would no longer match.
type Anchor struct {
	Position int64
	Hash     []byte
}

// ParseAnchor reads "POSITION:HEX".
func ParseAnchor(s string) (Anchor, error) {
	p, h, ok := strings.Cut(s, ":")
	var a Anchor
	if !ok {
		return a, fmt.Errorf("anchor %q: want POSITION:HASH", s)
	}
	if _, err := fmt.Sscan(p, &a.Position); err != nil || a.Position < 1 {
		return a, fmt.Errorf("anchor %q: position must be a positive integer", s)
	}
	b, err := hex.DecodeString(strings.ToLower(h))
	if err != nil || len(b) != 32 {
		return a, fmt.Errorf("anchor %q: hash must be 64 hex digits", s)
	}
	a.Hash = b
	return a, nil
}

// NewChain starts a chain at the genesis hash. examples bounds the findings
// kept per check.
func NewChain(examples int, anchors ...Anchor) *Chain {
	c := &Chain{
		next: 1, prev: domain.GenesisHash,
		hash: newTally(CheckHashChain, examples), bodies: newTally(CheckEventBodies, examples),
		entries: newTally(CheckDoubleEntry, examples), anchors: newTally(CheckAnchors, examples),
		wanted: map[int64][]byte{}, totals: currencyTotals{}, clients: map[string]*clientSpan{},
	}
	for _, a := range anchors {
		c.wanted[a.Position] = a.Hash
	}
	return c
}

// Add links the next row, in position order, with what Examine found.
func (c *Chain) Add(r Record, ex Examined) {
	c.events++
	c.hash.rows++
	c.bodies.rows++
	c.entries.rows++

	var problems []string
	f := Finding{Position: r.Position, EventID: r.EventID}
	switch {
	case r.Position > c.next:
		missing := fmt.Sprintf("position %d", c.next)
		if r.Position-c.next > 1 {
			missing = fmt.Sprintf("positions %d..%d", c.next, r.Position-1)
		}
		problems = append(problems, fmt.Sprintf("%s missing before it: a hole in the chain (deleted events?)", missing))
		f.Field, f.Stored, f.Recomputed = "position", fmt.Sprint(r.Position), fmt.Sprint(c.next)
	case r.Position < c.next:
		problems = append(problems, fmt.Sprintf("position out of order: expected %d", c.next))
		f.Field, f.Stored, f.Recomputed = "position", fmt.Sprint(r.Position), fmt.Sprint(c.next)
	case !bytes.Equal(r.PrevHash, c.prev):
		// Across a hole the previous hash is unknown: the hole is the finding.
		what := fmt.Sprintf("the hash of position %d", r.Position-1)
		if r.Position == 1 {
			what = "the genesis hash (32 zero bytes)"
		}
		problems = append(problems, fmt.Sprintf("prev_hash %s ≠ %s %s: the link was broken (an event inserted, removed or re-hashed?)",
			short(r.PrevHash), what, short(c.prev)))
		f.Field, f.Stored, f.Recomputed = "prev_hash", hex.EncodeToString(r.PrevHash), hex.EncodeToString(c.prev)
	}
	if !bytes.Equal(ex.Hash, r.Hash) {
		problems = append(problems, fmt.Sprintf("stored hash %s ≠ recomputed %s = SHA-256(prev_hash || body): the body (or the hash) was edited after it was written",
			short(r.Hash), short(ex.Hash)))
		if f.Field == "" {
			f.Field, f.Stored, f.Recomputed = "hash", hex.EncodeToString(r.Hash), hex.EncodeToString(ex.Hash)
		}
	}
	if len(problems) > 0 {
		f.Message = strings.Join(problems, "; ")
		c.hash.fail(f)
	}
	if want, ok := c.wanted[r.Position]; ok {
		c.anchors.rows++
		if !bytes.Equal(want, r.Hash) {
			c.anchors.fail(Finding{Position: r.Position, EventID: r.EventID, Field: "hash", Stored: hex.EncodeToString(r.Hash),
				Recomputed: hex.EncodeToString(want),
				Message:    fmt.Sprintf("stored hash %s ≠ anchored %s: history up to here was rewritten", short(r.Hash), short(want))})
		}
		delete(c.wanted, r.Position)
	}
	if ex.Body != nil {
		c.bodies.fail(*ex.Body)
	}
	if ex.Entry != nil {
		c.entries.fail(*ex.Entry)
	}
	for _, s := range ex.Postings {
		c.totals.add(s.Currency, s.Count, s.Sum, s.Debits)
	}
	if client := StreamClient(r.StreamID); client != "" {
		cs := c.clients[client]
		if cs == nil {
			cs = &clientSpan{}
			c.clients[client] = cs
		}
		cs.events++
		cs.position = r.Position
		copy(cs.hash[:], r.Hash)
	}
	c.prev = r.Hash
	c.head = r.Position
	c.next = max(c.next, r.Position+1)
}

// StreamClient is the client a stream id names: its second part
// ("player:acme:p-17:EUR" is acme's), "" when it names none. The event
// store's client index (events_client_position_idx) and the audit export
// read a client's events the same way.
func StreamClient(streamID string) string {
	_, rest, ok := strings.Cut(streamID, ":")
	if !ok {
		return ""
	}
	client, _, _ := strings.Cut(rest, ":")
	return client
}

// Clients returns, per client in id order, how many of its events the
// chain saw and its last one: what a client is shown of a verification
// (GET /api/v1/audit/head), so that no client learns another's volume.
func (c *Chain) Clients() []ClientSpan {
	out := make([]ClientSpan, 0, len(c.clients))
	for id, cs := range c.clients {
		out = append(out, ClientSpan{Client: id, Events: cs.events, HeadPosition: cs.position,
			HeadHash: hex.EncodeToString(cs.hash[:])})
	}
	slices.SortFunc(out, func(a, b ClientSpan) int { return strings.Compare(a.Client, b.Client) })
	return out
}

// Head returns the last position and its stored hash.
func (c *Chain) Head() (int64, []byte) { return c.head, c.prev }

// Events returns the number of rows added.
func (c *Chain) Events() int64 { return c.events }

// Results returns the chain's checks (the anchors check only when anchors
// were given) and the per-currency totals. A currency whose postings do not
// sum to zero fails double entry even if every event was flagged already.
func (c *Chain) Results() ([]CheckResult, []CurrencyTotal) {
	totals := c.totals.list()
	for _, ct := range totals {
		if c.totals[ct.Currency].sum.Sign() != 0 {
			c.entries.fail(Finding{Field: "sum", Stored: ct.Sum, Recomputed: "0",
				Message: fmt.Sprintf("all %d postings in %s sum to %s, not zero", ct.Postings, ct.Currency, ct.Sum)})
		}
	}
	results := []CheckResult{c.hash.result(), c.bodies.result(), c.entries.result()}
	if n := len(c.wanted) + int(c.anchors.rows); n > 0 {
		missing := make([]int64, 0, len(c.wanted))
		for p := range c.wanted {
			missing = append(missing, p)
		}
		slices.Sort(missing)
		for _, p := range missing {
			c.anchors.rows++
			c.anchors.fail(Finding{Position: p, Field: "position",
				Message: fmt.Sprintf("anchored position %d is not in the event store (head %d): events were removed", p, c.head)})
		}
		c.wanted = map[int64][]byte{}
		results = append(results, c.anchors.result())
	}
	if len(totals) > 0 {
		var parts []string
		for _, t := range totals {
			parts = append(parts, t.Currency+" "+t.Sum)
		}
		results[2].Note = "sum per currency: " + strings.Join(parts, ", ")
	}
	return results, totals
}

// formatBig formats minor units with exp decimals.
func formatBig(x *big.Int, exp int) string {
	if x.IsInt64() {
		return domain.FormatMinor(x.Int64(), exp)
	}
	s := new(big.Int).Abs(x).String()
	if exp > 0 {
		if len(s) <= exp {
			s = strings.Repeat("0", exp-len(s)+1) + s
		}
		s = s[:len(s)-exp] + "." + s[len(s)-exp:]
	}
	if x.Sign() < 0 {
		s = "-" + s
	}
	return s
}
