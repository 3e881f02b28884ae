package wallet_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/commands/ledgertest"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/wallet"
)

// commitLost is a ledger whose next commit is applied but answered with
// an error, as a connection lost during COMMIT answers the writer
// (adapters/postgres/eventstore: "otherwise its callers get the error"):
// the caller cannot tell whether it was applied. It keeps the records of
// what it committed for the core's Records.
type commitLost struct {
	*commands.MemoryLedger
	mu      sync.Mutex
	lose    bool
	records map[string]domain.TxRecord
}

func (l *commitLost) Execute(ctx context.Context, op commands.Operation) (commands.Outcome, error) {
	out, err := l.MemoryLedger.Execute(ctx, op)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil && out.Event != nil {
		l.records[out.Record.Key] = out.Record
		if l.lose {
			l.lose = false
			return commands.Outcome{}, errors.New("commit: unexpected EOF (connection lost; applied or not unknown)")
		}
	}
	return out, err
}

func (l *commitLost) TxRecord(_ context.Context, key string) (domain.TxRecord, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	rec, ok := l.records[key]
	return rec, ok, nil
}

// pam is an operator's wallet that books each movement once per id.
type pam struct {
	mu        sync.Mutex
	balance   int64
	debits    map[string]int64
	cancelled map[string]bool
}

func (p *pam) Session(context.Context, wallet.OperatorPlayer) (wallet.OperatorSession, error) {
	return wallet.OperatorSession{}, wallet.ErrNoSessionCall
}

func (p *pam) Balance(_ context.Context, pl wallet.OperatorPlayer) (domain.Money, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return domain.FromMinor(p.balance, pl.Currency), nil
}

func (p *pam) Move(_ context.Context, m wallet.OperatorMove) (wallet.OperatorAnswer, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch m.Kind {
	case wallet.Debit:
		if _, ok := p.debits[m.ID]; !ok {
			p.debits[m.ID] = m.Amount.Minor()
			p.balance -= m.Amount.Minor()
		}
	case wallet.Cancel:
		amount, ok := p.debits[m.Ref]
		if !ok {
			return wallet.OperatorAnswer{}, &wallet.OperatorRefusal{Verdict: wallet.UnknownTransaction, Code: "NOT_FOUND"}
		}
		if !p.cancelled[m.Ref] {
			p.cancelled[m.Ref] = true
			p.balance += amount
		}
	default:
		return wallet.OperatorAnswer{}, errors.New("not in this test")
	}
	return wallet.OperatorAnswer{TxID: "op-" + m.ID, Balance: domain.FromMinor(p.balance, m.Currency)}, nil
}

func (p *pam) Lookup(_ context.Context, m wallet.OperatorMove) (wallet.OperatorAnswer, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.debits[m.ID]
	return wallet.OperatorAnswer{TxID: "op-" + m.ID}, ok, nil
}

type operators struct{ w wallet.OperatorWallet }

func (o operators) Operator(context.Context, string) (wallet.OperatorWallet, error) { return o.w, nil }

// queue is a follow-up queue in memory.
type queue struct {
	mu   sync.Mutex
	rows []wallet.FollowUpRecord
}

func (q *queue) Enqueue(_ context.Context, f wallet.FollowUp) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, r := range q.rows {
		if r.ClientID == f.ClientID && r.Action == f.Action && r.Call.MoveID == f.Call.MoveID {
			return nil
		}
	}
	f.ID = int64(len(q.rows) + 1)
	q.rows = append(q.rows, wallet.FollowUpRecord{FollowUp: f})
	return nil
}

func (q *queue) Voided(_ context.Context, client, moveID string) (bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, r := range q.rows {
		if r.ClientID == client && r.Action == wallet.ActionCancel && r.Call.MoveID == moveID {
			return true, nil
		}
	}
	return false, nil
}

func (q *queue) Claim(_ context.Context, now time.Time, _ time.Duration, limit int) ([]wallet.FollowUp, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var due []wallet.FollowUp
	for _, r := range q.rows {
		if r.DoneAt == nil && !r.NextAt.After(now) && len(due) < limit {
			due = append(due, r.FollowUp)
		}
	}
	return due, nil
}

