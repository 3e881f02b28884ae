package domain_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/pitboss/pitboss/domain"
)

func TestEventTypeNamesAreFrozen(t *testing.T) {
	// Consumers key on these strings: a rename re-routes or drops events.
	want := map[domain.EventType]string{
		domain.EventDeposited:        "wallet.deposited.v1",
		domain.EventWithdrawn:        "wallet.withdrawn.v1",
		domain.EventTransferred:      "wallet.transferred.v1",
		domain.EventAdjusted:         "wallet.adjusted.v1",
		domain.EventBalanceSynced:    "wallet.balance_synced.v1",
		domain.EventBetPlaced:        "wallet.bet_placed.v1",
		domain.EventWinCredited:      "wallet.win_credited.v1",
		domain.EventBetRolledBack:    "wallet.bet_rolled_back.v1",
		domain.EventWinReversed:      "wallet.win_reversed.v1",
		domain.EventRollbackRecorded: "wallet.rollback_recorded.v1",
		domain.EventGameLaunched:     "game.launched.v1",
		domain.EventRoundClosed:      "wallet.round_closed.v1",
	}
	if len(want) != 12 {
		t.Fatalf("two event types share a name: %v", want)
	}
	for typ, name := range want {
		if string(typ) != name {
			t.Errorf("event type %q, want %q", typ, name)
		}
	}
}

func fullEvent() domain.Event {
	return domain.Event{
		ID: "ev-1", Type: domain.EventBetPlaced, StreamID: wallet, Version: 3, Position: 41,
		OccurredAt: time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC),
		Data: domain.EventData{ClientID: client, PlayerID: player, Provider: provider, GameID: "sweet-bonanza",
			RoundID: "r1", SessionID: "s-1", ExternalTxID: "b1", ReferenceTx: "b0", Currency: "EUR", Amount: "10.00",
			BalanceAfter: "90.00", Direction: domain.ToPlayer, RoundClosed: true, Promo: true,
			ExpiresAt: "2025-03-01T13:00:00Z", Reason: "<why & how>",
			Postings: []domain.Posting{post(wallet, "-10.00"), post(house, "10.00")}},
		Meta: domain.Metadata{RequestID: "req-1", CorrelationID: "corr-1", Actor: "provider:pragmatic"},
	}
}

