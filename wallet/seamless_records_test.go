package wallet_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/wallet"
)

// recordStore is TxRecords over a map, counting its reads; batchStore is
// the same store with wallet.TxRecordsBatch.
type recordStore struct {
	mu      sync.Mutex
	recs    map[string]domain.TxRecord
	singles int
	batches [][]string
}

func (r *recordStore) TxRecord(_ context.Context, key string) (domain.TxRecord, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.singles++
	rec, ok := r.recs[key]
	return rec, ok, nil
}

type batchStore struct{ *recordStore }

func (r batchStore) TxRecords(_ context.Context, keys []string) (map[string]domain.TxRecord, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batches = append(r.batches, keys)
	out := map[string]domain.TxRecord{}
	for _, k := range keys {
		if rec, ok := r.recs[k]; ok {
			out[k] = rec
		}
	}
	return out, nil
}

// movesOperator is a client's wallet counting the movements sent to it.
type movesOperator struct {
	mu    sync.Mutex
	moves []wallet.OperatorMove
}

func (o *movesOperator) Session(context.Context, wallet.OperatorPlayer) (wallet.OperatorSession, error) {
	return wallet.OperatorSession{}, wallet.ErrNoSessionCall
}

func (o *movesOperator) Balance(_ context.Context, p wallet.OperatorPlayer) (domain.Money, error) {
	return domain.FromMinor(100_00, p.Currency), nil
}

func (o *movesOperator) Move(_ context.Context, m wallet.OperatorMove) (wallet.OperatorAnswer, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.moves = append(o.moves, m)
	return wallet.OperatorAnswer{TxID: "op-" + m.ID, Balance: domain.FromMinor(100_00, m.Currency)}, nil
}

func (o *movesOperator) Lookup(context.Context, wallet.OperatorMove) (wallet.OperatorAnswer, bool, error) {
	return wallet.OperatorAnswer{}, false, wallet.ErrNoLookup
}

type oneOperator struct{ op wallet.OperatorWallet }

func (o oneOperator) Operator(context.Context, string) (wallet.OperatorWallet, error) {
	return o.op, nil
}

type noFollowUps struct{}

func (noFollowUps) Enqueue(context.Context, wallet.FollowUp) error { return nil }

func (noFollowUps) Voided(context.Context, string, string) (bool, error) { return false, nil }

// refusingLedger refuses every operation: these tests look at what is
// read and sent before the ledger books.
type refusingLedger struct{}

var errNotBooked = errors.New("not booked in this test")

func (refusingLedger) Execute(context.Context, commands.Operation) (commands.Outcome, error) {
	return commands.Outcome{}, errNotBooked
}

// TestSeamlessWinReadsItsRecordsOnce: a seamless win's checks — its own
// id not booked, the bet it names live, its round not all rolled back —
// read the three records in one batched read where the store has one, and
// decide as the three single reads do where it has not.
func TestSeamlessWinReadsItsRecordsOnce(t *testing.T) {
	t.Parallel()
	const client, provider, player = "c", "acme", "p"
	key := func(id string) string { return domain.GameTxKey(client, provider, id) }
	liveBet := domain.TxRecord{Kind: domain.TxBet, PlayerID: player, Amount: 100, RoundID: "r1"}
	tests := []struct {
		name     string
		recs     map[string]domain.TxRecord
		wantMove bool
	}{
		{"a win on a live bet", map[string]domain.TxRecord{key("b1"): liveBet,
			domain.RoundKey(client, provider, "r1"): {Kind: domain.TxRound, OpenBets: 1}}, true},
		{"a retry of a booked win", map[string]domain.TxRecord{key("b1"): liveBet, key("w1"): {Kind: domain.TxWin, PlayerID: player},
			domain.RoundKey(client, provider, "r1"): {Kind: domain.TxRound, OpenBets: 1}}, false},
		{"a win on a rolled-back bet", map[string]domain.TxRecord{key("b1"): {Kind: domain.TxBet, PlayerID: player, RolledBack: true},
			domain.RoundKey(client, provider, "r1"): {Kind: domain.TxRound, RolledBets: 1}}, false},
		{"a win in a round whose bets were all rolled back", map[string]domain.TxRecord{key("b1"): liveBet,
			domain.RoundKey(client, provider, "r1"): {Kind: domain.TxRound, RolledBets: 2}}, false},
		{"a win on an unknown bet", map[string]domain.TxRecord{}, false},
	}
	s := wallet.Session{GameSession: gateway.GameSession{ID: "s1", ClientID: client, PlayerID: player, ProviderID: provider,
		GameID: "slot", Currency: "EUR", ExpiresAt: time.Now().Add(time.Hour)}, Cur: domain.MustCurrency("EUR")}
	for _, tt := range tests {
		for _, batched := range []bool{true, false} {
			store := &recordStore{recs: tt.recs}
			var records wallet.TxRecords = store
			if batched {
				records = batchStore{store}
			}
			op := &movesOperator{}
			core := wallet.New(wallet.Deps{Catalog: catalog{}, Sessions: sessions{}, Balances: noBalances{}, Records: records,
				Ledger: commands.NewHandler(refusingLedger{}, nil, nil), Operators: oneOperator{op}, FollowUps: noFollowUps{}})
			_, err := core.Win(context.Background(), s, wallet.Tx{ID: "w1", Round: "r1"}, domain.FromMinor(50, s.Cur), "b1")
			if !errors.Is(err, errNotBooked) {
				t.Errorf("%s (batched %v): %v, want the ledger's answer", tt.name, batched, err)
			}
			if got := len(op.moves) == 1; got != tt.wantMove || len(op.moves) > 1 {
				t.Errorf("%s (batched %v): %d movements sent, want the operator asked: %v", tt.name, batched, len(op.moves), tt.wantMove)
			}
			if batched && (len(store.batches) != 1 || len(store.batches[0]) != 3 || store.singles != 0) {
				t.Errorf("%s: %d batched reads (%v) and %d single reads, want one batched read of 3 keys", tt.name,
					len(store.batches), store.batches, store.singles)
			}
			if !batched && store.singles == 0 {
				t.Errorf("%s: no single read without a batch", tt.name)
			}
		}
	}
}
