package projectionstest

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/projections"
)

// Run runs the contract suite. Every test gets fresh, empty stores from
// newStore and runs in parallel with the others.
func Run(t *testing.T, newStore func(t *testing.T) Store) {
	tests := []struct {
		name string
		run  func(t *testing.T, newStore func(t *testing.T) Store)
	}{
		{"history rows of bets, wins, rollbacks and rounds", testHistoryRows},
		{"GGR books a rollback on its own day, against what it undoes", testGGRRollbacks},
		{"free bets and jackpot parts are their own money kinds", testMoneyKinds},
		{"a round counts where it starts, whatever order its bets come in", testRoundStarts},
		{"players' bet days per month", testPlayerMonths},
		{"a game result of two streams does not depend on their order", testGameResultOrder},
		{"a gap is refused and a redelivery skipped", testCheckpoints},
		{"a redelivered event has no second effect", testRedelivery},
		{"an invalid event changes nothing", testInvalidEvent},
		{"a dead letter moves its stream past it", testDeadLetter},
		{"the watermark numbers the history", testWatermark},
		{"history pages, newest first, with filters", testPages},
		{"the GGR report sums the groups", testGGRReport},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, newStore)
		})
	}
}

var (
	day1 = time.Date(2025, 3, 1, 23, 0, 0, 0, time.UTC)
	day2 = time.Date(2025, 3, 2, 1, 0, 0, 0, time.UTC)
)

