package domain

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"
)

func canonicalEvents() []Event {
	at := time.Date(2026, 11, 25, 2, 30, 0, 123456789, time.UTC)
	w := AccountID("player:acme:p-17:EUR")
	h := AccountID("house:acme:EUR")
	return []Event{
		{ID: "0193a0b4-7c1e-7d2a-9f00-0123456789ab", Type: EventBetPlaced, StreamID: w, Version: 3, Position: 41,
			OccurredAt: at, Data: EventData{ClientID: "acme", PlayerID: "p-17", Provider: "pragmatic", GameID: "sweet-bonanza",
				RoundID: "r1", SessionID: "s-1", ExternalTxID: "b1", Currency: "EUR", Amount: "10.00", BalanceAfter: "90.00",
				Direction: FromPlayer, Postings: []Posting{{Account: w, Amount: "-10.00"}, {Account: h, Amount: "10.00"}}},
			Meta: Metadata{RequestID: "req-1", Actor: "provider:pragmatic"}},
		{ID: "e2", Type: EventWinCredited, StreamID: w, Version: math.MaxInt64, Position: math.MinInt64, OccurredAt: at,
			Data: EventData{ClientID: "acme", ReferenceTx: "b1", Currency: "EUR", Amount: "0.00", RoundClosed: true, Promo: true,
				ExpiresAt: "2026-11-25T03:00:00Z", Reason: "promo credit", Postings: []Posting{}},
			Meta: Metadata{CorrelationID: "c-1"}},
		{ID: "e3", Type: EventDeposited, StreamID: w, OccurredAt: at, Data: EventData{ClientID: "acme", Currency: "EUR",
			Amount: "5"}},
	}
}

// The fast path must be the path taken for what the ledger writes;
// otherwise FuzzDecodeCanonical would pass without testing anything.
func TestDecodeCanonicalTakesWhatEncodeBodyWrites(t *testing.T) {
	for _, e := range canonicalEvents() {
		b, err := EncodeBody(e)
		if err != nil {
			t.Fatal(err)
		}
		var fast, slow body
		if !decodeCanonical(b, &fast) {
			t.Fatalf("fast path refused a canonical body:\n%s", b)
		}
		if err := json.Unmarshal(b, &slow); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("fast %+v\nslow %+v", fast, slow)
		}
	}
}

func TestDecodeCanonicalRefuses(t *testing.T) {
	tests := []struct{ name, body string }{
		{"white space", `{ "id":"x"}`},
		{"escape", `{"id":"a\"b"}`},
		{"non-ASCII", `{"id":"für"}`},
		{"null", `{"id":null}`},
		{"other case", `{"ID":"x"}`},
		{"unknown key", `{"idx":"x"}`},
		{"duplicate key", `{"id":"x","id":"y"}`},
		{"duplicate postings", `{"data":{"postings":[{"account":"a"}],"postings":[{"amount":"1"}]}}`},
		{"fraction", `{"position":1.0}`},
		{"exponent", `{"position":1e3}`},
		{"leading zero", `{"position":01}`},
		{"overflow", `{"position":9223372036854775808}`},
		{"negative overflow", `{"position":-9223372036854775809}`},
		{"lone minus", `{"position":-}`},
		{"trailing bytes", `{"id":"x"} `},
		{"unterminated", `{"id":"x"`},
		{"string for int", `{"version":"1"}`},
		{"int for bool", `{"data":{"promo":1}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var x body
			if decodeCanonical([]byte(tt.body), &x) {
				t.Fatalf("fast path accepted %s as %+v", tt.body, x)
			}
		})
	}
}

// FuzzDecodeCanonical is the fast path's contract: whatever it accepts,
// encoding/json accepts too and decodes to the same value.
func FuzzDecodeCanonical(f *testing.F) {
	for _, e := range canonicalEvents() {
		b, err := EncodeBody(e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"position":-9223372036854775808,"version":0}`))
	f.Add([]byte(`{"data":{},"meta":{}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var fast body
		if !decodeCanonical(b, &fast) {
			return
		}
		var slow body
		if err := json.Unmarshal(b, &slow); err != nil {
			t.Fatalf("fast path accepted what encoding/json refuses (%v):\n%s", err, b)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("fast path and encoding/json differ on\n%s\nfast %+v\nslow %+v", b, fast, slow)
		}
	})
}

func BenchmarkDecodeBody(b *testing.B) {
	raw, err := EncodeBody(canonicalEvents()[0])
	if err != nil {
		b.Fatal(err)
	}
	b.Run("canonical", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeBody(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var x body
			if err := json.Unmarshal(raw, &x); err != nil {
				b.Fatal(err)
			}
		}
	})
}
