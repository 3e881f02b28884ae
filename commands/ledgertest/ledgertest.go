// Package ledgertest is the contract of the commands.Ledger port: one suite
// that every implementation runs (commands.MemoryLedger in package
// commands, the Postgres writer in adapters/postgres), so the commands
// behave the same over each and the memory ledger can stand in for the
// database in tests.
//
// Each test gets a fresh, empty ledger from newLedger and reads its state
// through the port itself: a probe is an operation that declares what it
// wants to see, reads it in Decide and writes nothing.
package ledgertest

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
)

// Run runs the contract against the ledgers newLedger makes. newLedger is
// called once per test and must return an empty ledger that runs until
// the test ends (register its shutdown with t.Cleanup).
func Run(t *testing.T, newLedger func(t *testing.T) commands.Ledger) {
	tests := []struct {
		name string
		run  func(t *testing.T, l commands.Ledger)
	}{
		{"OperationWithoutDecide", testOperationWithoutDecide},
		{"EndedContextNeverRuns", testEndedContextNeverRuns},
		{"DecidesAgainstCommittedState", testDecidesAgainstCommittedState},
		{"PositionsFollowCommitOrder", testPositionsFollowCommitOrder},
		{"RejectionFailsOnlyItsOperation", testRejectionFailsOnlyItsOperation},
		{"PanicFailsOnlyItsOperation", testPanicFailsOnlyItsOperation},
		{"UndeclaredAccountFailsTheOperation", testUndeclaredAccountFailsTheOperation},
		{"ExistingRecordIsNeverOverwrittenBlindly", testExistingRecordIsNeverOverwrittenBlindly},
		{"RetryAnswersTheOriginal", testRetryAnswersTheOriginal},
		{"SameCallConcurrentlyMovesMoneyOnce", testSameCallConcurrentlyMovesMoneyOnce},
		{"ConcurrentBetsNeverOverdraw", testConcurrentBetsNeverOverdraw},
		{"RollbackLoadsTheRoundItNeeds", testRollbackLoadsTheRoundItNeeds},
		{"EveryCommandKeepsTheBooks", testEveryCommandKeepsTheBooks},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, newLedger(t))
		})
	}
}

var (
	eur = domain.MustCurrency("EUR")
	btc = domain.MustCurrency("BTC")
)

// WallClock is a commands.Clock that tells the real time.
type WallClock struct{}

// Now returns time.Now().
func (WallClock) Now() time.Time { return time.Now() }

// UUIDs is a commands.IDs that makes random (version 4) UUIDs, the form
// the Postgres event store requires for event ids.
type UUIDs struct{}

// NewID returns a new UUID in its canonical text form.
func (UUIDs) NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	hex.Encode(s[9:13], b[4:6])
	hex.Encode(s[14:18], b[6:8])
	hex.Encode(s[19:23], b[8:10])
	hex.Encode(s[24:], b[10:])
	s[8], s[13], s[18], s[23] = '-', '-', '-', '-'
	return string(s[:])
}

// uid returns prefix with a random suffix.
func uid(prefix string) string { return prefix + "-" + UUIDs{}.NewID()[:8] }

func money(t testing.TB, s string, c domain.Currency) domain.Money {
	t.Helper()
	m, err := domain.ParseMoney(s, c)
	if err != nil {
		t.Fatalf("money %s: %v", s, err)
	}
	return m
}

// recorder is a Ledger that remembers every event the ledger under test
// committed, so a test can audit the books without knowing the store.
type recorder struct {
	commands.Ledger
	mu     sync.Mutex
	events []domain.Event
}

func (r *recorder) Execute(ctx context.Context, op commands.Operation) (commands.Outcome, error) {
	out, err := r.Ledger.Execute(ctx, op)
	if err == nil && out.Event != nil {
		r.mu.Lock()
		r.events = append(r.events, *out.Event)
		r.mu.Unlock()
	}
	return out, err
}

func (r *recorder) committed() []domain.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// handler returns a command handler over a recorder of l.
func handler(l commands.Ledger) (*commands.Handler, *recorder) {
	rec := &recorder{Ledger: l}
	return commands.NewHandler(rec, WallClock{}, UUIDs{}), rec
}

