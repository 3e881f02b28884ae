// The contract through commands.Handler: every command keeps the books
// on any ledger, and concurrent or repeated calls move money once.

package ledgertest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
)

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

// OneMoveAnswers checks the answers of copies of one call made at once:
// none failed, all name the same committed event with amount and the
// balance after it, and all but the one that moved the money say they
// were replayed.
func OneMoveAnswers(t testing.TB, results []commands.Result, errs []error, amount, balanceAfter string) {
	t.Helper()
	replayed := 0
	for i := range results {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		if results[i].Replayed {
			replayed++
		}
		r, first := results[i], results[0]
		if r.EventID != first.EventID || r.BalanceAfter.String() != balanceAfter || r.Position != first.Position ||
			r.Position == 0 || r.Amount.String() != amount {
			t.Errorf("call %d answered %+v, call 0 answered %+v", i, r, first)
		}
	}
	if replayed != len(results)-1 {
		t.Errorf("%d answers replayed, want %d", replayed, len(results)-1)
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
	OneMoveAnswers(t, results, errs, "5.00", "15.00")
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

// testSettledBetIsNotRolledBack: a rollback of a bet a win has settled is
// refused and moves nothing (issue 17: bet 5, win 20 naming it, rollback of
// the bet answered balance 30). Once the win is reversed the same rollback
// goes through and its retry replays. The rollbacks name no round and the
// reversal names no bet, so the handler must load the bet's round and the
// win's bet itself.
func testSettledBetIsNotRolledBack(t *testing.T, l commands.Ledger) {
	h, rec := handler(l)
	p := newPlayer(h, eur)
	p.deposit(t, "10.00")
	if _, err := p.bet(t, "bet-1", "5.00", "r1"); err != nil {
		t.Fatal(err)
	}
	win := p.gameTx("win-1", "r1")
	win.RoundClosed = true
	if _, err := h.CreditWin(context.Background(), win, money(t, "20.00", eur), "bet-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.rollback("rb-1", "bet-1", ""); !errors.Is(err, domain.ErrBetSettled) {
		t.Fatalf("rollback of the settled bet: got %v, want ErrBetSettled", err)
	}
	if st := balance(t, l, p.wallet()); st.Balance != 25_00 {
		t.Fatalf("wallet %d after the refused rollback, want 2500", st.Balance)
	}
	if _, err := p.rollback("rw-1", "win-1", ""); err != nil {
		t.Fatalf("reversal of the win: %v", err)
	}
	for i, wantReplay := range []bool{false, true} {
		res, err := p.rollback("rb-1", "bet-1", "")
		if err != nil {
			t.Fatalf("rollback %d after the reversal: %v", i, err)
		}
		if res.Replayed != wantReplay || res.Amount.String() != "5.00" || res.BalanceAfter.String() != "10.00" {
			t.Errorf("rollback %d answered %+v, want 5.00 back, balance 10.00, replayed %v", i, res, wantReplay)
		}
	}
	// A win naming no bet settles every bet of its round.
	if _, err := p.bet(t, "bet-2", "4.00", "r2"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.win(t, "win-2", "0.00", "", "r2"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.rollback("rb-2", "bet-2", ""); !errors.Is(err, domain.ErrBetSettled) {
		t.Fatalf("rollback of a bet of a settled round: got %v, want ErrBetSettled", err)
	}
	if _, err := p.rollback("rw-2", "win-2", ""); err != nil {
		t.Fatalf("reversal of the round's win: %v", err)
	}
	if _, err := p.rollback("rb-2", "bet-2", ""); err != nil {
		t.Fatalf("rollback after the round's win was reversed: %v", err)
	}
	if st := balance(t, l, p.wallet()); st.Balance != 10_00 {
		t.Errorf("wallet %d at the end, want 1000", st.Balance)
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
