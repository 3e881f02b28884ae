package commands_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/commands/ledgertest"
	"github.com/pitboss/pitboss/domain"
)

func TestMemoryLedgerContract(t *testing.T) {
	ledgertest.Run(t, func(t *testing.T) commands.Ledger {
		l := commands.NewMemoryLedger()
		t.Cleanup(func() { checkChain(t, l) })
		return l
	})
}

// checkChain audits the memory ledger's hash chain as an auditor would
// audit the Postgres one: positions 1..n, each event linked to the hash of
// the one before, each hash sha256(prev || body), each body the event.
func checkChain(t testing.TB, l *commands.MemoryLedger) {
	t.Helper()
	prev := domain.GenesisHash
	for i, s := range l.Events() {
		pos := int64(i + 1)
		if s.Event.Position != pos {
			t.Fatalf("event %d at position %d: a hole in the chain", pos, s.Event.Position)
		}
		if !bytes.Equal(s.PrevHash, prev) {
			t.Fatalf("position %d: prev hash does not match the hash of %d", pos, pos-1)
		}
		if got := domain.ChainHash(prev, s.Body); !bytes.Equal(got, s.Hash) {
			t.Fatalf("position %d: hash does not match sha256(prev || body)", pos)
		}
		ev, err := domain.DecodeBody(s.Body)
		if err != nil {
			t.Fatalf("position %d: %v", pos, err)
		}
		if again, err := domain.EncodeBody(s.Event); err != nil || !bytes.Equal(again, s.Body) {
			t.Fatalf("position %d: the stored event does not encode to its body (%v)", pos, err)
		}
		if ev.Position != pos || ev.StreamID != s.Event.StreamID || ev.Version != s.Event.Version {
			t.Fatalf("position %d: body says position %d, stream %s v%d; event says %s v%d",
				pos, ev.Position, ev.StreamID, ev.Version, s.Event.StreamID, s.Event.Version)
		}
		prev = s.Hash
	}
}

// TestMemoryLedgerKeepsItsOwnCopies: what a caller does with an outcome or
// with Events cannot change the stored events.
func TestMemoryLedgerKeepsItsOwnCopies(t *testing.T) {
	l := commands.NewMemoryLedger()
	h := commands.NewHandler(l, ledgertest.WallClock{}, ledgertest.UUIDs{})
	c := domain.ClientTx{Client: "c1", Player: "p1", ExternalTxID: "dep-1", Currency: eur}
	if _, err := h.Deposit(context.Background(), c, money(t, "10.00", eur)); err != nil {
		t.Fatal(err)
	}
	events := l.Events()
	events[0].Event.Data.Postings[0].Amount = "999.00"
	events[0].Hash[0] ^= 0xff
	checkChain(t, l)
	if got := l.Events()[0].Event.Data.Postings[0].Amount; got == "999.00" {
		t.Error("changing a returned event changed the stored one")
	}
}