// snapshot is committed state read through the port.
type snapshot struct {
	accounts map[domain.AccountID]domain.AccountState
	records  map[string]domain.TxRecord
}

// probe reads the committed state of accounts and records with an
// operation that writes nothing.
func probe(t testing.TB, l commands.Ledger, accounts []domain.AccountID, records ...string) snapshot {
	t.Helper()
	s := snapshot{accounts: map[domain.AccountID]domain.AccountState{}, records: map[string]domain.TxRecord{}}
	_, err := l.Execute(context.Background(), commands.Operation{Accounts: accounts, Records: records,
		Decide: func(v *domain.View) (commands.Outcome, error) {
			for _, id := range accounts {
				s.accounts[id] = v.Account(id)
			}
			for _, k := range records {
				if r, ok := v.Record(k); ok {
					s.records[k] = r
				}
			}
			return commands.Outcome{}, nil
		}})
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	return s
}

func balance(t testing.TB, l commands.Ledger, id domain.AccountID) domain.AccountState {
	t.Helper()
	return probe(t, l, []domain.AccountID{id}).accounts[id]
}

// adjust is a hand-made operation: it posts amount to wallet against the
// client's external account, on the wallet's stream, with records.
func adjust(client string, wallet domain.AccountID, amount domain.Money, records ...domain.TxRecord) commands.Operation {
	ext := domain.ExternalAccount(client, amount.Currency())
	return commands.Operation{
		Accounts: []domain.AccountID{wallet, ext},
		Records:  keysOf(records),
		Decide: func(v *domain.View) (commands.Outcome, error) {
			id := UUIDs{}.NewID()
			for i := range records {
				records[i].EventID = id
			}
			e, err := v.Apply(domain.Change{
				Event: domain.Event{ID: id, Type: domain.EventAdjusted, StreamID: wallet, OccurredAt: time.Now(),
					Data: domain.EventData{ClientID: client, Currency: amount.Currency().Code(), Amount: amount.String(),
						Postings: []domain.Posting{{Account: ext, Amount: amount.Neg().String()},
							{Account: wallet, Amount: amount.String()}}}},
				Records: records,
			})
			if err != nil {
				return commands.Outcome{}, err
			}
			out := commands.Outcome{Event: &e}
			if len(records) > 0 {
				out.Record = records[0]
			}
			return out, nil
		},
	}
}

func keysOf(records []domain.TxRecord) []string {
	keys := make([]string, len(records))
	for i, r := range records {
		keys[i] = r.Key
	}
	return keys
}

func mustExecute(t testing.TB, l commands.Ledger, op commands.Operation) commands.Outcome {
	t.Helper()
	out, err := l.Execute(context.Background(), op)
	if err != nil {
		t.Fatalf("execute: %v", err)
	}
	if out.Event == nil {
		t.Fatal("execute: no event")
	}
	return out
}

func testOperationWithoutDecide(t *testing.T, l commands.Ledger) {
	_, err := l.Execute(context.Background(), commands.Operation{})
	if !errors.Is(err, domain.ErrInvalidArgument) {
		t.Fatalf("operation without Decide: got %v, want ErrInvalidArgument", err)
	}
}

