package domain

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// randomEvent draws every field of an event, strings from alphabet.
func randomEvent(r *rand.Rand, alphabet string) Event {
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
		if r.IntN(3) == 0 {
			return 0
		}
		return int64(r.Uint64())
	}
	var postings []Posting
	switch r.IntN(3) {
	case 0: // nil: "postings":null
	case 1:
		postings = []Posting{}
	default:
		for range 1 + r.IntN(4) {
			postings = append(postings, Posting{Account: AccountID(str()), Amount: str()})
		}
	}
	return Event{ID: str(), Type: EventType(str()), StreamID: AccountID(str()), Version: num(), Position: num(),
		OccurredAt: time.Unix(r.Int64N(1<<35), r.Int64N(1e9)).In(time.FixedZone("x", 3600)),
		Data: EventData{ClientID: str(), PlayerID: str(), Provider: str(), GameID: str(), RoundID: str(), SessionID: str(),
			ExternalTxID: str(), ReferenceTx: str(), Currency: str(), Amount: str(), BalanceAfter: str(), Direction: str(),
			RoundClosed: r.IntN(2) == 0, Promo: r.IntN(2) == 0, Jackpot: str(), CampaignID: str(), RewardID: str(),
			FreeBets: num(), ProviderRef: str(), OperatorTxID: str(), ExpiresAt: str(), Reason: str(), Postings: postings},
		Meta: Metadata{RequestID: str(), CorrelationID: str(), Actor: str()}}
}

// TestEncodeBodyMatchesMarshal: the hand-written encoding is encoding/json's,
// byte for byte, for the events of every decision and for random ones
// (strings with quotes, escapes, HTML characters and non-ASCII included).
func TestEncodeBodyMatchesMarshal(t *testing.T) {
	t.Parallel()
	events := canonicalEvents()
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 5000 {
		events = append(events, randomEvent(r, []string{plainAlphabet, wildAlphabet}[i%2]))
	}
	for i, e := range events {
		want, werr := marshalBody(e)
		got, err := EncodeBody(e)
		if (err != nil) != (werr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("event %d: %s (%v)\nwant %s (%v)", i, got, err, want, werr)
		}
	}
}

func FuzzEncodeBodyMatchesMarshal(f *testing.F) {
	f.Add(uint64(1), uint64(2), true)
	f.Add(uint64(7), uint64(9), false)
	f.Fuzz(func(t *testing.T, a, b uint64, wild bool) {
		alphabet := plainAlphabet
		if wild {
			alphabet = wildAlphabet
		}
		e := randomEvent(rand.New(rand.NewPCG(a, b)), alphabet)
		want, werr := marshalBody(e)
		got, err := EncodeBody(e)
		if (err != nil) != (werr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("%s (%v)\nwant %s (%v)", got, err, want, werr)
		}
	})
}
