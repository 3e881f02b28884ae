// Package reconcile compares a provider's or an operator's daily file of
// transactions with the ledger (docs/reconciliation.md): rows missing on
// either side, amounts, statuses and types that differ. It is pure: the
// file is parsed here with a configurable column mapping, the ledger's
// rows are handed in by the caller, and the comparison is exact (minor
// units of each row's currency, never floats).
package reconcile

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/projections"
)

// The fields a file row has, as the mapping names them.
const (
	FieldTransactionID = "transaction_id"
	FieldAmount        = "amount"
	FieldCurrency      = "currency"
	FieldType          = "type"
	FieldStatus        = "status"
)

var fields = []string{FieldTransactionID, FieldAmount, FieldCurrency, FieldType, FieldStatus}

// Mapping says how to read a file.
type Mapping struct {
	// Columns maps a field to the file's column header naming it; a field
	// not mapped is read from the column of its own name, if there is one.
	// transaction_id and amount are required; currency is required unless
	// Currency is set; type and status are compared only when present.
	Columns map[string]string
	// Currency is every row's currency when the file has no column for it.
	Currency string
	// Statuses maps the file's status values (compared without case) to
	// ours (settled, rolled_back, pending, discarded, failed); an unmapped value is
	// compared as it is, lower-cased.
	Statuses map[string]string
	// Signed: the file's amounts are signed from the wallet's view (a bet
	// negative, as the ledger's history shows them). Otherwise (the
	// default) they are absolute, and compared with the ledger's absolute
	// amounts.
	Signed bool
}

// ParseMapping reads the mapping's query form: columns
// "field=Column,field=Column", statuses "THEIRS=ours,...".
func ParseMapping(columns, statuses, currency string, signed bool) (Mapping, error) {
	m := Mapping{Columns: map[string]string{}, Statuses: map[string]string{}, Currency: currency, Signed: signed}
	if columns != "" {
		for pair := range strings.SplitSeq(columns, ",") {
			f, col, ok := strings.Cut(pair, "=")
			f, col = strings.TrimSpace(f), strings.TrimSpace(col)
			if !ok || col == "" || !slices.Contains(fields, f) {
				return m, &domain.FieldError{Field: "columns",
					Message: fmt.Sprintf("columns: %q is not field=Column with a field of %s", domain.ClipText(pair), strings.Join(fields, ", "))}
			}
			if _, dup := m.Columns[f]; dup {
				return m, &domain.FieldError{Field: "columns", Message: fmt.Sprintf("columns: %s is mapped twice", f)}
			}
			m.Columns[f] = col
		}
	}
	if statuses != "" {
		for pair := range strings.SplitSeq(statuses, ",") {
			theirs, ours, ok := strings.Cut(pair, "=")
			theirs, ours = strings.ToLower(strings.TrimSpace(theirs)), strings.TrimSpace(ours)
			if !ok || theirs == "" || !slices.Contains(projections.Statuses, projections.Status(ours)) {
				return m, &domain.FieldError{Field: "statuses",
					Message: fmt.Sprintf("statuses: %q is not THEIRS=ours with ours one of settled, rolled_back, pending, discarded, failed", domain.ClipText(pair))}
			}
			m.Statuses[theirs] = ours
		}
	}
	if currency != "" {
		if _, err := domain.ParseCurrency(currency); err != nil {
			return m, &domain.FieldError{Field: "currency", Message: fmt.Sprintf("currency %q is not configured", domain.ClipText(currency))}
		}
	}
	return m, nil
}

// FileRow is one row of the file, read.
type FileRow struct {
	Line          int // 1-based line of the CSV record
	TransactionID string
	Amount        int64 // minor units of Currency
	Currency      string
	Type          string // lower-cased; "" when the file has no type column
	Status        string // ours after the mapping; "" when the file has no status column
}

// MaxFileRows bounds the rows of one file.
const MaxFileRows = 200_000

// ErrTooManyRows: the file has more than MaxFileRows rows.
var ErrTooManyRows = errors.New("the file has too many rows")