func testEndedContextNeverRuns(t *testing.T, l commands.Ledger) {
	client := uid("c")
	wallet := domain.PlayerWallet(client, uid("p"), eur)
	var ran atomic.Int32
	op := adjust(client, wallet, money(t, "1.00", eur))
	decide := op.Decide
	op.Decide = func(v *domain.View) (commands.Outcome, error) {
		ran.Add(1)
		return decide(v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Execute(ctx, op); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: got %v, want context.Canceled", err)
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("the operation of a cancelled call ran %d times", n)
	}
	if st := balance(t, l, wallet); st != (domain.AccountState{}) {
		t.Errorf("wallet %+v after a cancelled call, want empty", st)
	}
}

func testDecidesAgainstCommittedState(t *testing.T, l commands.Ledger) {
	client := uid("c")
	wallet, ext := domain.PlayerWallet(client, uid("p"), eur), domain.ExternalAccount(client, eur)
	key := domain.ClientTxKey(client, uid("adj"))
	first := mustExecute(t, l, adjust(client, wallet, money(t, "10.00", eur),
		domain.TxRecord{Key: key, Kind: domain.TxAdjustment, Account: wallet, Currency: "EUR", Amount: 1000}))
	if first.Record.Position != first.Event.Position {
		t.Errorf("outcome record at position %d, its event at %d", first.Record.Position, first.Event.Position)
	}
	mustExecute(t, l, adjust(client, wallet, money(t, "2.50", eur)))
	s := probe(t, l, []domain.AccountID{wallet, ext}, key, "never-written")
	if got := s.accounts[wallet]; got != (domain.AccountState{Balance: 1250, Version: 2}) {
		t.Errorf("wallet %+v, want 12.50 at version 2", got)
	}
	// The external account only takes postings: its stream stays empty.
	if got := s.accounts[ext]; got != (domain.AccountState{Balance: -1250}) {
		t.Errorf("external account %+v, want -12.50 at version 0", got)
	}
	rec, ok := s.records[key]
	if !ok {
		t.Fatalf("record %s was not stored", key)
	}
	if rec.EventID != first.Event.ID || rec.Position != first.Event.Position || rec.Amount != 1000 {
		t.Errorf("stored record %+v, want event %s at position %d, amount 1000", rec, first.Event.ID, first.Event.Position)
	}
	if _, ok := s.records["never-written"]; ok {
		t.Error("a key never written reads as a record")
	}
}

func testPositionsFollowCommitOrder(t *testing.T, l commands.Ledger) {
	client := uid("c")
	wallets := []domain.AccountID{domain.PlayerWallet(client, uid("a"), eur), domain.PlayerWallet(client, uid("b"), eur)}
	// One after another: each call returns after its commit, so each later
	// one comes later in the chain, by exactly one.
	for i := range 4 {
		out := mustExecute(t, l, adjust(client, wallets[i%2], money(t, "1.00", eur)))
		if want := int64(i + 1); out.Event.Position != want {
			t.Errorf("call %d at position %d, want %d", i, out.Event.Position, want)
		}
		if want := int64(i/2 + 1); out.Event.Version != want {
			t.Errorf("call %d at version %d of its stream, want %d", i, out.Event.Version, want)
		}
	}
	// At once: the positions still form one run without holes or repeats.
	const calls = 40
	outs, errs := make([]commands.Outcome, calls), make([]error, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			outs[i], errs[i] = l.Execute(context.Background(), adjust(client, wallets[i%2], money(t, "1.00", eur)))
		})
	}
	wg.Wait()
	positions := map[int64]bool{}
	versions := map[domain.AccountID][]int64{}
	for i := range calls {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		positions[outs[i].Event.Position] = true
		versions[outs[i].Event.StreamID] = append(versions[outs[i].Event.StreamID], outs[i].Event.Version)
	}
	for p := int64(5); p < 5+calls; p++ {
		if !positions[p] {
			t.Errorf("no event at position %d: positions %v", p, positions)
		}
	}
	for id, vs := range versions {
		slices.Sort(vs)
		for i, v := range vs {
			if want := int64(i + 3); v != want {
				t.Fatalf("%s: versions %v, want 3..%d", id, vs, len(vs)+2)
			}
		}
	}
}

var errRefused = errors.New("refused by the test")