// midnight is t's UTC day, as the read models key days.
func midnight(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// richLedger is two clients' play over two days: deposits, bets, a promo
// spin, wins, rollbacks of a bet and of a win from another game, a bet
// without a round, a withdrawal.
func richLedger(t *testing.T) *Ledger {
	l := NewLedger(t, day1)
	l.Deposit(Client("acme", "p1", "dep-1", EUR), "100.00")
	l.Deposit(Client("acme", "p2", "dep-2", EUR), "50.00")
	l.Deposit(Client("bolt", "p1", "dep-3", EUR), "20.00")
	l.Bet(Game("b1", "r1", InGame("slot-a")), "10.00")
	l.Bet(Game("b2", "r2", InGame("slot-a"), Promo), "4.00")
	l.Win(Game("w1", "r2", InGame("slot-a"), Closed), "30.00", "")
	l.Bet(Game("b3", "r3", ByPlayer("p2")), "5.00")
	l.Bet(Game("c1", "r1", AtClient("bolt")), "2.00")
	l.Now = day2
	l.Rollback(Game("rb1", "r1", InGame("other")), "b1")
	l.Rollback(Game("rb2", "r2", InGame("other")), "w1")
	l.Win(Game("w3", "r3", ByPlayer("p2"), Closed), "7.50", "b3")
	l.Bet(Game("b4", "", InGame("slot-a")), "1.00")
	l.Withdraw(Client("acme", "p2", "wd-1", EUR), "3.00")
	return l
}

func projection(t *testing.T, n projections.Name) projections.Projection {
	t.Helper()
	p, err := projections.ByName(n)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// applyAll applies each event to every projection; each must apply.
func applyAll(t *testing.T, s Store, events ...domain.Event) {
	t.Helper()
	for _, n := range projections.All {
		p := projection(t, n)
		for _, e := range events {
			applied, err := s.Apply(t.Context(), p, e)
			if err != nil || !applied {
				t.Fatalf("%s: event %d (%s): applied %v, %v", n, e.Position, e.Type, applied, err)
			}
		}
	}
}

// settleAll settles every projection and checks the watermark is want.
func settleAll(t *testing.T, s Store, want int64) {
	t.Helper()
	for _, n := range projections.All {
		if got, err := s.Settle(t.Context(), n); err != nil || got != want {
			t.Fatalf("%s watermark = %d (%v), want %d", n, got, err, want)
		}
	}
}

func state(t *testing.T, s Store) State {
	t.Helper()
	st, err := s.State(t.Context())
	if err != nil {
		t.Fatalf("read the state: %v", err)
	}
	return st
}

func last(events []domain.Event) int64 { return events[len(events)-1].Position }

func testHistoryRows(t *testing.T, newStore func(t *testing.T) Store) {
	// given a bet and a win in one round, a refunded bet and a promo spin
	l := NewLedger(t, day1)
	dep := l.Deposit(Client("acme", "p1", "dep", EUR), "100.00")
	bet := l.Bet(Game("b1", "r1"), "10.00")
	win := l.Win(Game("w1", "r1", Closed), "25.00", "")
	bet2 := l.Bet(Game("b2", "r2"), "5.00")
	refund := l.Rollback(Game("rb", "r2"), "b2")
	unknown := l.Rollback(Game("rb-x", "r4"), "never-seen")
	stale := l.Bet(Game("b4", "r5"), "1.00")
	l.Now = day1.Add(49 * time.Hour)
	closing := l.CloseRound("acme", "prov", "r5", 48*time.Hour)
	free := l.Bet(Game("b3", "r3", Promo), "0.00")
	// when they are applied
	s := newStore(t)
	applyAll(t, s, l.Events...)
	st := state(t, s)
	// then
	result := func(round string) string { return projections.GameResultID("acme", "prov", round) }
	tests := []struct {
		name   string
		id     string
		typ    projections.TxType
		amount int64
		status projections.Status
	}{
		{"deposit is positive", dep.ID, projections.TypeDeposit, 100_00, projections.StatusSettled},
		{"bet is negative", bet.ID, projections.TypeBet, -10_00, projections.StatusSettled},
		{"win is positive", win.ID, projections.TypeWin, 25_00, projections.StatusSettled},
		{"refunded bet is rolled back", bet2.ID, projections.TypeBet, -5_00, projections.StatusRolledBack},
		{"refund is positive", refund.ID, projections.TypeRollback, 5_00, projections.StatusSettled},
		{"free spin moves nothing", free.ID, projections.TypeBet, 0, projections.StatusSettled},
		{"a rollback of nothing discards what it names", unknown.ID, projections.TypeRollback, 0, projections.StatusDiscarded},
		{"the bet of a stale round stands", stale.ID, projections.TypeBet, -1_00, projections.StatusSettled},
		{"the ledger's close of a stale round moves nothing", closing.ID, projections.TypeRoundClose, 0, projections.StatusSettled},
		{"a round the ledger closed is settled", result("r5"), projections.TypeGameResult, -1_00, projections.StatusSettled},
		{"closed round is settled", result("r1"), projections.TypeGameResult, 15_00, projections.StatusSettled},
		{"refunded round is rolled back", result("r2"), projections.TypeGameResult, 0, projections.StatusRolledBack},
		{"open round is pending", result("r3"), projections.TypeGameResult, 0, projections.StatusPending},
	}
	for _, tc := range tests {
		got, ok := st.Rows[tc.id]
		if !ok || got.Type != tc.typ || got.Amount != tc.amount || got.Status != tc.status || got.ClientID != "acme" ||
			got.Currency != "EUR" || got.Scale != 2 {
			t.Errorf("%s: got %+v (found %v), want %s %d %s", tc.name, got, ok, tc.typ, tc.amount, tc.status)
		}
	}
	if r := st.Rows[bet2.ID]; r.Position != refund.Position || r.Seq != bet2.Position {
		t.Errorf("a rolled-back bet keeps its seq %d and takes the rollback's position %d: %+v", bet2.Position,
			refund.Position, r)
	}
	if r := st.Rows[result("r1")]; r.Seq != bet.Position || r.Sub != 1 || r.Position != win.Position ||
		r.OpenBets != 1 || r.Wins != 1 || !r.Closed || !r.CreatedAt.Equal(bet.OccurredAt) {
		t.Errorf("game result r1: %+v", r)
	}
	if r := st.Rows[win.ID]; !r.HasBalanceAfter || r.BalanceAfter != 115_00 || r.Seq != win.Position || r.Sub != 0 ||
		r.RoundID != "r1" || r.Provider != "prov" || r.Game != "slot" || r.PlayerID != "p1" {
		t.Errorf("win row: %+v", r)
	}
	if r := st.Rows[result("r5")]; r.Seq != stale.Position || r.Position != closing.Position || !r.Closed ||
		r.OpenBets != 1 || r.Game != "slot" || !r.CreatedAt.Equal(stale.OccurredAt) {
		t.Errorf("game result r5: %+v", r)
	}
	if r := st.Rows[closing.ID]; r.RoundID != "r5" || r.Provider != "prov" || r.PlayerID != "p1" ||
		!r.HasBalanceAfter || r.BalanceAfter != 114_00 {
		t.Errorf("round close row: %+v", r)
	}
	if b := st.Balances[domain.PlayerWallet("acme", "p1", EUR)]; b.Balance != 114_00 || b.Position != free.Position ||
		b.Kind != "player" || b.ClientID != "acme" || b.PlayerID != "p1" || b.Scale != 2 {
		t.Errorf("balance = %+v, want 114.00 at %d", b, free.Position)
	}
	if n := len(st.Rows); n != 13 {
		t.Errorf("%d history rows, want 9 events and 4 game results", n)
	}
}

func testGGRRollbacks(t *testing.T, newStore func(t *testing.T) Store) {
	// given bets and wins on day 1, rolled back on day 2 from another game
	l := NewLedger(t, day1)
	l.Deposit(Client("acme", "p1", "dep", EUR), "100.00")
	l.Bet(Game("b1", "r1", InGame("slot-a")), "10.00")
	l.Bet(Game("b2", "r2", InGame("slot-a"), Promo), "4.00")
	l.Win(Game("w1", "r2", InGame("slot-a"), Closed), "30.00", "")
	l.Now = day2
	l.Rollback(Game("rb1", "r1", InGame("other")), "b1")
	l.Rollback(Game("rb2", "r2", InGame("other")), "w1")
	l.Bet(Game("b3", "", InGame("slot-a")), "1.00")
	// when
	s := newStore(t)
	applyAll(t, s, l.Events...)
	st := state(t, s)
	// then day 1 keeps its bets and wins, day 2 gets the adjustments,
	// booked against the game (and promo kind) of what they undo
	ggr := func(day time.Time, game string) projections.GGRDelta {
		return st.GGR[projections.GGRKey{ClientID: "acme", Day: midnight(day), Provider: "prov", Game: game, Currency: "EUR"}]
	}
	d1, d2 := ggr(day1, "slot-a"), ggr(day2, "slot-a")
	if d1.Bets != 10_00 || d1.PromoBets != 4_00 || d1.Wins != 30_00 || d1.BetRefunds != 0 || d1.WinReversals != 0 ||
		d1.Scale != 2 {
		t.Errorf("day 1 = %+v", d1)
	}
	if d2.Bets != 1_00 || d2.BetRefunds != 10_00 || d2.WinReversals != 30_00 || d2.Wins != 0 {
		t.Errorf("day 2 = %+v", d2)
	}
	if other, ok := st.GGR[projections.GGRKey{ClientID: "acme", Day: midnight(day2), Provider: "prov", Game: "other",
		Currency: "EUR"}]; ok {
		t.Errorf("the rollback's own game got %+v", other)
	}
	rounds := map[string]bool{}
	for k, start := range st.Rounds {
		rounds[start.Day.Format(time.DateOnly)+" "+start.Game+" "+k.Round] = true
	}
	want := map[string]bool{"2025-03-01 slot-a r1": true, "2025-03-01 slot-a r2": true, "2025-03-02 slot-a tx:b3": true}
	if !maps.Equal(rounds, want) {
		t.Errorf("rounds = %v, want %v", rounds, want)
	}
	if d1.Rounds != 2 || d2.Rounds != 1 {
		t.Errorf("rounds per day %d and %d, want 2 and 1 (a rollback starts no round)", d1.Rounds, d2.Rounds)
	}
	if !st.Players[projections.GGRMember{GGRKey: d1.GGRKey, Member: "p1"}] || len(st.Players) != 2 {
		t.Errorf("players %v, want p1 in slot-a on either day", st.Players)
	}
}

func testMoneyKinds(t *testing.T, newStore func(t *testing.T) Store) {
	// given a free bet and its win, a real bet won with a jackpot part, and
	// a promo win with a jackpot part reversed the next day
	l := NewLedger(t, day1)
	l.Deposit(Client("acme", "p1", "dep", EUR), "100.00")
	free := l.Bet(Game("fb1", "r1", FreeBet("camp-1", "rw-1")), "0.00")
	freeWin := l.Win(Game("fw1", "r1", FreeBet("camp-1", "rw-1"), Closed), "6.00", "fb1")
	l.Bet(Game("b2", "r2"), "10.00")
	jp := l.Win(Game("w2", "r2", Jackpot(500_00), Closed), "520.00", "b2")
	l.Bet(Game("b3", "r3"), "1.00")
	l.Win(Game("w3", "r3", Promo, Jackpot(40_00), Closed), "45.00", "b3")
	l.Now = day2
	rev := l.Rollback(Game("rb3", "r3", InGame("other")), "w3")
	// when
	s := newStore(t)
	applyAll(t, s, l.Events...)
	st := state(t, s)
	// then the history carries the ids and the jackpot parts
	if r := st.Rows[free.ID]; !r.Promo || r.CampaignID != "camp-1" || r.RewardID != "rw-1" || r.Amount != 0 {
		t.Errorf("free bet row %+v", r)
	}
	if r := st.Rows[freeWin.ID]; !r.Promo || r.CampaignID != "camp-1" || r.RewardID != "rw-1" || r.Jackpot != 0 {
		t.Errorf("free win row %+v", r)
	}
	if r := st.Rows[jp.ID]; r.Jackpot != 500_00 || r.Amount != 520_00 || r.Promo {
		t.Errorf("jackpot win row %+v", r)
	}
	if r := st.Rows[rev.ID]; r.Jackpot != 40_00 || r.Amount != -45_00 || !r.Promo {
		t.Errorf("reversal of a jackpot win: %+v", r)
	}
	// and GGR keeps jackpot money apart from game and promo wins
	ggr := func(day time.Time) projections.GGRDelta {
		return st.GGR[projections.GGRKey{ClientID: "acme", Day: midnight(day), Provider: "prov", Game: "slot", Currency: "EUR"}]
	}
	d1, d2 := ggr(day1), ggr(day2)
	if d1.Bets != 11_00 || d1.Wins != 20_00 || d1.PromoBets != 0 || d1.PromoWins != 11_00 || d1.JackpotWins != 540_00 ||
		d1.JackpotWinReversals != 0 {
		t.Errorf("day 1 = %+v", d1)
	}
	if d2.PromoWinReversals != 5_00 || d2.JackpotWinReversals != 40_00 || d2.WinReversals != 0 || d2.JackpotWins != 0 {
		t.Errorf("day 2 = %+v", d2)
	}
}

// A round with bets on two streams (two players of one shared table round)
// over midnight and over two games is counted once, where it starts — the
// least (day, game) of its bets — whichever bet the store applies first.
func testRoundStarts(t *testing.T, newStore func(t *testing.T) Store) {
	start := time.Date(2025, 3, 1, 23, 30, 0, 0, time.UTC)
	l := NewLedger(t, start)
	var deposits []domain.Event
	for _, p := range []string{"p1", "p2", "p3"} {
		deposits = append(deposits, l.Deposit(Client("acme", p, "dep-"+p, EUR), "10.00"))
	}
	bets := []domain.Event{
		l.Bet(Game("tx-p1", "table-7", ByPlayer("p1"), InGame("b")), "1.00"),
		l.Bet(Game("tx-p2", "table-7", ByPlayer("p2"), InGame("a")), "1.00"),
	}
	l.Now = start.Add(time.Hour)
	bets = append(bets, l.Bet(Game("tx-p3", "table-7", ByPlayer("p3"), InGame("a")), "1.00"))
	want := "2025-03-01 a 1\n2025-03-01 b 0\n2025-03-02 a 0\n"
	for _, order := range [][]int{{0, 1, 2}, {2, 1, 0}, {1, 2, 0}, {2, 0, 1}} {
		t.Run(fmt.Sprint(order), func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			applyAll(t, s, deposits...)
			for _, i := range order {
				applyAll(t, s, bets[i])
			}
			st := state(t, s)
			var got []string
			for k, g := range st.GGR {
				got = append(got, fmt.Sprintf("%s %s %d\n", k.Day.Format(time.DateOnly), k.Game, g.Rounds))
			}
			slices.Sort(got)
			if strings.Join(got, "") != want {
				t.Errorf("rounds per group:\n%s\nwant\n%s", strings.Join(got, ""), want)
			}
			k := projections.RoundKey{ClientID: "acme", Provider: "prov", Currency: "EUR", Round: "table-7"}
			if s := st.Rounds[k]; s != (projections.RoundStart{Day: midnight(start), Game: "a"}) || len(st.Rounds) != 1 {
				t.Errorf("round table-7 starts at %+v (%d rounds), want 2025-03-01 a", s, len(st.Rounds))
			}
		})
	}
}

// A player's bet days are kept per month as a bitmap (bit d-1 is day d),
// across month ends and a leap February, per currency.
func testPlayerMonths(t *testing.T, newStore func(t *testing.T) Store) {
	usd := domain.MustCurrency("USD")
	type play struct {
		player   string
		currency domain.Currency
		provider string
		game     string
		day      time.Time
	}
	d := func(m time.Month, day int) time.Time { return time.Date(2024, m, day, 12, 0, 0, 0, time.UTC) }
	plays := []play{
		{"p1", EUR, "prov", "a", d(1, 31)}, {"p1", EUR, "prov", "b", d(1, 31)}, {"p1", EUR, "prov", "a", d(2, 1)},
		{"p2", EUR, "prov", "a", d(2, 29)}, {"p2", EUR, "other", "x", d(3, 1)},
		{"p3", EUR, "prov", "b", d(1, 1)}, {"p3", EUR, "prov", "b", d(3, 31)},
		{"p4", usd, "prov", "a", d(2, 15)}, {"p4", EUR, "prov", "a", d(2, 15)},
		{"p5", usd, "other", "x", d(1, 30)}, {"p5", usd, "other", "x", d(3, 2)},
	}
	l := NewLedger(t, d(1, 1))
	funded := map[string]bool{}
	for _, p := range plays {
		if k := p.player + p.currency.Code(); !funded[k] {
			funded[k] = true
			l.Deposit(Client("acme", p.player, "dep-"+k, p.currency), "100.00")
		}
	}
	months := map[projections.PlayerMonth]int64{}
	members := map[projections.GGRMember]bool{}
	for i, p := range plays {
		l.Now = p.day
		l.Bet(Game(fmt.Sprint("tx", i), fmt.Sprint("r", i), ByPlayer(p.player), InCurrency(p.currency),
			InGame(p.game), func(g *domain.GameTx) { g.Provider = p.provider }), "1.00")
		months[projections.PlayerMonth{ClientID: "acme", Month: time.Date(2024, p.day.Month(), 1, 0, 0, 0, 0, time.UTC),
			Currency: p.currency.Code(), PlayerID: p.player}] |= 1 << (p.day.Day() - 1)
		members[projections.GGRMember{GGRKey: projections.GGRKey{ClientID: "acme", Day: midnight(p.day),
			Provider: p.provider, Game: p.game, Currency: p.currency.Code()}, Member: p.player}] = true
	}
	s := newStore(t)
	applyAll(t, s, l.Events...)
	st := state(t, s)
	if !maps.Equal(st.PlayerMonths, months) || len(months) != 10 {
		t.Errorf("player months = %v\nwant %v", st.PlayerMonths, months)
	}
	feb := projections.PlayerMonth{ClientID: "acme", Month: time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC), Currency: "EUR",
		PlayerID: "p2"}
	if st.PlayerMonths[feb] != 1<<28 {
		t.Errorf("p2's February = %b, want bit 28 (the 29th)", st.PlayerMonths[feb])
	}
	if !maps.Equal(st.Players, members) {
		t.Errorf("players = %v\nwant %v", st.Players, members)
	}
}

