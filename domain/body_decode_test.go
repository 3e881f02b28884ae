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
				Jackpot: "0.00", CampaignID: "c-1", RewardID: "rw-1", ExpiresAt: "2026-11-25T03:00:00Z", Reason: "promo credit", Postings: []Posting{}},
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

// oddBodies are bodies the ledger never writes but a decoder must not get
// wrong: escapes and non-ASCII text, lone surrogates, nulls, another key
// spelling, numbers with a leading zero or a fraction, trailing bytes, bad
// UTF-8, repeated keys, truncations. They seeded the differential fuzz test
// of the read store's own decoder, which DecodeBody replaced.
var oddBodies = []string{
	`{"position":3,"id":"00000000-0000-4000-8000-000000000003","type":"wallet.bet_placed.v1","stream_id":"player:c:p:EUR","version":2,"occurred_at":"2025-03-01T10:00:00.000004Z","data":{"client_id":"c","player_id":"p","provider":"x","currency":"EUR","amount":"1.00","round_closed":true,"promo":true,"postings":[{"account":"player:c:p:EUR","amount":"-1.00"},{"account":"house:c:x:EUR","amount":"1.00"}]},"meta":{"request_id":"r","correlation_id":"c","actor":"a"}}`,
	`{"position":1,"id":"a","type":"t","stream_id":"s","version":1,"occurred_at":"2025-03-01T10:00:00Z","data":{"client_id":"caf\u00e9 \ud83d\ude00 \\ \" \/ \b\f\n\r\t","currency":"EUR","amount":"0","postings":[]},"meta":{}}`,
	`{"position":1,"id":"a","type":"t","stream_id":"s","version":1,"occurred_at":"2025-03-01T10:00:00Z","data":{"reason":"lone \ud800 and \udc00\u0041","postings":null},"meta":{}}`,
	`{"Position":1,"id":"a","occurred_at":"2025-03-01T10:00:00Z","data":{},"meta":{}}`,
	`{"position":01,"occurred_at":"2025-03-01T10:00:00Z"}`,
	`{"position":1.5,"occurred_at":"2025-03-01T10:00:00Z"}`,
	`{"position":1,"occurred_at":"2025-03-01T10:00:00Z"} x`,
	`{"position":1,"occurred_at":"yesterday"}`,
	"{\"id\":\"\xff\",\"occurred_at\":\"2025-03-01T10:00:00Z\"}",
	`{"id":"a","id":"b","occurred_at":"2025-03-01T10:00:00Z","data":{"postings":[{"account":"x"}],"postings":[{"amount":"1"}]}}`,
	`[]`, ``, `{`, `{"position":`, `{"id":"\u12"}`,
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
	for _, s := range oddBodies {
		f.Add([]byte(s))
	}
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
