package reconcile

import (
	"cmp"
	"container/heap"
	"slices"
)

// LedgerRow is one of the ledger's transactions of the day, as the history
// read model shows it.
type LedgerRow struct {
	ID            string // the history row's id
	TransactionID string // the provider's or operator's id (external_id)
	Amount        int64  // signed minor units, the wallet's view
	Currency      string
	Type          string
	Status        string
	Position      int64
}

// Kinds of difference.
const (
	MissingInLedger = "missing_in_ledger" // in the file, not in the ledger
	MissingInFile   = "missing_in_file"   // in the ledger, not in the file
	AmountMismatch  = "amount_mismatch"   // amount or currency differ
	StatusMismatch  = "status_mismatch"
	TypeMismatch    = "type_mismatch"
	DuplicateInFile = "duplicate_in_file" // the same transaction id on two lines
)

// Kinds lists the kinds of difference, in report order.
var Kinds = []string{MissingInLedger, MissingInFile, AmountMismatch, StatusMismatch, TypeMismatch, DuplicateInFile}

// Difference is one finding. File is nil for missing_in_file, Ledger for
// missing_in_ledger and duplicate_in_file.
type Difference struct {
	Kind          string
	TransactionID string
	File          *FileRow
	Ledger        *LedgerRow
}

// Report is the outcome of a comparison.
type Report struct {
	FileRows, LedgerRows, Matched int64
	// Counts per kind of difference (every kind present, zero or not).
	Counts map[string]int64
	// FileTotals and LedgerTotals are the sums of the amounts per currency
	// as each side reads them (absolute amounts unless the file is signed).
	FileTotals, LedgerTotals map[string]int64
	// Differences are the first MaxListed findings, ordered by kind, then
	// transaction id; Truncated says some were left out of the list (never
	// out of Counts).
	Differences []Difference
	Truncated   bool
}

// MaxListed bounds the differences listed in a report.
const MaxListed = 1000

// Compare compares the file's rows with the ledger's by transaction id. A
// row matches when the amount and currency are equal (the ledger's amount
// made absolute unless m.Signed), and the status and the type too when the
// file has them. A row differing in several ways counts once per way.
func Compare(file []FileRow, ledger []LedgerRow, m Mapping) Report {
	c := NewComparer(ledger, m)
	for _, f := range file {
		c.Add(f)
	}
	return c.Report()
}

// Comparer compares a file's rows with the ledger's one row at a time, as
// the file is read (Compare's rules): it keeps the ledger's rows, the ids
// of the file seen so far, the counts and totals, and the first MaxListed
// differences in report order — never the file itself.
type Comparer struct {
	m      Mapping
	ledger []LedgerRow
	byID   map[string]int
	seen   map[string]struct{}
	rep    Report
	listed listed
}

// NewComparer is a comparison of a file with ledger by m.
func NewComparer(ledger []LedgerRow, m Mapping) *Comparer {
	c := &Comparer{m: m, ledger: ledger, byID: make(map[string]int, len(ledger)), seen: map[string]struct{}{},
		rep: Report{LedgerRows: int64(len(ledger)), Counts: map[string]int64{}, FileTotals: map[string]int64{},
			LedgerTotals: map[string]int64{}}}
	for _, k := range Kinds {
		c.rep.Counts[k] = 0
	}
	for i, l := range ledger {
		c.byID[l.TransactionID] = i
		c.rep.LedgerTotals[l.Currency] += c.amount(l)
	}
	return c
}

// amount is the ledger's amount as the file states it: absolute unless
// the file's amounts are signed.
func (c *Comparer) amount(l LedgerRow) int64 {
	if c.m.Signed || l.Amount >= 0 {
		return l.Amount
	}
	return -l.Amount
}

func (c *Comparer) add(d Difference) {
	c.rep.Counts[d.Kind]++
	c.listed.add(d)
}

// Add compares the file's next row.
func (c *Comparer) Add(f FileRow) {
	c.rep.FileRows++
	c.rep.FileTotals[f.Currency] += f.Amount
	if _, dup := c.seen[f.TransactionID]; dup {
		c.add(Difference{Kind: DuplicateInFile, TransactionID: f.TransactionID, File: &f})
		return
	}
	c.seen[f.TransactionID] = struct{}{}
	j, ok := c.byID[f.TransactionID]
	if !ok {
		c.add(Difference{Kind: MissingInLedger, TransactionID: f.TransactionID, File: &f})
		return
	}
	l := &c.ledger[j]
	matched := true
	if f.Amount != c.amount(*l) || f.Currency != l.Currency {
		c.add(Difference{Kind: AmountMismatch, TransactionID: f.TransactionID, File: &f, Ledger: l})
		matched = false
	}
	if f.Status != "" && f.Status != l.Status {
		c.add(Difference{Kind: StatusMismatch, TransactionID: f.TransactionID, File: &f, Ledger: l})
		matched = false
	}
	if f.Type != "" && f.Type != l.Type {
		c.add(Difference{Kind: TypeMismatch, TransactionID: f.TransactionID, File: &f, Ledger: l})
		matched = false
	}
	if matched {
		c.rep.Matched++
	}
}

// Report is the comparison once the file has ended: the ledger's rows the
// file did not name are missing in it.
func (c *Comparer) Report() Report {
	for i := range c.ledger {
		if l := &c.ledger[i]; !c.fileHas(l.TransactionID) {
			c.add(Difference{Kind: MissingInFile, TransactionID: l.TransactionID, Ledger: l})
		}
	}
	rep := c.rep
	rep.Differences, rep.Truncated = c.listed.sorted()
	return rep
}

func (c *Comparer) fileHas(id string) bool { _, ok := c.seen[id]; return ok }

// listed keeps the first MaxListed differences in report order (by kind,
// then transaction id, then arrival): a max-heap of them (container/heap),
// whose top is the one to drop when a smaller one arrives.
type listed struct {
	items   []listedDiff
	arrived int
	dropped bool
}

type listedDiff struct {
	d   Difference
	seq int
}

func (a listedDiff) cmp(b listedDiff) int {
	order := func(k string) int { return slices.Index(Kinds, k) }
	return cmp.Or(cmp.Compare(order(a.d.Kind), order(b.d.Kind)), cmp.Compare(a.d.TransactionID, b.d.TransactionID),
		cmp.Compare(a.seq, b.seq))
}

// heap.Interface, largest first.
func (l *listed) Len() int           { return len(l.items) }
func (l *listed) Less(i, j int) bool { return l.items[i].cmp(l.items[j]) > 0 }
func (l *listed) Swap(i, j int)      { l.items[i], l.items[j] = l.items[j], l.items[i] }
func (l *listed) Push(x any)         { l.items = append(l.items, x.(listedDiff)) }
func (l *listed) Pop() any {
	x := l.items[len(l.items)-1]
	l.items = l.items[:len(l.items)-1]
	return x
}

func (l *listed) add(d Difference) {
	x := listedDiff{d: d, seq: l.arrived}
	l.arrived++
	if len(l.items) < MaxListed {
		heap.Push(l, x)
		return
	}
	l.dropped = true
	if x.cmp(l.items[0]) < 0 {
		l.items[0] = x
		heap.Fix(l, 0)
	}
}

// sorted are the kept differences in report order, and whether any was
// dropped.
func (l *listed) sorted() ([]Difference, bool) {
	slices.SortFunc(l.items, listedDiff.cmp)
	out := make([]Difference, len(l.items))
	for i, x := range l.items {
		out[i] = x.d
	}
	return out, l.dropped
}