func testRejectionFailsOnlyItsOperation(t *testing.T, l commands.Ledger) {
	client := uid("c")
	a, b, c := domain.PlayerWallet(client, uid("a"), eur), domain.PlayerWallet(client, uid("b"), eur),
		domain.PlayerWallet(client, uid("c"), eur)
	refused := adjust(client, b, money(t, "5.00", eur))
	refused.Decide = func(*domain.View) (commands.Outcome, error) { return commands.Outcome{}, errRefused }
	overdraw := adjust(client, c, money(t, "-1.00", eur)) // c is empty
	ops := []commands.Operation{adjust(client, a, money(t, "1.00", eur)), refused, overdraw,
		adjust(client, b, money(t, "2.00", eur))}
	errs := make([]error, len(ops))
	var wg sync.WaitGroup
	for i, op := range ops {
		wg.Go(func() { _, errs[i] = l.Execute(context.Background(), op) })
	}
	wg.Wait()
	for i, want := range []error{nil, errRefused, domain.ErrInsufficientFunds, nil} {
		if (want == nil) != (errs[i] == nil) || (want != nil && !errors.Is(errs[i], want)) {
			t.Errorf("op %d: got %v, want %v", i, errs[i], want)
		}
	}
	s := probe(t, l, []domain.AccountID{a, b, c})
	for id, want := range map[domain.AccountID]domain.AccountState{a: {Balance: 100, Version: 1},
		b: {Balance: 200, Version: 1}, c: {}} {
		if got := s.accounts[id]; got != want {
			t.Errorf("%s: %+v, want %+v", id, got, want)
		}
	}
}

func testPanicFailsOnlyItsOperation(t *testing.T, l commands.Ledger) {
	client := uid("c")
	a, b := domain.PlayerWallet(client, uid("a"), eur), domain.PlayerWallet(client, uid("b"), eur)
	before := mustExecute(t, l, adjust(client, a, money(t, "1.00", eur)))
	panics := adjust(client, b, money(t, "5.00", eur))
	applyThenPanic := panics.Decide
	panics.Decide = func(v *domain.View) (commands.Outcome, error) {
		if _, err := applyThenPanic(v); err != nil {
			return commands.Outcome{}, err
		}
		panic("boom")
	}
	if _, err := l.Execute(context.Background(), panics); err == nil || !strings.Contains(err.Error(), "panicked") {
		t.Fatalf("panicking operation: got %v, want an error saying it panicked", err)
	}
	after := mustExecute(t, l, adjust(client, a, money(t, "1.00", eur)))
	if after.Event.Position != before.Event.Position+1 {
		t.Errorf("positions %d then %d: the panicking operation left a trace in the chain",
			before.Event.Position, after.Event.Position)
	}
	if st := balance(t, l, b); st != (domain.AccountState{}) {
		t.Errorf("wallet of the panicking operation %+v, want empty", st)
	}
}

func testUndeclaredAccountFailsTheOperation(t *testing.T, l commands.Ledger) {
	client := uid("c")
	a, undeclared := domain.PlayerWallet(client, uid("a"), eur), domain.PlayerWallet(client, uid("x"), eur)
	before := mustExecute(t, l, adjust(client, a, money(t, "1.00", eur)))
	sneaky := adjust(client, undeclared, money(t, "7.00", eur))
	sneaky.Accounts = sneaky.Accounts[1:] // declares only the external account
	if _, err := l.Execute(context.Background(), sneaky); err == nil || !strings.Contains(err.Error(), "did not declare") {
		t.Fatalf("operation on an undeclared account: got %v, want an error saying so", err)
	}
	// The event's stream is declared, one of its postings is not.
	leaky := adjust(client, a, money(t, "7.00", eur))
	decide := leaky.Decide
	leaky.Decide = func(v *domain.View) (commands.Outcome, error) {
		out, err := decide(domain.NewView()) // the event only; v stays as loaded
		if err != nil {
			return commands.Outcome{}, err
		}
		e := *out.Event
		e.Data.Postings = []domain.Posting{{Account: domain.ExternalAccount(client, eur), Amount: "-7.00"},
			{Account: undeclared, Amount: "2.00"}, {Account: a, Amount: "5.00"}}
		e, err = v.Apply(domain.Change{Event: e})
		if err != nil {
			return commands.Outcome{}, err
		}
		return commands.Outcome{Event: &e}, nil
	}
	if _, err := l.Execute(context.Background(), leaky); err == nil || !strings.Contains(err.Error(), "did not declare") {
		t.Fatalf("posting to an undeclared account: got %v, want an error saying so", err)
	}
	// The postings' declared sides must not have moved either.
	s := probe(t, l, []domain.AccountID{a, undeclared, domain.ExternalAccount(client, eur)})
	if st := s.accounts[undeclared]; st != (domain.AccountState{}) {
		t.Errorf("undeclared wallet %+v, want empty", st)
	}
	if st := s.accounts[domain.ExternalAccount(client, eur)]; st.Balance != -100 {
		t.Errorf("external account %+v, want -1.00", st)
	}
	if st := s.accounts[a]; st != (domain.AccountState{Balance: 100, Version: 1}) {
		t.Errorf("declared wallet %+v, want 1.00 at version 1", st)
	}
	after := mustExecute(t, l, adjust(client, a, money(t, "1.00", eur)))
	if after.Event.Position != before.Event.Position+1 {
		t.Errorf("positions %d then %d, want consecutive", before.Event.Position, after.Event.Position)
	}
}