// A game result shared by two players' streams takes its place and first
// fields from the lowest position, whatever order the streams arrive in.
func testGameResultOrder(t *testing.T, newStore func(t *testing.T) Store) {
	l := NewLedger(t, day1)
	dep1 := l.Deposit(Client("acme", "p1", "dep", EUR), "100.00")
	dep2 := l.Deposit(Client("acme", "p2", "dep2", EUR), "50.00")
	first := l.Bet(Game("b1", "shared"), "3.00")
	second := l.Bet(Game("b2", "shared", ByPlayer("p2"), InGame("other")), "2.00")
	id := projections.GameResultID("acme", "prov", "shared")
	var rows []projections.Transaction
	for _, events := range [][]domain.Event{{dep1, dep2, first, second}, {dep1, dep2, second, first}} {
		s := newStore(t)
		applyAll(t, s, events...)
		rows = append(rows, state(t, s).Rows[id])
	}
	if !reflect.DeepEqual(rows[0], rows[1]) {
		t.Errorf("order matters:\n%+v\n%+v", rows[0], rows[1])
	}
	a := rows[0]
	if a.Seq != first.Position || a.PlayerID != "p1" || a.Game != "slot" || a.Amount != -5_00 || a.OpenBets != 2 ||
		a.Position != second.Position || a.Status != projections.StatusPending {
		t.Errorf("game result = %+v", a)
	}
}