// TestEncodeBodyIsCanonical pins the hashed bytes. Changing them breaks
// verification of every exported chain: it needs a new body version, not
// an edit of this golden string.
func TestEncodeBodyIsCanonical(t *testing.T) {
	tests := []struct {
		name string
		e    domain.Event
		want string
	}{
		{name: "every field", e: fullEvent(),
			want: `{"position":41,"id":"ev-1","type":"wallet.bet_placed.v1","stream_id":"player:acme:p-17:EUR","version":3,` +
				`"occurred_at":"2025-03-01T12:00:00.123456789Z","data":{"client_id":"acme","player_id":"p-17","provider":"pragmatic",` +
				`"game_id":"sweet-bonanza","round_id":"r1","session_id":"s-1","external_tx_id":"b1","reference_tx_id":"b0",` +
				`"currency":"EUR","amount":"10.00","balance_after":"90.00","direction":"to_player","round_closed":true,"promo":true,` +
				`"expires_at":"2025-03-01T13:00:00Z","reason":"\u003cwhy \u0026 how\u003e","postings":[{"account":"player:acme:p-17:EUR","amount":"-10.00"},` +
				`{"account":"house:acme:pragmatic:EUR","amount":"10.00"}]},` +
				`"meta":{"request_id":"req-1","correlation_id":"corr-1","actor":"provider:pragmatic"}}`},
		{name: "free-bet ids and a jackpot part follow promo",
			e: domain.Event{ID: "ev-3", Type: domain.EventWinCredited, StreamID: wallet, Version: 2, Position: 2,
				OccurredAt: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC),
				Data: domain.EventData{ClientID: client, Currency: "EUR", Amount: "12.00", Promo: true, Jackpot: "10.00",
					CampaignID: "c-1", RewardID: "rw-1", Postings: []domain.Posting{}}},
			want: `{"position":2,"id":"ev-3","type":"wallet.win_credited.v1","stream_id":"player:acme:p-17:EUR","version":2,` +
				`"occurred_at":"2025-03-01T12:00:00Z","data":{"client_id":"acme","currency":"EUR","amount":"12.00","promo":true,` +
				`"jackpot":"10.00","campaign_id":"c-1","reward_id":"rw-1","postings":[]},"meta":{}}`},
		{name: "empty optional fields are left out",
			e: domain.Event{ID: "ev-2", Type: domain.EventGameLaunched, StreamID: wallet, Version: 1, Position: 1,
				OccurredAt: time.Date(2025, 3, 1, 13, 0, 0, 0, time.FixedZone("CET", 3600)),
				Data:       domain.EventData{ClientID: client, Currency: "EUR", Amount: "0.00", Postings: []domain.Posting{}}},
			want: `{"position":1,"id":"ev-2","type":"game.launched.v1","stream_id":"player:acme:p-17:EUR","version":1,` +
				`"occurred_at":"2025-03-01T12:00:00Z","data":{"client_id":"acme","currency":"EUR","amount":"0.00","postings":[]},"meta":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := domain.EncodeBody(tt.e)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("body =\n%s\nwant\n%s", b, tt.want)
			}
		})
	}
}

func TestEncodeBodyIgnoresTimeZoneAndMonotonicClock(t *testing.T) {
	now := time.Now() // carries a monotonic reading
	tests := []struct {
		name   string
		at, eq time.Time
	}{
		{name: "zone west of UTC", at: fullEvent().OccurredAt.In(time.FixedZone("X", -7*3600)), eq: fullEvent().OccurredAt},
		{name: "zone east of UTC", at: fullEvent().OccurredAt.In(time.FixedZone("Y", 13*3600)), eq: fullEvent().OccurredAt},
		{name: "monotonic reading", at: now, eq: now.Round(0).UTC()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := fullEvent(), fullEvent()
			a.OccurredAt, b.OccurredAt = tt.at, tt.eq
			ba, err := domain.EncodeBody(a)
			if err != nil {
				t.Fatal(err)
			}
			bb, err := domain.EncodeBody(b)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(ba, bb) {
				t.Errorf("the same instant encodes differently:\n%s\n%s", ba, bb)
			}
		})
	}
}

func TestEncodeDecodeBodyRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		e    domain.Event
	}{
		{name: "every field", e: fullEvent()},
		{name: "zero event", e: domain.Event{OccurredAt: time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)}},
		{name: "no postings", e: func() domain.Event { e := fullEvent(); e.Data.Postings = []domain.Posting{}; return e }()},
		{name: "nil postings", e: func() domain.Event { e := fullEvent(); e.Data.Postings = nil; return e }()},
		{name: "non-UTC time", e: func() domain.Event {
			e := fullEvent()
			e.OccurredAt = e.OccurredAt.In(time.FixedZone("NPT", 5*3600+45*60))
			return e
		}()},
		{name: "unicode and quotes", e: func() domain.Event {
			e := fullEvent()
			e.Data.Reason, e.Meta.Actor = "Gutschrift für \"Spieler\" \u2028 ✓", "ops\\bob"
			return e
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := domain.EncodeBody(tt.e)
			if err != nil {
				t.Fatal(err)
			}
			got, err := domain.DecodeBody(b)
			if err != nil {
				t.Fatal(err)
			}
			assertSameEvent(t, got, tt.e)
			again, err := domain.EncodeBody(got)
			if err != nil || !bytes.Equal(again, b) {
				t.Errorf("re-encoding differs (%v):\n%s\n%s", err, again, b)
			}
		})
	}
}

// assertSameEvent compares events with the instant of OccurredAt, since
// the body keeps the instant and not the zone.
func assertSameEvent(t testing.TB, got, want domain.Event) {
	t.Helper()
	if !got.OccurredAt.Equal(want.OccurredAt) || got.OccurredAt.Location() != time.UTC {
		t.Errorf("occurred_at = %v, want %v in UTC", got.OccurredAt, want.OccurredAt)
	}
	got.OccurredAt, want.OccurredAt = time.Time{}, time.Time{}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decoded =\n%+v\nwant\n%+v", got, want)
	}
}

func TestDecodeBodyRefusesBrokenBodies(t *testing.T) {
	for _, b := range []string{
		``,
		`{`,
		`[]`,
		`{"occurred_at":"yesterday"}`,
		`{"occurred_at":""}`,
		`{}`,
		`{"version":"three","occurred_at":"2025-03-01T12:00:00Z"}`,
	} {
		if _, err := domain.DecodeBody([]byte(b)); err == nil {
			t.Errorf("DecodeBody(%q) accepted", b)
		}
	}
}

func TestChainHash(t *testing.T) {
	if len(domain.GenesisHash) != sha256.Size || !bytes.Equal(domain.GenesisHash, make([]byte, sha256.Size)) {
		t.Fatalf("genesis hash = %x, want 32 zero bytes", domain.GenesisHash)
	}
	body := []byte(`{"id":"ev-1"}`)
	want := sha256.Sum256(append(append([]byte{}, domain.GenesisHash...), body...))
	if got := domain.ChainHash(domain.GenesisHash, body); !bytes.Equal(got, want[:]) {
		t.Errorf("ChainHash = %x, want SHA-256(prev || body) = %x", got, want)
	}
	// A known vector, so the formula is pinned independently of this code.
	const abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if got := domain.ChainHash([]byte("a"), []byte("bc")); hexOf(got) != abc {
		t.Errorf("ChainHash(a, bc) = %x, want SHA-256(\"abc\") = %s", got, abc)
	}
	if !bytes.Equal(domain.GenesisHash, make([]byte, sha256.Size)) {
		t.Error("ChainHash modified its prev argument")
	}
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

func TestHashChainDetectsTampering(t *testing.T) {
	h := given(t)
	var bodies [][]byte
	for i, d := range []decision{fund("100.00"), bet("b1", amt("10.00")), win("w1", amt("5.00"), "b1"), rollback("rb1", "w1")} {
		_, e, err := h.when(d)
		if err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
		e.Position = int64(i + 1)
		b, err := domain.EncodeBody(e)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, b)
	}
	chain := func(bodies [][]byte) [][]byte {
		prev, out := domain.GenesisHash, [][]byte{}
		for _, b := range bodies {
			prev = domain.ChainHash(prev, b)
			out = append(out, prev)
		}
		return out
	}
	orig := chain(bodies)
	tampered := append([][]byte{}, bodies...)
	tampered[1] = bytes.Replace(tampered[1], []byte(`"10.00"`), []byte(`"1.00"`), 1)
	if bytes.Equal(tampered[1], bodies[1]) {
		t.Fatal("the tampering did not change the body")
	}
	got := chain(tampered)
	if !bytes.Equal(got[0], orig[0]) {
		t.Error("an earlier link changed")
	}
	for i := 1; i < len(orig); i++ {
		if bytes.Equal(got[i], orig[i]) {
			t.Errorf("link %d did not change after body 2 was altered", i+1)
		}
	}
}

func TestEncodeBodyRefusesYearsRFC3339CannotWrite(t *testing.T) {
	tests := []struct {
		name    string
		at      time.Time
		wantErr error
	}{
		{name: "year 0", at: time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)},
		{name: "last instant of 9999", at: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)},
		{name: "year 10000", at: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), wantErr: domain.ErrInvalidArgument},
		{name: "year -1", at: time.Date(-1, 12, 31, 0, 0, 0, 0, time.UTC), wantErr: domain.ErrInvalidArgument},
		{name: "9999 local is 10000 in UTC", at: time.Date(9999, 12, 31, 23, 0, 0, 0, time.FixedZone("W", -2*3600)),
			wantErr: domain.ErrInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := fullEvent()
			e.OccurredAt = tt.at
			b, err := domain.EncodeBody(e)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			got, err := domain.DecodeBody(b)
			if err != nil {
				t.Fatalf("an encoded body does not decode: %v", err)
			}
			assertSameEvent(t, got, e)
		})
	}
}