func testExistingRecordIsNeverOverwrittenBlindly(t *testing.T, l commands.Ledger) {
	client := uid("c")
	wallet, other := domain.PlayerWallet(client, uid("p"), eur), domain.PlayerWallet(client, uid("o"), eur)
	key := domain.ClientTxKey(client, uid("dep"))
	mustExecute(t, l, adjust(client, wallet, money(t, "10.00", eur),
		domain.TxRecord{Key: key, Kind: domain.TxDeposit, Account: wallet, Currency: "EUR", Amount: 1000}))
	// The operation does not declare the key, so its view takes the record
	// for new: writing it would overwrite the original unseen.
	dup := adjust(client, other, money(t, "1.00", eur),
		domain.TxRecord{Key: key, Kind: domain.TxAdjustment, Account: other, Currency: "EUR", Amount: 100})
	dup.Records = nil
	if _, err := l.Execute(context.Background(), dup); err == nil {
		t.Fatal("an operation writing an existing record it did not declare was accepted")
	}
	s := probe(t, l, []domain.AccountID{wallet, other}, key)
	if rec := s.records[key]; rec.Kind != domain.TxDeposit || rec.Amount != 1000 {
		t.Errorf("record %+v, want the original deposit of 1000", rec)
	}
	if st := s.accounts[other]; st != (domain.AccountState{}) {
		t.Errorf("wallet of the refused operation %+v, want empty", st)
	}
}

// player is one player's wallet at one provider, with the provider's and
// the operator's calls through a command handler.
type player struct {
	h                          *commands.Handler
	client, id, provider, game string
	cur                        domain.Currency
}

func newPlayer(h *commands.Handler, cur domain.Currency) player {
	return player{h: h, client: uid("c"), id: uid("p"), provider: uid("prov"), game: "g1", cur: cur}
}

func (p player) wallet() domain.AccountID { return domain.PlayerWallet(p.client, p.id, p.cur) }
func (p player) house() domain.AccountID  { return domain.HouseAccount(p.client, p.provider, p.cur) }

func (p player) gameTx(tx, round string) domain.GameTx {
	return domain.GameTx{Client: p.client, Player: p.id, Provider: p.provider, Game: p.game, Round: round,
		Session: "s1", ExternalTxID: tx, Currency: p.cur}
}

func (p player) clientTx(tx, playerID string) domain.ClientTx {
	return domain.ClientTx{Client: p.client, Player: playerID, ExternalTxID: tx, Currency: p.cur, Reason: "test"}
}

func (p player) deposit(t testing.TB, amount string) {
	t.Helper()
	if _, err := p.h.Deposit(context.Background(), p.clientTx(uid("dep"), p.id), money(t, amount, p.cur)); err != nil {
		t.Fatalf("deposit %s: %v", amount, err)
	}
}

func (p player) bet(t testing.TB, tx, amount, round string) (commands.Result, error) {
	return p.h.PlaceBet(context.Background(), p.gameTx(tx, round), money(t, amount, p.cur))
}

func (p player) win(t testing.TB, tx, amount, betRef, round string) (commands.Result, error) {
	return p.h.CreditWin(context.Background(), p.gameTx(tx, round), money(t, amount, p.cur), betRef)
}

