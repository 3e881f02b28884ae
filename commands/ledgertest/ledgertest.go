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
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
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
		{"SettledBetIsNotRolledBack", testSettledBetIsNotRolledBack},
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
