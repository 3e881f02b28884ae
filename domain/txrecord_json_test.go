package domain

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

func txRecordSamples() []TxRecord {
	at := time.Date(2026, 11, 27, 5, 6, 7, 890123456, time.UTC)
	return []TxRecord{
		{},
		{Key: "game|c|p|tx-1", Kind: TxBet, Account: "player:c:p-1:EUR", Currency: "EUR", Amount: 150, CreatedAt: at},
		{Key: "round|c|p|r", Kind: TxRound, Account: "player:c:p-1:EUR", PlayerID: "p-1", Currency: "EUR",
			Amount: -1, RoundID: "r", RolledBack: true, OpenBets: 3, RolledBets: 1, Closed: true, Wins: 2,
			Settles: "game|c|p|tx-0", EventID: "0b9c6a3e-6f7b-4f8e-9a51-0c8e1f2d3a4b", Position: math.MaxInt64,
			BalanceAfter: "12.50", Request: map[string]string{"amount": "1.50", "game": "g", "a": "", "z": "last"},
			CreatedAt: at},
		{Key: `quote " backslash \ <tag> & amp`, Kind: "x\n\t\r", Account: "ünïcödé", Currency: "\u2028\u2029",
			Amount: math.MinInt64, Request: map[string]string{"\x00": "\x7f", "<": ">", "é": "\xff\xfe"},
			CreatedAt: at.In(time.FixedZone("", -3*3600-30*60))},
		{Key: "k", Request: map[string]string{}, CreatedAt: time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Key: "k", CreatedAt: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)},
		{Key: "k", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
		{Key: "k", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 100000000, time.UTC)},
	}
}

// Alphabets of randomTxRecord's strings: what the ledger writes, and
// that with what JSON escapes.
const (
	plainAlphabet = "abcXYZ019-_|:.,;+ "
	wildAlphabet  = plainAlphabet + "\"\\<>&\n\x01\x7fé€\u2028"
)

// randomTxRecord draws every field, strings from alphabet.
func randomTxRecord(r *rand.Rand, alphabet string) TxRecord {
	runes := []rune(alphabet)
	str := func() string {
		if r.IntN(3) == 0 {
			return ""
		}
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteRune(runes[r.IntN(len(runes))])
		}
		return b.String()
	}
	num := func() int64 {
		switch r.IntN(4) {
		case 0:
			return 0
		case 1:
			return r.Int64N(1000) - 500
		default:
			return int64(r.Uint64())
		}
	}
	rec := TxRecord{Key: str(), Kind: TxKind(str()), Account: AccountID(str()), PlayerID: str(), Currency: str(),
		Amount: num(), RoundID: str(), RolledBack: r.IntN(2) == 0, OpenBets: num(), RolledBets: num(),
		Closed: r.IntN(2) == 0, Wins: num(), Settles: str(), EventID: str(), Position: num(), BalanceAfter: str(),
		CreatedAt: time.Unix(r.Int64N(1<<35), r.Int64N(1e9)).UTC()}
	if n := r.IntN(4); n > 0 {
		rec.Request = map[string]string{}
		for range n {
			rec.Request[str()] = str()
		}
	}
	return rec
}

// TestAppendTxRecordJSONMatchesMarshal: the same bytes as encoding/json, on
// chosen and on 5,000 random records.
func TestAppendTxRecordJSONMatchesMarshal(t *testing.T) {
	recs := txRecordSamples()
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 5000 {
		recs = append(recs, randomTxRecord(r, []string{plainAlphabet, wildAlphabet}[i%2]))
	}
	for i, rec := range recs {
		want, err := json.Marshal(&rec)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		got, err := AppendTxRecordJSON([]byte("prefix"), &rec)
		if err != nil || string(got) != "prefix"+string(want) {
			t.Fatalf("record %d: %s, %v\nwant prefix%s", i, got, err, want)
		}
	}
}