// The per-stream checkpoint rule: the next version applies, a later one is
// a gap (refused, so the stream is not reordered), an earlier one a
// redelivery (skipped).
func testCheckpoints(t *testing.T, newStore func(t *testing.T) Store) {
	l := NewLedger(t, day1)
	dep := l.Deposit(Client("acme", "p1", "dep", EUR), "100.00") // version 1 of p1's stream
	e1 := l.Bet(Game("b1", "r1"), "1.00")                        // version 2
	e2 := l.Bet(Game("b2", "r1"), "1.00")                        // version 3
	s := newStore(t)
	steps := []struct {
		name    string
		e       domain.Event
		applied bool
		gap     bool
	}{
		{"version 2 first is a gap", e1, false, true},
		{"version 1 applies", dep, true, false},
		{"version 3 before 2 is a gap", e2, false, true},
		{"version 2 applies", e1, true, false},
		{"version 2 again is skipped", e1, false, false},
		{"version 1 again is skipped", dep, false, false},
		{"version 3 applies", e2, true, false},
	}
	for _, n := range projections.All {
		p := projection(t, n)
		for _, step := range steps {
			applied, err := s.Apply(t.Context(), p, step.e)
			var gap *projections.GapError
			if applied != step.applied || errors.As(err, &gap) != step.gap || (!step.gap && err != nil) {
				t.Fatalf("%s: %s: applied %v, err %v", n, step.name, applied, err)
			}
			if step.gap && (gap.Projection != n || gap.StreamID != string(dep.StreamID) || gap.Got != step.e.Version) {
				t.Fatalf("%s: %s: %+v", n, step.name, gap)
			}
		}
	}
	st := state(t, s)
	for _, n := range projections.All {
		k := projections.StreamKey{Projection: n, StreamID: string(dep.StreamID)}
		if c := st.Checkpoints[k]; c != (projections.StreamCheckpoint{Version: 3, Position: e2.Position}) {
			t.Errorf("%s checkpoint = %+v, want version 3 at %d", n, c, e2.Position)
		}
	}
	if b := st.Balances[dep.StreamID]; b.Balance != 98_00 {
		t.Errorf("balance %d after redeliveries, want 9800", b.Balance)
	}
	if len(st.Rows) != 4 {
		t.Errorf("%d history rows after redeliveries, want 3 events and a game result", len(st.Rows))
	}
}

