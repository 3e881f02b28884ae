package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/adapters/projector/projectortest"
	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
)

type reconcileResult struct {
	Day          string           `json:"day"`
	Provider     *string          `json:"provider"`
	FileRows     int64            `json:"file_rows"`
	LedgerRows   int64            `json:"ledger_rows"`
	Matched      int64            `json:"matched"`
	Counts       map[string]int64 `json:"counts"`
	FileTotals   []map[string]any `json:"file_totals"`
	LedgerTotals []map[string]any `json:"ledger_totals"`
	Differences  []struct {
		Kind          string         `json:"kind"`
		TransactionID string         `json:"transaction_id"`
		File          map[string]any `json:"file"`
		Ledger        map[string]any `json:"ledger"`
	} `json:"differences"`
	Truncated bool `json:"truncated"`
}

// TestReconcileAProviderFile: a provider's file of a day, in its own column
// names and status words, against the ledger: three planted differences
// (a transaction the ledger lacks, an amount, a status) and exactly those.
func TestReconcileAProviderFile(t *testing.T) {
	t.Parallel()
	h := newRQHarness(t)
	post := func(query, csv string, header map[string]string) *httptest.ResponseRecorder {
		if header == nil {
			header = map[string]string{"Content-Type": "text/csv"}
		}
		return h.Do(apitest.Request{Method: http.MethodPost, Path: "/api/v1/reconciliations?" + query,
			Key: h.full, Body: csv, Header: header})
	}
	const mapping = "day=2025-03-01&provider=" + projectortest.Provider +
		"&columns=transaction_id=TxnId,amount=Amount,currency=Ccy,status=State,type=Kind&statuses=OK=settled,CANCELLED=rolled_back"
	// The ledger of 2025-03-01 at prov-a: b1 bet 10.00, w1 win 25.00
	// (reversed the next day, so rolled_back), b2 bet 20.00 rolled back by
	// rb1, b3 and b4 bets of 5.00, w2 a win of 0.00.
	file := "TxnId,Kind,Amount,Ccy,State\n" +
		"b1,bet,10.00,EUR,OK\n" +
		"w1,win,25.00,EUR,OK\n" + // status: ours is rolled_back
		"b2,bet,20.00,EUR,CANCELLED\n" +
		"rb1,rollback,20.00,EUR,OK\n" +
		"b3,bet,5.00,EUR,OK\n" +
		"b4,bet,4.00,EUR,OK\n" + // amount: ours is 5.00
		"w2,win,0.00,EUR,OK\n" +
		"x9,bet,1.00,EUR,OK\n" // not in the ledger
	rep := apitest.Data[reconcileResult](t, post(mapping, file, nil))
	var got []string
	for _, d := range rep.Differences {
		got = append(got, d.Kind+":"+d.TransactionID)
	}
	if want := "missing_in_ledger:x9 amount_mismatch:b4 status_mismatch:w1"; strings.Join(got, " ") != want {
		t.Fatalf("differences %v, want %s", got, want)
	}
	if rep.FileRows != 8 || rep.LedgerRows != 7 || rep.Matched != 5 || rep.Counts["missing_in_file"] != 0 || rep.Truncated {
		t.Fatalf("report %+v", rep)
	}
	if fmt.Sprint(rep.FileTotals) != "[map[amount:85.00 currency:EUR]]" || fmt.Sprint(rep.LedgerTotals) != "[map[amount:85.00 currency:EUR]]" {
		t.Fatalf("totals %v / %v", rep.FileTotals, rep.LedgerTotals)
	}
	d := rep.Differences[1]
	if fmt.Sprint(d.File["amount"]) != "4.00" || fmt.Sprint(d.Ledger["amount"]) != "-5.00" || fmt.Sprint(d.File["line"]) != "7" {
		t.Fatalf("amount difference %+v", d)
	}

	t.Run("a day's ledger transaction the file lacks", func(t *testing.T) {
		rep := apitest.Data[reconcileResult](t, post(mapping, "TxnId,Kind,Amount,Ccy,State\nb1,bet,10.00,EUR,OK\n", nil))
		if rep.Counts["missing_in_file"] != 6 || rep.Matched != 1 {
			t.Fatalf("counts %v", rep.Counts)
		}
	})
	t.Run("another client sees none of it", func(t *testing.T) {
		rec := h.Do(apitest.Request{Method: http.MethodPost, Path: "/api/v1/reconciliations?" + mapping, Key: h.other, Body: file,
			Header: map[string]string{"Content-Type": "text/csv"}})
		rep := apitest.Data[reconcileResult](t, rec)
		if rep.LedgerRows != 0 || rep.Counts["missing_in_ledger"] != 8 {
			t.Fatalf("report %+v", rep)
		}
	})

	refused := []struct {
		name, query, csv string
		header           map[string]string
		status           int
		code, field      string
	}{
		{"no day", "provider=prov-a", file, nil, 400, wire.CodeInvalidRequest, "day"},
		{"a bad day", "day=2025-02-30", file, nil, 400, wire.CodeInvalidRequest, "day"},
		{"a bad mapping", "day=2025-03-01&columns=txn=TxnId", file, nil, 400, wire.CodeInvalidRequest, "columns"},
		{"a bad status mapping", "day=2025-03-01&statuses=OK=fine", file, nil, 400, wire.CodeInvalidRequest, "statuses"},
		{"a bad amount in the file", mapping, "TxnId,Kind,Amount,Ccy,State\nb1,bet,1.234,EUR,OK\n", nil, 400, wire.CodeInvalidRequest, "file"},
		{"not sent as CSV", mapping, file, map[string]string{"Content-Type": "application/json"}, 400, wire.CodeInvalidRequest, ""},
		{"signed is not a boolean", mapping + "&signed=maybe", file, nil, 400, wire.CodeInvalidRequest, "signed"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			e := apitest.WantError(t, post(tc.query, tc.csv, tc.header), tc.status, tc.code)
			if tc.field != "" && e.Error.Details["field"] != tc.field {
				t.Fatalf("details %v, want field %q", e.Error.Details, tc.field)
			}
		})
	}
	t.Run("403 without reports:read", func(t *testing.T) {
		rec := h.Do(apitest.Request{Method: http.MethodPost, Path: "/api/v1/reconciliations?" + mapping, Key: h.noRead, Body: file,
			Header: map[string]string{"Content-Type": "text/csv"}})
		apitest.WantError(t, rec, http.StatusForbidden, wire.CodeForbidden)
	})
}