func TestAppendTxRecordJSONYearOutOfRange(t *testing.T) {
	for _, year := range []int{-1, 10000} {
		rec := TxRecord{Key: "k", CreatedAt: time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC)}
		_, want := json.Marshal(&rec)
		got, err := AppendTxRecordJSON(nil, &rec)
		if want == nil || err == nil || err.Error() != want.Error() || len(got) != 0 {
			t.Errorf("year %d: %q, %v; want encoding/json's error %v", year, got, err, want)
		}
	}
}

// TestDecodeTxRecordRoundTrip: what AppendTxRecordJSON writes (UTC times)
// is read back whole by the fast path.
func TestDecodeTxRecordRoundTrip(t *testing.T) {
	type sample struct {
		rec   TxRecord
		plain bool // only strings of plainAlphabet: the fast path must read it
	}
	var recs []sample
	for i, rec := range txRecordSamples() {
		recs = append(recs, sample{rec, i != 3})
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 5000 {
		recs = append(recs, sample{randomTxRecord(r, []string{plainAlphabet, wildAlphabet}[i%2]), i%2 == 0})
	}
	for i, sm := range recs {
		b, err := AppendTxRecordJSON(nil, &sm.rec)
		if err != nil {
			t.Fatal(err)
		}
		var got TxRecord
		if err := DecodeTxRecord(b, &got); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		var want TxRecord
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if !sameTxRecord(got, want) {
			t.Fatalf("record %d: %+v\nwant %+v", i, got, want)
		}
		var x TxRecord
		if fast := decodeTxRecordCanonical(b, &x); sm.plain && !fast {
			t.Errorf("record %d, of plain strings, missed the fast path: %s", i, b)
		}
	}
}

// sameTxRecord compares two records field by field, times by instant and
// offset.
func sameTxRecord(a, b TxRecord) bool {
	_, ao := a.CreatedAt.Zone()
	_, bo := b.CreatedAt.Zone()
	if !a.CreatedAt.Equal(b.CreatedAt) || ao != bo {
		return false
	}
	a.CreatedAt, b.CreatedAt = time.Time{}, time.Time{}
	return reflect.DeepEqual(a, b)
}

// FuzzDecodeTxRecord: whatever the fast path accepts, encoding/json reads
// to the same record.
func FuzzDecodeTxRecord(f *testing.F) {
	for _, rec := range txRecordSamples() {
		b, err := json.Marshal(&rec)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"key":"k","key":"k"}`))
	f.Add([]byte(`{"created_at":"2026-01-02T03:04:05.5Z","request":{}}`))
	f.Add([]byte(`{"amount":01}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var fast TxRecord
		if !decodeTxRecordCanonical(b, &fast) {
			return
		}
		var want TxRecord
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatalf("fast path accepted %q, encoding/json refuses it: %v", b, err)
		}
		if !sameTxRecord(fast, want) {
			t.Fatalf("%q: fast %+v, encoding/json %+v", b, fast, want)
		}
	})
}

// BenchmarkTxRecordJSON: a bet's record encoded and decoded, by the fast
// paths and by encoding/json.
func BenchmarkTxRecordJSON(b *testing.B) {
	rec := TxRecord{Key: "game|acme|prov-a|tx-000123456", Kind: TxBet, Account: "player:acme:p-17:EUR", PlayerID: "p-17",
		Currency: "EUR", Amount: 150, RoundID: "r-99", EventID: "0b9c6a3e-6f7b-4f8e-9a51-0c8e1f2d3a4b", Position: 123456,
		BalanceAfter: "98.50", Request: map[string]string{"amount": "1.50", "game": "slot-2", "round_id": "r-99",
			"session": "s-1", "player_id": "p-17"}, CreatedAt: time.Date(2026, 11, 27, 5, 6, 7, 890123000, time.UTC)}
	raw, _ := json.Marshal(&rec)
	b.Run("encode/fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := AppendTxRecordJSON(nil, &rec); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode/encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(&rec); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode/fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var r TxRecord
			if err := DecodeTxRecord(raw, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode/encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var r TxRecord
			if err := json.Unmarshal(raw, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
}