func testRedelivery(t *testing.T, newStore func(t *testing.T) Store) {
	l := richLedger(t)
	s := newStore(t)
	applyAll(t, s, l.Events...)
	settleAll(t, s, last(l.Events))
	before := state(t, s)
	// Every event again, newest first: each is skipped.
	for _, n := range projections.All {
		p := projection(t, n)
		for _, e := range slices.Backward(l.Events) {
			if applied, err := s.Apply(t.Context(), p, e); applied || err != nil {
				t.Fatalf("%s: redelivered event %d: applied %v, %v", n, e.Position, applied, err)
			}
		}
	}
	settleAll(t, s, last(l.Events))
	if after := state(t, s); !reflect.DeepEqual(before, after) {
		t.Errorf("redelivery changed the read models:\n%s", diffStates(before, after))
	}
}

func testInvalidEvent(t *testing.T, newStore func(t *testing.T) Store) {
	l := NewLedger(t, day1)
	dep := l.Deposit(Client("acme", "p1", "dep", EUR), "100.00")
	bet := l.Bet(Game("b1", "r1"), "10.00")
	mutate := func(f func(*domain.Event)) domain.Event {
		e := bet
		e.Data.Postings = slices.Clone(bet.Data.Postings)
		f(&e)
		return e
	}
	invalid := map[string]domain.Event{
		"unknown type":       mutate(func(e *domain.Event) { e.Type = "wallet.teleported.v1" }),
		"amount too precise": mutate(func(e *domain.Event) { e.Data.Postings[0].Amount = "-1.001" }),
	}
	s := newStore(t)
	applyAll(t, s, dep)
	before := state(t, s)
	for _, n := range projections.All {
		p := projection(t, n)
		for name, e := range invalid {
			applied, err := s.Apply(t.Context(), p, e)
			var ie *projections.InvalidEventError
			if applied || !errors.As(err, &ie) || !errors.Is(err, projections.ErrInvalidEvent) || ie.EventID != bet.ID {
				t.Fatalf("%s: %s: applied %v, err %v; want an InvalidEventError", n, name, applied, err)
			}
		}
	}
	if after := state(t, s); !reflect.DeepEqual(before, after) {
		t.Fatalf("an invalid event changed the read models:\n%s", diffStates(before, after))
	}
	// and the valid event still applies in its place
	applyAll(t, s, bet)
	if b := state(t, s).Balances[dep.StreamID]; b.Balance != 90_00 {
		t.Errorf("balance %d, want 9000", b.Balance)
	}
}