// ParseFile reads a CSV file with a header row by m. An error is a
// *domain.FieldError on "file" naming the line and column.
func ParseFile(r io.Reader, m Mapping) ([]FileRow, error) {
	var out []FileRow
	if _, err := ReadFile(r, m, func(f FileRow) { out = append(out, f) }); err != nil {
		return nil, err
	}
	return out, nil
}

// ReadFile reads the file a row at a time, handing each to each as it is
// read (a reconciliation compares as it reads: the file is never held
// whole), and says how many rows it read. Its errors are ParseFile's.
func ReadFile(r io.Reader, m Mapping, each func(FileRow)) (int, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	var pe *csv.ParseError
	switch {
	case errors.Is(err, io.EOF):
		return 0, fileError("the file is empty: want a header row")
	case err != nil && !errors.As(err, &pe):
		return 0, fmt.Errorf("read the file: %w", err)
	case err != nil:
		return 0, fileError("line 1: %v", err)
	}
	col := map[string]int{}
	for _, f := range fields {
		name := f
		if c, ok := m.Columns[f]; ok {
			name = c
		}
		for i, h := range header {
			if strings.EqualFold(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")), name) {
				col[f] = i
				break
			}
		}
		if _, found := col[f]; !found {
			_, mapped := m.Columns[f]
			switch {
			case f == FieldTransactionID || f == FieldAmount || (f == FieldCurrency && m.Currency == "") || mapped:
				return 0, fileError("line 1: no column %q for %s", domain.ClipText(name), f)
			}
		}
	}
	rows := 0
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil && !errors.As(err, &pe) {
			// The reader's own error (a byte limit, a broken connection):
			// the caller's to answer.
			return rows, fmt.Errorf("read the file: %w", err)
		}
		if err != nil {
			return rows, fileError("%v", err)
		}
		line, _ := cr.FieldPos(0)
		if rows == MaxFileRows {
			return rows, fmt.Errorf("more than %d rows: %w", MaxFileRows, ErrTooManyRows)
		}
		get := func(f string) (string, bool) {
			i, ok := col[f]
			if !ok || i >= len(rec) {
				return "", ok
			}
			return strings.TrimSpace(rec[i]), true
		}
		row := FileRow{Line: line, Currency: m.Currency}
		if row.TransactionID, _ = get(FieldTransactionID); row.TransactionID == "" {
			return rows, fileError("line %d: %s is empty", line, FieldTransactionID)
		}
		if err := domain.ValidateID(FieldTransactionID, row.TransactionID); err != nil {
			// The ledger's ids all keep the id rule: one that breaks it
			// matches nothing, and is not echoed back whole.
			return rows, fileError("line %d: %v", line, err)
		}
		row.TransactionID = strings.Clone(row.TransactionID)
		if v, ok := get(FieldCurrency); ok {
			row.Currency = strings.ToUpper(v)
		}
		cur, err := domain.ParseCurrency(row.Currency)
		if err != nil {
			return rows, fileError("line %d: currency %q is not configured", line, domain.ClipText(row.Currency))
		}
		row.Currency = cur.Code()
		amount, _ := get(FieldAmount)
		money, err := domain.ParseMoney(amount, cur)
		if err != nil {
			return rows, fileError("line %d: amount %q: %v", line, domain.ClipText(amount), err)
		}
		row.Amount = money.Minor()
		if !m.Signed && row.Amount < 0 {
			return rows, fileError("line %d: amount %s is negative but the file's amounts are absolute (set signed)", line, amount)
		}
		if v, ok := get(FieldType); ok {
			row.Type = strings.ToLower(v)
		}
		if v, ok := get(FieldStatus); ok {
			v = strings.ToLower(v)
			if ours, mapped := m.Statuses[v]; mapped {
				v = ours
			}
			row.Status = v
		}
		rows++
		each(row)
	}
}

func fileError(format string, args ...any) error {
	return &domain.FieldError{Field: "file", Message: fmt.Sprintf(format, args...)}
}