func (q *queue) Finish(_ context.Context, id int64, outcome string, at time.Time) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.rows[id-1].Outcome, q.rows[id-1].DoneAt = outcome, &at
	return nil
}

func (q *queue) Retry(_ context.Context, id int64, next time.Time, lastErr string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.rows[id-1].Attempts++
	q.rows[id-1].NextAt, q.rows[id-1].LastError = next, lastErr
	return nil
}

// TestVoidedDebitTheLedgerBooked: a seamless bet whose debit the operator
// took, and whose booking the ledger applied but answered with an error
// (a connection lost during COMMIT), is voided by the core — and the
// provider's retry is then answered from the ledger: the bet stands. The
// cancel follow-up must then leave the operator's debit alone: cancelling
// it would give the player back a bet the ledger (and the provider) hold.
func TestVoidedDebitTheLedgerBooked(t *testing.T) {
	eur, _ := domain.ParseCurrency("EUR")
	ledger := &commitLost{MemoryLedger: commands.NewMemoryLedger(), records: map[string]domain.TxRecord{}}
	op := &pam{balance: 10_000, debits: map[string]int64{}, cancelled: map[string]bool{}}
	q := &queue{}
	gs := gateway.GameSession{ID: "s9", ClientID: "c", PlayerID: "p", ProviderID: "rival", GameID: "other",
		Currency: "EUR", ExpiresAt: time.Now().Add(time.Hour), OperatorToken: "tok"}
	cat := catalog{providers: map[string]gateway.Provider{"rival": {ID: "rival", Enabled: true}},
		games: map[string]gateway.Game{"other": {ID: "other", ProviderID: "rival", Code: "rival_slot"}}}
	core := wallet.New(wallet.Deps{Catalog: cat, Sessions: sessions{byID: map[string]gateway.GameSession{gs.ID: gs}},
		Ledger: commands.NewHandler(ledger, ledgertest.WallClock{}, ledgertest.UUIDs{}), Balances: ledger, Records: ledger,
		Operators: operators{op}, FollowUps: q, FollowUpGrace: time.Nanosecond})
	s := wallet.Session{GameSession: gs, Cur: eur}
	bet := wallet.Tx{ID: "b1", Round: "r1"}
	ctx := context.Background()

	ledger.lose = true
	if _, err := core.Bet(ctx, s, bet, domain.FromMinor(1_000, eur)); err == nil {
		t.Fatal("the first attempt answered success; want the lost commit's error")
	}
	if v, _ := q.Voided(ctx, "c", "b1"); !v {
		t.Fatal("the bet was not voided: this test no longer reproduces the case")
	}
	res, err := core.Bet(ctx, s, bet, domain.FromMinor(1_000, eur))
	if err != nil || !res.Replayed {
		t.Fatalf("the provider's retry: %+v, %v; want the booked bet replayed", res, err)
	}
	time.Sleep(time.Millisecond) // past the grace of a nanosecond
	n, err := wallet.FollowUpRunner{Core: core, Queue: q}.Once(ctx)
	if err != nil || n != 1 {
		t.Fatalf("follow-ups settled: %d, %v", n, err)
	}
	if op.cancelled["b1"] {
		t.Fatalf("the operator's debit of b1 was cancelled while the ledger holds the bet (outcome %q): the player "+
			"has the stake back at the operator and lost it in the ledger", q.rows[0].Outcome)
	}
	if bal, _ := ledger.Account(ctx, domain.PlayerWallet("c", "p", eur)); bal.Balance != op.balance {
		t.Fatalf("the ledger's mirror %d, the operator %d", bal.Balance, op.balance)
	}
	if got := q.rows[0].Outcome; got != wallet.OutcomeBookedInLedger {
		t.Fatalf("outcome %q, want %q", got, wallet.OutcomeBookedInLedger)
	}
}
