package reconcile

import (
	"cmp"
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
	rep := Report{FileRows: int64(len(file)), LedgerRows: int64(len(ledger)), Counts: map[string]int64{},
		FileTotals: map[string]int64{}, LedgerTotals: map[string]int64{}}
	for _, k := range Kinds {
		rep.Counts[k] = 0
	}
	var diffs []Difference
	add := func(d Difference) {
		rep.Counts[d.Kind]++
		diffs = append(diffs, d)
	}
	amount := func(l LedgerRow) int64 {
		if m.Signed || l.Amount >= 0 {
			return l.Amount
		}
		return -l.Amount
	}
	byID := make(map[string]int, len(ledger))
	for i, l := range ledger {
		byID[l.TransactionID] = i
		rep.LedgerTotals[l.Currency] += amount(l)
	}
	seen := make(map[string]bool, len(file))
	for i := range file {
		f := &file[i]
		rep.FileTotals[f.Currency] += f.Amount
		if seen[f.TransactionID] {
			add(Difference{Kind: DuplicateInFile, TransactionID: f.TransactionID, File: f})
			continue
		}
		seen[f.TransactionID] = true
		j, ok := byID[f.TransactionID]
		if !ok {
			add(Difference{Kind: MissingInLedger, TransactionID: f.TransactionID, File: f})
			continue
		}
		l := &ledger[j]
		matched := true
		if f.Amount != amount(*l) || f.Currency != l.Currency {
			add(Difference{Kind: AmountMismatch, TransactionID: f.TransactionID, File: f, Ledger: l})
			matched = false
		}
		if f.Status != "" && f.Status != l.Status {
			add(Difference{Kind: StatusMismatch, TransactionID: f.TransactionID, File: f, Ledger: l})
			matched = false
		}
		if f.Type != "" && f.Type != l.Type {
			add(Difference{Kind: TypeMismatch, TransactionID: f.TransactionID, File: f, Ledger: l})
			matched = false
		}
		if matched {
			rep.Matched++
		}
	}
	for i := range ledger {
		if l := &ledger[i]; !seen[l.TransactionID] {
			add(Difference{Kind: MissingInFile, TransactionID: l.TransactionID, Ledger: l})
		}
	}
	order := func(k string) int { return slices.Index(Kinds, k) }
	slices.SortStableFunc(diffs, func(a, b Difference) int {
		return cmp.Or(cmp.Compare(order(a.Kind), order(b.Kind)), cmp.Compare(a.TransactionID, b.TransactionID))
	})
	if len(diffs) > MaxListed {
		diffs, rep.Truncated = diffs[:MaxListed], true
	}
	rep.Differences = diffs
	return rep
}
