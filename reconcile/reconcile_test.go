package reconcile_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/reconcile"
)

func TestParseMapping(t *testing.T) {
	tests := []struct {
		name, columns, statuses, currency string
		field                             string // "" = accepted
	}{
		{"defaults", "", "", "", ""},
		{"columns and statuses", "transaction_id=TxnId, amount=Amt", "OK=settled,CANCELLED=rolled_back", "EUR", ""},
		{"an unknown field", "txn=TxnId", "", "", "columns"},
		{"no column", "amount=", "", "", "columns"},
		{"a field twice", "amount=A,amount=B", "", "", "columns"},
		{"an unknown status of ours", "", "OK=done", "", "statuses"},
		{"an unknown currency", "", "", "XXX", "currency"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := reconcile.ParseMapping(tc.columns, tc.statuses, tc.currency, false)
			var fe *domain.FieldError
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.field != "" && (!errors.As(err, &fe) || fe.Field != tc.field):
				t.Fatalf("err %v, want a field error on %s", err, tc.field)
			}
		})
	}
}

func TestParseFile(t *testing.T) {
	m, err := reconcile.ParseMapping("transaction_id=Txn,amount=Amt,status=State", "OK=settled,CANCELLED=rolled_back", "", false)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := reconcile.ParseFile(strings.NewReader("\ufeffTxn,Amt,Currency,State,Type,Extra\r\nb1,5.00,eur,OK,BET,x\nw1,12.5,EUR,cancelled,win,\n"), m)
	if err != nil {
		t.Fatal(err)
	}
	want := []reconcile.FileRow{
		{Line: 2, TransactionID: "b1", Amount: 500, Currency: "EUR", Type: "bet", Status: "settled"},
		{Line: 3, TransactionID: "w1", Amount: 1250, Currency: "EUR", Type: "win", Status: "rolled_back"},
	}
	if len(rows) != 2 || rows[0] != want[0] || rows[1] != want[1] {
		t.Fatalf("rows %+v\nwant %+v", rows, want)
	}

	refused := []struct{ name, csv, msg string }{
		{"empty", "", "empty"},
		{"no amount column", "Txn,Currency\nb1,EUR\n", `no column "Amt"`},
		{"a float-ish amount", "Txn,Amt,Currency\nb1,5.001,EUR\n", "line 2: amount"},
		{"an amount with a plus", "Txn,Amt,Currency\nb1,+5,EUR\n", "line 2: amount"},
		{"a negative absolute amount", "Txn,Amt,Currency\nb1,-5,EUR\n", "absolute"},
		{"an unknown currency", "Txn,Amt,Currency\nb1,5,XXX\n", "line 2: currency"},
		{"an empty id", "Txn,Amt,Currency\n,5,EUR\n", "line 2: transaction_id is empty"},
		{"a broken quote", "Txn,Amt,Currency\n\"b1,5,EUR\n", "line 2"},
	}
	m2, _ := reconcile.ParseMapping("transaction_id=Txn,amount=Amt", "", "", false)
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			_, err := reconcile.ParseFile(strings.NewReader(tc.csv), m2)
			var fe *domain.FieldError
			if !errors.As(err, &fe) || fe.Field != "file" || !strings.Contains(fe.Message, tc.msg) {
				t.Fatalf("err %v, want a file error with %q", err, tc.msg)
			}
		})
	}
	t.Run("a mapped column missing", func(t *testing.T) {
		_, err := reconcile.ParseFile(strings.NewReader("Txn,Amt,Currency\nb1,5,EUR\n"), m)
		if err == nil || !strings.Contains(err.Error(), `no column "State" for status`) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("the currency of every row", func(t *testing.T) {
		m, _ := reconcile.ParseMapping("", "", "JPY", true)
		rows, err := reconcile.ParseFile(strings.NewReader("transaction_id,amount\nb1,-500\n"), m)
		if err != nil || len(rows) != 1 || rows[0].Currency != "JPY" || rows[0].Amount != -500 {
			t.Fatalf("%+v %v", rows, err)
		}
	})
}

// TestCompareFindsExactlyThePlantedDifferences: a provider file with three
// planted differences — a transaction the ledger lacks, an amount and a
// status that differ — and one the file lacks, among matching rows.
func TestCompareFindsExactlyThePlantedDifferences(t *testing.T) {
	m, _ := reconcile.ParseMapping("", "OK=settled,ROLLEDBACK=rolled_back", "", false)
	file, err := reconcile.ParseFile(strings.NewReader(`transaction_id,amount,currency,status,type
b1,5.00,EUR,OK,bet
w1,20.00,EUR,OK,win
b2,1.00,EUR,OK,bet
b3,3.00,EUR,OK,bet
b4,2.00,EUR,OK,bet
b5,0.50,USD,ROLLEDBACK,bet
b1,5.00,EUR,OK,bet
`), m)
	if err != nil {
		t.Fatal(err)
	}
	ledger := []reconcile.LedgerRow{
		{ID: "r1", TransactionID: "b1", Amount: -500, Currency: "EUR", Type: "bet", Status: "settled"},
		{ID: "r2", TransactionID: "w1", Amount: 2000, Currency: "EUR", Type: "win", Status: "settled"},
		{ID: "r3", TransactionID: "b3", Amount: -300, Currency: "EUR", Type: "bet", Status: "rolled_back"}, // status
		{ID: "r4", TransactionID: "b4", Amount: -250, Currency: "EUR", Type: "bet", Status: "settled"},     // amount
		{ID: "r5", TransactionID: "b5", Amount: -50, Currency: "USD", Type: "bet", Status: "rolled_back"},
		{ID: "r6", TransactionID: "b6", Amount: -100, Currency: "EUR", Type: "bet", Status: "settled"}, // not in the file
	}
	rep := reconcile.Compare(file, ledger, m)
	var got []string
	for _, d := range rep.Differences {
		got = append(got, d.Kind+":"+d.TransactionID)
	}
	want := "missing_in_ledger:b2 missing_in_file:b6 amount_mismatch:b4 status_mismatch:b3 duplicate_in_file:b1"
	if strings.Join(got, " ") != want {
		t.Fatalf("differences %v\nwant %s", got, want)
	}
	if rep.FileRows != 7 || rep.LedgerRows != 6 || rep.Matched != 3 || rep.Counts[reconcile.TypeMismatch] != 0 || rep.Truncated {
		t.Fatalf("report %+v", rep)
	}
	if rep.FileTotals["EUR"] != 500+2000+100+300+200+500 || rep.LedgerTotals["EUR"] != 500+2000+300+250+100 || rep.LedgerTotals["USD"] != 50 {
		t.Fatalf("totals file %v ledger %v", rep.FileTotals, rep.LedgerTotals)
	}

	t.Run("a signed file compares signed amounts", func(t *testing.T) {
		ms, _ := reconcile.ParseMapping("", "", "EUR", true)
		f, _ := reconcile.ParseFile(strings.NewReader("transaction_id,amount\nb1,5.00\n"), ms)
		rep := reconcile.Compare(f, ledger[:1], ms)
		if rep.Counts[reconcile.AmountMismatch] != 1 || rep.Matched != 0 {
			t.Fatalf("a bet of 5.00 as +5.00 in a signed file: %+v", rep.Counts)
		}
	})
	t.Run("the list is bounded, the counts are not", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("transaction_id,amount,currency\n")
		for i := range reconcile.MaxListed + 5 {
			b.WriteString("x" + strings.Repeat("0", 6-len(itoa(i))) + itoa(i) + ",1,EUR\n")
		}
		f, err := reconcile.ParseFile(strings.NewReader(b.String()), m)
		if err != nil {
			t.Fatal(err)
		}
		rep := reconcile.Compare(f, nil, m)
		if !rep.Truncated || len(rep.Differences) != reconcile.MaxListed || rep.Counts[reconcile.MissingInLedger] != int64(reconcile.MaxListed+5) {
			t.Fatalf("truncated %v, listed %d, counted %d", rep.Truncated, len(rep.Differences), rep.Counts[reconcile.MissingInLedger])
		}
	})
}