func (p player) rollback(tx, ref, round string) (commands.Result, error) {
	return p.h.Rollback(context.Background(), p.gameTx(tx, round), ref)
}

func testRetryAnswersTheOriginal(t *testing.T, l commands.Ledger) {
	h, rec := handler(l)
	p := newPlayer(h, eur)
	p.deposit(t, "20.00")
	first, err := p.bet(t, "bet-1", "5.00", "r1")
	if err != nil {
		t.Fatal(err)
	}
	again, err := p.bet(t, "bet-1", "5.00", "r1")
	if err != nil {
		t.Fatal(err)
	}
	if first.Replayed || !again.Replayed {
		t.Errorf("replayed: first %v, retry %v; want false, true", first.Replayed, again.Replayed)
	}
	if again.EventID != first.EventID || again.Position != first.Position || again.Position == 0 ||
		again.BalanceAfter != first.BalanceAfter || again.Amount != first.Amount || again.ExternalTxID != "bet-1" ||
		!again.OccurredAt.Equal(first.OccurredAt) {
		t.Errorf("retry answered %+v, the original %+v", again, first)
	}
	sameIDOtherAmount(t, l, p)
	auditBooks(t, l, rec)
}

// sameIDOtherAmount retries bet-1 of 5.00 with 6.00: a conflict that names
// the field, and nothing moves.
func sameIDOtherAmount(t *testing.T, l commands.Ledger, p player) {
	t.Helper()
	_, err := p.bet(t, "bet-1", "6.00", "r1")
	var conflict *domain.IdempotencyConflictError
	if !errors.As(err, &conflict) {
		t.Fatalf("same id, different amount: got %v, want *domain.IdempotencyConflictError", err)
	}
	if conflict.Field != "amount" || conflict.Original != "5.00" || conflict.Given != "6.00" {
		t.Errorf("conflict %+v, want field amount 5.00 -> 6.00", conflict)
	}
	if st := balance(t, l, p.wallet()); st != (domain.AccountState{Balance: 1500, Version: 2}) {
		t.Errorf("player wallet %+v after the conflicting retry, want 15.00 at version 2", st)
	}
}

func testSameCallConcurrentlyMovesMoneyOnce(t *testing.T, l commands.Ledger) {
	h, rec := handler(l)
	p := newPlayer(h, eur)
	p.deposit(t, "20.00")
	const calls = 10
	results, errs := make([]commands.Result, calls), make([]error, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() { results[i], errs[i] = p.bet(t, "bet-1", "5.00", "r1") })
	}
	wg.Wait()
	replayed := 0
	for i := range calls {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		if results[i].Replayed {
			replayed++
		}
		r, first := results[i], results[0]
		if r.EventID != first.EventID || r.BalanceAfter.String() != "15.00" || r.Position != first.Position ||
			r.Position == 0 || r.Amount.String() != "5.00" {
			t.Errorf("call %d answered %+v, call 0 answered %+v", i, r, first)
		}
	}
	if replayed != calls-1 {
		t.Errorf("%d answers replayed, want %d", replayed, calls-1)
	}
	if st := balance(t, l, p.wallet()); st != (domain.AccountState{Balance: 1500, Version: 2}) {
		t.Errorf("player wallet %+v, want 15.00 at version 2", st)
	}
	sameIDOtherAmount(t, l, p)
	auditBooks(t, l, rec)
}

func testConcurrentBetsNeverOverdraw(t *testing.T, l commands.Ledger) {
	h, rec := handler(l)
	p := newPlayer(h, eur)
	p.deposit(t, "20.00")
	const bets = 50
	errs := make([]error, bets)
	var wg sync.WaitGroup
	for i := range bets {
		wg.Go(func() { _, errs[i] = p.bet(t, fmt.Sprintf("bet-%d", i), "1.00", "") })
	}
	wg.Wait()
	var accepted, refused int
	for i, err := range errs {
		switch {
		case err == nil:
			accepted++
		case errors.Is(err, domain.ErrInsufficientFunds):
			refused++
		default:
			t.Errorf("bet %d: unexpected error %v", i, err)
		}
	}
	if accepted != 20 || refused != 30 {
		t.Fatalf("%d bets accepted and %d refused, want 20 and 30", accepted, refused)
	}
	s := probe(t, l, []domain.AccountID{p.wallet(), p.house()})
	if st := s.accounts[p.wallet()]; st != (domain.AccountState{Balance: 0, Version: 21}) {
		t.Errorf("player wallet %+v, want balance 0 at version 21", st)
	}
	if st := s.accounts[p.house()]; st.Balance != 2000 {
		t.Errorf("house balance %d, want 2000 (20.00)", st.Balance)
	}
	auditBooks(t, l, rec)
}

