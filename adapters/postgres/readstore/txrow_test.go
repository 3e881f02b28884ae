package readstore

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres/readstore/bincopy"
	"github.com/pitboss/pitboss/projections"
)

// appendTxRow is byte for byte txRowArgs through bincopy's interface path,
// for every kind of row: a rebuild writes the first, and
// TestSlicedRebuildMatchesInMemory compares the result with what the
// generic path and the live projector write.
func TestAppendIsArgs(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 3, 4, 5, 6, 7, 891011000, time.UTC)
	full := projections.Transaction{ID: "0193A5F2-7C1D-7E4B-9A3F-1234567890ab", ClientID: "client-1", Type: projections.TypeWin,
		Amount: -1234567890123, Currency: "EUR", Scale: 2, Status: projections.StatusSettled, CreatedAt: at,
		Provider: "prov", Game: "slot", PlayerID: "p1", RoundID: "r1", ExternalTxID: "w1", ReferenceTx: "b1",
		Seq: 1 << 40, Sub: 3, Position: 1<<40 + 7, BalanceAfter: -5, HasBalanceAfter: true, Promo: true,
		OpenBets: 2, RolledBets: 1, Wins: 99, Closed: true, Jackpot: 12, CampaignID: "c", RewardID: "rw"}
	bare := projections.Transaction{ID: "00000000-0000-0000-0000-000000000000", ClientID: "c", Type: projections.TypeDeposit,
		Currency: "BTC", Scale: 8, Status: projections.StatusPending, CreatedAt: time.Unix(0, 0).UTC()}
	result := full
	result.Type, result.Status = projections.TypeGameResult, projections.StatusRolledBack
	for _, tc := range []struct {
		name string
		t    projections.Transaction
	}{{"every field", full}, {"no optional field", bare}, {"a game result", result}} {
		t.Run(tc.name, func(t *testing.T) {
			status := storedStatus(&tc.t)
			typed, err := appendTxRow(nil, &tc.t, status)
			if err != nil {
				t.Fatal(err)
			}
			generic, err := io.ReadAll(bincopy.NewReader(1, func(int) []any { return txRowArgs(&tc.t, status) }, txRowTypes))
			if err != nil {
				t.Fatal(err)
			}
			// The generic reader adds the format's header and trailer.
			if !bytes.Contains(generic, typed) || len(generic)-len(typed) != 19+2 {
				t.Fatalf("typed row\n%x\ngeneric copy\n%x", typed, generic)
			}
			if len(typed) < 100 {
				t.Fatalf("a %d-byte row for every field", len(typed))
			}
		})
	}
	if len(txRowColumns) != len(txRowTypes) || len(txRowArgs(&full, full.Status)) != len(txRowColumns) {
		t.Fatalf("%d columns, %d types, %d values", len(txRowColumns), len(txRowTypes), len(txRowArgs(&full, full.Status)))
	}
	// Both refuse what is no uuid, and a sub that is no smallint.
	for _, bad := range []projections.Transaction{
		{ID: "not-a-uuid", Sub: 1}, {ID: "0193a5f2-7c1d-7e4b-9a3f-1234567890ag"}, {ID: "0193a5f2x7c1d-7e4b-9a3f-1234567890ab"},
		{ID: full.ID, Sub: 1 << 16},
	} {
		if _, err := appendTxRow(nil, &bad, bad.Status); err == nil {
			t.Errorf("appendTxRow took %+v", bad)
		}
		if _, err := io.ReadAll(bincopy.NewReader(1, func(int) []any { return txRowArgs(&bad, bad.Status) }, txRowTypes)); err == nil {
			t.Errorf("the generic path took %+v", bad)
		}
	}
}

// A thousand history rows through each path, as a rebuild copies them.
func BenchmarkAppend(b *testing.B) {
	tx := &projections.Transaction{ID: "0193a5f2-7c1d-7e4b-9a3f-1234567890ab", ClientID: "client-1", Type: projections.TypeBet,
		Amount: 100, Currency: "EUR", Scale: 2, Status: projections.StatusSettled, CreatedAt: time.Now(), Provider: "prov",
		Game: "slot", PlayerID: "p1", RoundID: "r1", ExternalTxID: "b1", Seq: 12345, Position: 12345, HasBalanceAfter: true}
	const rows = 1000
	b.Run("typed", func(b *testing.B) {
		for b.Loop() {
			r := bincopy.NewRows(rows, func(buf []byte, _ int) ([]byte, error) { return appendTxRow(buf, tx, tx.Status) })
			if _, err := io.Copy(io.Discard, r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("generic", func(b *testing.B) {
		for b.Loop() {
			r := bincopy.NewReader(rows, func(int) []any { return txRowArgs(tx, tx.Status) }, txRowTypes)
			if _, err := io.Copy(io.Discard, r); err != nil {
				b.Fatal(err)
			}
		}
	})
}