// TestComparerListsTheFirstInReportOrder: compared as the file streams,
// the list holds the MaxListed differences that come first in report order
// (kind, then transaction id, then the file's order) whatever order the
// rows arrive in — what sorting them all and cutting would give.
func TestComparerListsTheFirstInReportOrder(t *testing.T) {
	m, err := reconcile.ParseMapping("", "", "", false)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	ledger := []reconcile.LedgerRow{}
	for i := range 300 { // missing in the file: listed after the file's kinds
		ledger = append(ledger, reconcile.LedgerRow{TransactionID: "l" + itoa(i), Amount: 1, Currency: "EUR"})
	}
	var ids []string
	c := reconcile.NewComparer(ledger, m)
	for i := range reconcile.MaxListed + 700 {
		id := "f" + itoa(rng.IntN(1_000_000))
		ids = append(ids, id)
		c.Add(reconcile.FileRow{Line: i + 2, TransactionID: id, Amount: 1, Currency: "EUR"})
	}
	rep := c.Report()
	// Missing in the ledger comes first in report order, by id: each
	// distinct id of the file once (more of them than MaxListed).
	var missing []string
	seen := map[string]bool{}
	for _, id := range ids {
		if !seen[id] {
			missing = append(missing, id)
		}
		seen[id] = true
	}
	slices.Sort(missing)
	want := missing[:reconcile.MaxListed]
	if !rep.Truncated || len(rep.Differences) != reconcile.MaxListed {
		t.Fatalf("truncated %v, listed %d", rep.Truncated, len(rep.Differences))
	}
	for i, d := range rep.Differences {
		if d.TransactionID != want[i] {
			t.Fatalf("difference %d is %s %s, want %s", i, d.Kind, d.TransactionID, want[i])
		}
	}
	if rep.Counts[reconcile.MissingInFile] != 300 || rep.FileRows != int64(len(ids)) {
		t.Fatalf("counts %v, file rows %d", rep.Counts, rep.FileRows)
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