// testRollbackLoadsTheRoundItNeeds: a rollback that names no round must
// still find the round of the bet it undoes, which the operation can only
// name once it has read the bet (the handler runs it again with the round
// loaded).
func testRollbackLoadsTheRoundItNeeds(t *testing.T, l commands.Ledger) {
	h, rec := handler(l)
	p := newPlayer(h, eur)
	p.deposit(t, "10.00")
	if _, err := p.bet(t, "bet-1", "3.00", "r8"); err != nil {
		t.Fatal(err)
	}
	for i, wantReplay := range []bool{false, true} {
		res, err := p.rollback("rb-1", "bet-1", "")
		if err != nil {
			t.Fatalf("rollback %d: %v", i, err)
		}
		if res.Replayed != wantReplay || res.Amount.String() != "3.00" || res.BalanceAfter.String() != "10.00" {
			t.Errorf("rollback %d answered %+v, want 3.00 back, balance 10.00, replayed %v", i, res, wantReplay)
		}
	}
	if _, err := p.win(t, "win-1", "5.00", "", "r8"); !errors.Is(err, domain.ErrBetRolledBack) {
		t.Errorf("win in a round whose bets were all rolled back: got %v, want ErrBetRolledBack", err)
	}
	auditBooks(t, l, rec)
}

// testEveryCommandKeepsTheBooks runs every command in two currencies, with
// refusals in between, and audits the books.
func testEveryCommandKeepsTheBooks(t *testing.T, l commands.Ledger) {
	h, rec := handler(l)
	ctx := context.Background()
	for _, cur := range []domain.Currency{eur, btc} {
		p := newPlayer(h, cur)
		m := func(s string) domain.Money { return money(t, s, cur) }
		must := func(what string, _ commands.Result, err error) {
			t.Helper()
			if err != nil {
				t.Fatalf("%s %s: %v", cur, what, err)
			}
		}
		refused := func(what string, _ commands.Result, err error, want error) {
			t.Helper()
			if !errors.Is(err, want) {
				t.Fatalf("%s %s: got %v, want %v", cur, what, err, want)
			}
		}
		r, err := h.Deposit(ctx, p.clientTx("c-dep-1", ""), m("1000"))
		must("client deposit", r, err)
		r, err = h.Transfer(ctx, p.clientTx("c-tr-1", p.id), m("100.5"), domain.ToPlayer)
		must("transfer to player", r, err)
		r, err = h.RecordLaunch(ctx, domain.Launch{Client: p.client, Player: p.id, Provider: p.provider,
			Game: p.game, Session: "s1", ExternalTxID: "launch-1", Currency: cur, ExpiresAt: time.Now().Add(time.Hour)})
		must("launch", r, err)
		r, err = p.bet(t, "b1", "10", "r1")
		must("bet", r, err)
		r, err = p.bet(t, "b2", "1000", "r1")
		refused("oversized bet", r, err, domain.ErrInsufficientFunds)
		r, err = p.win(t, "w1", "25.25", "b1", "r1")
		must("win", r, err)
		r, err = p.bet(t, "b3", "7", "r2")
		must("bet", r, err)
		r, err = p.rollback("rb3", "b3", "r2")
		must("rollback bet", r, err)
		r, err = p.rollback("rb4", "b4", "r3")
		must("rollback unknown", r, err)
		r, err = p.bet(t, "b4", "1", "r3")
		refused("late bet", r, err, domain.ErrRolledBackEarlier)
		r, err = p.bet(t, "b5", "5", "r4")
		must("bet", r, err)
		r, err = p.win(t, "w5", "3", "b5", "r4")
		must("win", r, err)
		r, err = p.rollback("rb5", "w5", "r4")
		must("rollback win", r, err)
		r, err = h.Adjust(ctx, p.clientTx("adj-1", p.id), m("-2"))
		must("negative adjustment", r, err)
		r, err = h.Adjust(ctx, p.clientTx("adj-2", ""), m("3"))
		must("client adjustment", r, err)
		r, err = h.SyncBalance(ctx, p.clientTx("sync-1", p.id), m("50"),
			domain.GameTx{Provider: p.provider, Game: p.game, Session: "s2"})
		must("balance sync", r, err)
		r, err = h.Transfer(ctx, p.clientTx("c-tr-2", p.id), m("20"), domain.FromPlayer)
		must("transfer from player", r, err)
		r, err = h.Withdraw(ctx, p.clientTx("wd-1", p.id), m("30"))
		must("player withdrawal", r, err)
		r, err = h.Withdraw(ctx, p.clientTx("wd-2", ""), m("1"))
		must("client withdrawal", r, err)
		r, err = h.Withdraw(ctx, p.clientTx("wd-3", p.id), m("0.01"))
		refused("overdraw", r, err, domain.ErrInsufficientFunds)

		if got := balance(t, l, p.wallet()).Balance; got != 0 {
			t.Errorf("%s player balance %d, want 0 (synced to 50, 20 back, 30 out)", cur, got)
		}
	}
	auditBooks(t, l, rec)
}