func testDeadLetter(t *testing.T, newStore func(t *testing.T) Store) {
	l := NewLedger(t, day1)
	dep := l.Deposit(Client("acme", "p1", "dep", EUR), "100.00")
	lost := l.Bet(Game("b1", "r1"), "10.00")
	next := l.Bet(Game("b2", "r2"), "1.00")
	s := newStore(t)
	applyAll(t, s, dep)
	for _, n := range projections.All {
		if err := s.DeadLetter(t.Context(), n, lost); err != nil {
			t.Fatalf("%s: dead letter: %v", n, err)
		}
	}
	// the stream's next event applies; the lost one, come again, is past
	applyAll(t, s, next)
	for _, n := range projections.All {
		if applied, err := s.Apply(t.Context(), projection(t, n), lost); applied || err != nil {
			t.Fatalf("%s: the dead letter again: applied %v, %v", n, applied, err)
		}
	}
	settleAll(t, s, next.Position)
	st := state(t, s)
	if _, ok := st.Rows[lost.ID]; ok {
		t.Error("the dead letter is in the history")
	}
	if _, ok := st.Rows[next.ID]; !ok {
		t.Error("the event after the dead letter is not in the history")
	}
	if b := st.Balances[dep.StreamID]; b.Balance != 99_00 || b.Position != next.Position {
		t.Errorf("balance %+v, want 99.00 (the dead letter left out) at %d", b, next.Position)
	}
	for _, n := range projections.All {
		k := projections.StreamKey{Projection: n, StreamID: string(dep.StreamID)}
		if c := st.Checkpoints[k]; c.Version != next.Version {
			t.Errorf("%s checkpoint %+v, want version %d", n, c, next.Version)
		}
	}
}