// auditBooks audits the events the recorder saw: every event of a ledger
// that started empty.
func auditBooks(t testing.TB, l commands.Ledger, rec *recorder) {
	t.Helper()
	AuditBooks(t, l, rec.committed())
}

// AuditBooks checks what the committed events of a ledger that started
// empty and its committed state must agree on, the way an auditor would,
// reading the state through the port: the events hold positions 1..n
// without holes, each stream's versions run 1..k, every event's postings
// sum to zero, and every account's balance is the sum of its postings and
// its version the length of its stream.
func AuditBooks(t testing.TB, l commands.Ledger, events []domain.Event) {
	t.Helper()
	events = slices.Clone(events)
	slices.SortFunc(events, func(a, b domain.Event) int { return cmp.Compare(a.Position, b.Position) })
	sums := map[domain.AccountID]int64{}
	streams := map[domain.AccountID]int64{}
	for i, e := range events {
		if e.Position != int64(i+1) {
			t.Fatalf("event %d of %d at position %d: the chain has a hole or a repeat", i+1, len(events), e.Position)
		}
		streams[e.StreamID]++
		if e.Version != streams[e.StreamID] {
			t.Errorf("%s: event at position %d has version %d, want %d", e.StreamID, e.Position, e.Version, streams[e.StreamID])
		}
		cur, err := domain.ParseCurrency(e.Data.Currency)
		if err != nil {
			t.Fatalf("position %d: %v", e.Position, err)
		}
		var sum int64
		for _, p := range e.Data.Postings {
			m, err := domain.ParseMoney(p.Amount, cur)
			if err != nil {
				t.Fatalf("position %d: posting %s: %v", e.Position, p.Account, err)
			}
			sum += m.Minor()
			sums[p.Account] += m.Minor()
		}
		if sum != 0 {
			t.Errorf("position %d (%s): postings sum to %d minor units, want 0", e.Position, e.Type, sum)
		}
	}
	if len(events) == 0 {
		t.Fatal("no events at all: the audit checked nothing")
	}
	var ids []domain.AccountID
	for id := range sums {
		ids = append(ids, id)
	}
	for id := range streams {
		if _, ok := sums[id]; !ok {
			ids = append(ids, id)
		}
	}
	s := probe(t, l, ids)
	for _, id := range ids {
		if got, want := s.accounts[id], (domain.AccountState{Balance: sums[id], Version: streams[id]}); got != want {
			t.Errorf("%s: state %+v, the events say %+v", id, got, want)
		}
	}
}
