package domain_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/domain"
)

func TestEventsCarryTheirContext(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	env := domain.Env{Now: time.Date(2025, 3, 1, 13, 0, 0, 5, cet), EventID: "ev-42",
		Meta: domain.Metadata{RequestID: "req-1", CorrelationID: "corr-1", Actor: "provider:pragmatic"}}
	v := domain.NewView()
	v.LoadAccount(wallet, domain.AccountState{Balance: 10000, Version: 4})
	v.LoadRecord(domain.TxRecord{Key: domain.GameTxKey(client, provider, "b0"), Kind: domain.TxBet, Account: wallet,
		PlayerID: player, Currency: "EUR", Amount: 300, RoundID: "r0"})

	tests := []struct {
		name string
		when decision
		want domain.EventData
	}{
		{name: "bet",
			when: bet("b1", amt("2.50"), inRound("r1"), closingRound, asPromo),
			want: domain.EventData{ClientID: client, PlayerID: player, Provider: provider, GameID: "sweet-bonanza",
				RoundID: "r1", SessionID: "s-1", ExternalTxID: "b1", Currency: "EUR", Amount: "2.50",
				BalanceAfter: "97.50", RoundClosed: true, Promo: true,
				Postings: []domain.Posting{post(wallet, "-2.50"), post(house, "2.50")}}},
		{name: "win names its bet",
			when: win("w1", amt("1.00"), "b0", inRound("r0")),
			want: domain.EventData{ClientID: client, PlayerID: player, Provider: provider, GameID: "sweet-bonanza",
				RoundID: "r0", SessionID: "s-1", ExternalTxID: "w1", ReferenceTx: "b0", Currency: "EUR", Amount: "1.00",
				BalanceAfter: "101.00", Postings: []domain.Posting{post(house, "-1.00"), post(wallet, "1.00")}}},
		{name: "free bet carries its campaign and reward",
			when: bet("b1", amt("0"), inRound("r1"), freeBet("c-1", "rw-1")),
			want: domain.EventData{ClientID: client, PlayerID: player, Provider: provider, GameID: "sweet-bonanza",
				RoundID: "r1", SessionID: "s-1", ExternalTxID: "b1", Currency: "EUR", Amount: "0.00",
				BalanceAfter: "100.00", Promo: true, CampaignID: "c-1", RewardID: "rw-1",
				Postings: []domain.Posting{post(wallet, "0.00"), post(house, "0.00")}}},
		{name: "win carries its jackpot part",
			when: win("w1", amt("12.00"), "b0", inRound("r0"), withJackpot(amt("10.00"))),
			want: domain.EventData{ClientID: client, PlayerID: player, Provider: provider, GameID: "sweet-bonanza",
				RoundID: "r0", SessionID: "s-1", ExternalTxID: "w1", ReferenceTx: "b0", Currency: "EUR", Amount: "12.00",
				BalanceAfter: "112.00", Jackpot: "10.00",
				Postings: []domain.Posting{post(house, "-12.00"), post(wallet, "12.00")}}},
		{name: "rollback takes the round of the bet it refunds",
			when: rollback("rb1", "b0", inRound("other")),
			want: domain.EventData{ClientID: client, PlayerID: player, Provider: provider, GameID: "sweet-bonanza",
				RoundID: "r0", SessionID: "s-1", ExternalTxID: "rb1", ReferenceTx: "b0", Currency: "EUR", Amount: "3.00",
				BalanceAfter: "103.00", Postings: []domain.Posting{post(house, "-3.00"), post(wallet, "3.00")}}},
		{name: "rollback of an unknown transaction",
			when: rollback("rb1", "b9", inRound("r9")),
			want: domain.EventData{ClientID: client, PlayerID: player, Provider: provider, GameID: "sweet-bonanza",
				RoundID: "r9", SessionID: "s-1", ExternalTxID: "rb1", ReferenceTx: "b9", Currency: "EUR", Amount: "0.00",
				BalanceAfter: "100.00", Postings: []domain.Posting{}}},
		{name: "transfer names its direction",
			when: transfer("t1", amt("1.00"), domain.FromPlayer, forPlayer(player), clientWith(func(c *domain.ClientTx) { c.Reason = "cash out" })),
			want: domain.EventData{ClientID: client, PlayerID: player, ExternalTxID: "t1", Currency: "EUR", Amount: "1.00",
				BalanceAfter: "99.00", Direction: domain.FromPlayer, Reason: "cash out",
				Postings: []domain.Posting{post(wallet, "-1.00"), post(clientWallet, "1.00")}}},
		{name: "adjustment keeps its reason",
			when: adjustment("a1", amt("-1.00"), forPlayer(player), clientWith(func(c *domain.ClientTx) { c.Reason = "chargeback #7" })),
			want: domain.EventData{ClientID: client, PlayerID: player, ExternalTxID: "a1", Currency: "EUR", Amount: "-1.00",
				BalanceAfter: "99.00", Reason: "chargeback #7",
				Postings: []domain.Posting{post(external, "1.00"), post(wallet, "-1.00")}}},
		{name: "balance sync names the launch's game",
			when: balanceSync("s1", amt("100.00"), forPlayer(player)),
			want: domain.EventData{ClientID: client, PlayerID: player, Provider: provider, GameID: "sweet-bonanza",
				SessionID: "s-1", ExternalTxID: "s1", Currency: "EUR", Amount: "100.00", BalanceAfter: "100.00",
				Postings: []domain.Posting{post(external, "0.00"), post(wallet, "0.00")}}},
		{name: "launch carries its expiry in UTC",
			when: launch("l1", time.Date(2025, 3, 1, 14, 30, 0, 999, cet)),
			want: domain.EventData{ClientID: client, PlayerID: player, Provider: provider, GameID: "sweet-bonanza",
				SessionID: "s-1", ExternalTxID: "l1", Currency: "EUR", Amount: "0.00", BalanceAfter: "100.00",
				ExpiresAt: "2025-03-01T13:30:00Z", Postings: []domain.Posting{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch, err := tt.when(v, env)
			if err != nil {
				t.Fatal(err)
			}
			e := ch.Event
			if e.ID != "ev-42" || e.Meta != env.Meta {
				t.Errorf("id %q meta %+v, want ev-42 and %+v", e.ID, e.Meta, env.Meta)
			}
			if !e.OccurredAt.Equal(env.Now) || e.OccurredAt.Location() != time.UTC {
				t.Errorf("occurred_at = %v, want %v in UTC", e.OccurredAt, env.Now)
			}
			if !reflect.DeepEqual(e.Data, tt.want) {
				t.Errorf("data =\n%+v\nwant\n%+v", e.Data, tt.want)
			}
		})
	}
}

// The commands layer answers retries from the first record of a change:
// every decision must put the call's own idempotency record first.
func TestDecisionsRecordTheirOwnTransactionFirst(t *testing.T) {
	roundKey := domain.RoundKey(client, provider, "r1")
	tests := []struct {
		name  string
		given []decision
		when  decision
		want  []domain.TxRecord // compared on key, kind, player, amount, round, rolled back, counters
	}{
		{name: "bet in a round",
			given: []decision{fund("10.00")},
			when:  bet("b1", amt("1.00"), inRound("r1")),
			want: []domain.TxRecord{
				{Key: domain.GameTxKey(client, provider, "b1"), Kind: domain.TxBet, PlayerID: player, Amount: 100, RoundID: "r1"},
				{Key: roundKey, Kind: domain.TxRound, PlayerID: player, RoundID: "r1", OpenBets: 1},
			}},
		{name: "bet closing its round",
			given: []decision{fund("10.00"), bet("b1", amt("1.00"), inRound("r1"))},
			when:  bet("b2", amt("2.00"), inRound("r1"), closingRound),
			want: []domain.TxRecord{
				{Key: domain.GameTxKey(client, provider, "b2"), Kind: domain.TxBet, PlayerID: player, Amount: 200, RoundID: "r1"},
				{Key: roundKey, Kind: domain.TxRound, PlayerID: player, RoundID: "r1", OpenBets: 2, Closed: true},
			}},
		{name: "bet outside a round",
			given: []decision{fund("10.00")},
			when:  bet("b1", amt("1.00")),
			want:  []domain.TxRecord{{Key: domain.GameTxKey(client, provider, "b1"), Kind: domain.TxBet, PlayerID: player, Amount: 100}},
		},
		{name: "win closing a round settles the bet it names",
			given: []decision{fund("10.00"), bet("b1", amt("1.00"), inRound("r1"))},
			when:  win("w1", amt("3.00"), "b1", inRound("r1"), closingRound),
			want: []domain.TxRecord{
				{Key: domain.GameTxKey(client, provider, "w1"), Kind: domain.TxWin, PlayerID: player, Amount: 300, RoundID: "r1",
					Settles: domain.GameTxKey(client, provider, "b1")},
				{Key: roundKey, Kind: domain.TxRound, PlayerID: player, RoundID: "r1", OpenBets: 1, Closed: true},
				{Key: domain.GameTxKey(client, provider, "b1"), Kind: domain.TxBet, PlayerID: player, Amount: 100, RoundID: "r1", Wins: 1},
			}},
		{name: "win naming no bet settles its round",
			given: []decision{fund("10.00"), bet("b1", amt("1.00"), inRound("r1"))},
			when:  win("w1", amt("3.00"), "", inRound("r1")),
			want: []domain.TxRecord{
				{Key: domain.GameTxKey(client, provider, "w1"), Kind: domain.TxWin, PlayerID: player, Amount: 300, RoundID: "r1",
					Settles: roundKey},
				{Key: roundKey, Kind: domain.TxRound, PlayerID: player, RoundID: "r1", OpenBets: 1, Wins: 1},
			}},
		{name: "win outside a round naming no bet settles nothing",
			when: win("w1", amt("3.00"), ""),
			want: []domain.TxRecord{{Key: domain.GameTxKey(client, provider, "w1"), Kind: domain.TxWin, PlayerID: player, Amount: 300}}},
		{name: "reversal of a win takes it off the bet it settled",
			given: []decision{fund("10.00"), bet("b1", amt("1.00"), inRound("r1")), win("w1", amt("3.00"), "b1", inRound("r1"))},
			when:  rollback("rw1", "w1"),
			want: []domain.TxRecord{
				{Key: domain.GameTxKey(client, provider, "rw1"), Kind: domain.TxRollback, PlayerID: player, Amount: 300},
				{Key: domain.GameTxKey(client, provider, "w1"), Kind: domain.TxWin, PlayerID: player, Amount: 300, RoundID: "r1",
					RolledBack: true, Settles: domain.GameTxKey(client, provider, "b1")},
				{Key: domain.GameTxKey(client, provider, "b1"), Kind: domain.TxBet, PlayerID: player, Amount: 100, RoundID: "r1"},
			}},
		{name: "reversal of a win takes it off the round it settled",
			given: []decision{fund("10.00"), bet("b1", amt("1.00"), inRound("r1")), win("w1", amt("3.00"), "", inRound("r1"))},
			when:  rollback("rw1", "w1"),
			want: []domain.TxRecord{
				{Key: domain.GameTxKey(client, provider, "rw1"), Kind: domain.TxRollback, PlayerID: player, Amount: 300},
				{Key: domain.GameTxKey(client, provider, "w1"), Kind: domain.TxWin, PlayerID: player, Amount: 300, RoundID: "r1",
					RolledBack: true, Settles: roundKey},
				{Key: roundKey, Kind: domain.TxRound, PlayerID: player, RoundID: "r1", OpenBets: 1},
			}},
		{name: "refund marks the bet and the round",
			given: []decision{fund("10.00"), bet("b1", amt("1.00"), inRound("r1"))},
			when:  rollback("rb1", "b1", inRound("r1")),
			want: []domain.TxRecord{
				{Key: domain.GameTxKey(client, provider, "rb1"), Kind: domain.TxRollback, PlayerID: player, Amount: 100, RoundID: "r1"},
				{Key: domain.GameTxKey(client, provider, "b1"), Kind: domain.TxBet, PlayerID: player, Amount: 100, RoundID: "r1", RolledBack: true},
				{Key: roundKey, Kind: domain.TxRound, PlayerID: player, RoundID: "r1", RolledBets: 1},
			}},
		{name: "rollback of an unknown transaction leaves a tombstone",
			when: rollback("rb1", "b1", inRound("r1")),
			want: []domain.TxRecord{
				{Key: domain.GameTxKey(client, provider, "rb1"), Kind: domain.TxRollback, PlayerID: player, RoundID: "r1"},
				{Key: domain.GameTxKey(client, provider, "b1"), Kind: domain.TxTombstone, PlayerID: player, RoundID: "r1"},
			}},
		{name: "deposit",
			when: deposit("d1", amt("5.00")),
			want: []domain.TxRecord{{Key: domain.ClientTxKey(client, "d1"), Kind: domain.TxDeposit, Amount: 500}}},
		{name: "withdrawal",
			given: []decision{fund("10.00")},
			when:  withdrawal("w1", amt("5.00"), forPlayer(player)),
			want:  []domain.TxRecord{{Key: domain.ClientTxKey(client, "w1"), Kind: domain.TxWithdrawal, PlayerID: player, Amount: 500}}},
		{name: "transfer",
			given: []decision{deposit("d1", amt("10.00"))},
			when:  transfer("t1", amt("5.00"), domain.ToPlayer, forPlayer(player)),
			want:  []domain.TxRecord{{Key: domain.ClientTxKey(client, "t1"), Kind: domain.TxTransfer, PlayerID: player, Amount: 500}}},
		{name: "adjustment",
			when: adjustment("a1", amt("5.00"), forPlayer(player)),
			want: []domain.TxRecord{{Key: domain.ClientTxKey(client, "a1"), Kind: domain.TxAdjustment, PlayerID: player, Amount: 500}}},
		{name: "balance sync",
			when: balanceSync("s1", amt("5.00"), forPlayer(player)),
			want: []domain.TxRecord{{Key: domain.ClientTxKey(client, "s1"), Kind: domain.TxSync, PlayerID: player, Amount: 500}}},
		{name: "launch",
			when: launch("l1", t0),
			want: []domain.TxRecord{{Key: domain.ClientTxKey(client, "l1"), Kind: domain.TxLaunch, PlayerID: player}}},
	}
	type shape struct {
		Key, PlayerID, RoundID, Settles string
		Kind                            domain.TxKind
		Amount, Open, Rolled, Wins      int64
		RolledBack, Closed              bool
	}
	shapeOf := func(r domain.TxRecord) shape {
		return shape{r.Key, r.PlayerID, r.RoundID, r.Settles, r.Kind, r.Amount, r.OpenBets, r.RolledBets, r.Wins, r.RolledBack, r.Closed}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := given(t, tt.given...)
			ch, e, err := h.when(tt.when)
			if err != nil {
				t.Fatal(err)
			}
			if len(ch.Records) != len(tt.want) {
				t.Fatalf("%d records, want %d: %+v", len(ch.Records), len(tt.want), ch.Records)
			}
			for i, w := range tt.want {
				if got := shapeOf(ch.Records[i]); got != shapeOf(w) {
					t.Errorf("record %d =\n%+v\nwant\n%+v", i, got, shapeOf(w))
				}
			}
			own := ch.Records[0]
			if own.EventID != e.ID || own.Account != e.StreamID || own.Currency != e.Data.Currency {
				t.Errorf("own record names event %q account %s currency %s; event is %q on %s in %s",
					own.EventID, own.Account, own.Currency, e.ID, e.StreamID, e.Data.Currency)
			}
			if r, ok := h.v.Record(own.Key); !ok || r.Kind != own.Kind {
				t.Errorf("view holds %+v, %v for %s after apply", r, ok, own.Key)
			}
		})
	}
}

func TestRollbackBeforeOriginal(t *testing.T) {
	h := given(t, fund("50.00"), rollback("rb1", "b1", inRound("r1")))
	if got := h.balance(wallet); got != 5000 {
		t.Fatalf("a rollback of an unknown transaction moved money: wallet %d", got)
	}
	tests := []struct {
		name    string
		when    decision
		wantErr error
	}{
		{name: "late bet", when: bet("b1", amt("10.00"), inRound("r1")), wantErr: domain.ErrRolledBackEarlier},
		{name: "late bet of another player", when: bet("b1", amt("0"), by(stranger), asPromo), wantErr: domain.ErrRolledBackEarlier},
		{name: "late win", when: win("b1", amt("10.00"), "", inRound("r1")), wantErr: domain.ErrRolledBackEarlier},
		{name: "win on the late bet", when: win("w1", amt("10.00"), "b1", inRound("r1")), wantErr: domain.ErrBetRolledBack},
		{name: "another rollback of it", when: rollback("rb2", "b1"), wantErr: domain.ErrAlreadyRolledBack},
		{name: "a bet of the same id at another provider is another transaction",
			when: bet("b1", amt("10.00"), gameWith(func(g *domain.GameTx) { g.Provider = "evolution" }))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.when(h.v, h.env())
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

// TestLedgerInvariantsUnderRandomTraffic throws a seeded random mix of
// calls at one view and checks after each one what no sequence may break:
// every currency's balances sum to zero, no wallet is below zero, each
// stream's versions count up by one, a transaction is rolled back at most
// once, and a tombstoned id never books.
func TestLedgerInvariantsUnderRandomTraffic(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0x5eed))
			h := given(t)
			players := []string{"p-1", "p-2", "p-3"}
			curs := []domain.Currency{eur, btc, jpy}
			var ids []string // every game transaction id used so far
			rolledBack := map[string]int{}
			tombstoned := map[string]bool{}
			versions := map[domain.AccountID]int64{}
			// What settles a bet, from the events alone: the wins naming it
			// and the wins naming no bet in its round, not reversed.
			betWins, roundWins := map[string]int{}, map[string]int{}
			betRound := map[string]string{}
			winSettles := map[string]func(int){}
			seen := map[string]int{} // event types and errors, to prove the walk went places
			randAmount := func(c domain.Currency) domain.Money {
				return domain.FromMinor(rng.Int64N(5000), c)
			}
			pick := func() string {
				if len(ids) == 0 || rng.IntN(5) == 0 {
					return fmt.Sprintf("tx-%d", rng.IntN(1_000_000))
				}
				return ids[rng.IntN(len(ids))]
			}
			for step := range 3000 {
				p, c := players[rng.IntN(len(players))], curs[rng.IntN(len(curs))]
				g := func() []gameOpt {
					return []gameOpt{by(p), inCur(c), inRound(fmt.Sprintf("r%d", rng.IntN(40)))}
				}
				id := fmt.Sprintf("g-%d", step)
				ownKey := domain.ClientTxKey(client, id)
				var d decision
				var kind string
				switch rng.IntN(9) {
				case 0:
					d, kind = deposit(id, randAmount(c), forPlayer(p), clientIn(c)), "deposit"
				case 1:
					d, kind = deposit(id, randAmount(c), clientIn(c)), "float"
				case 2:
					d, kind = transfer(id, randAmount(c), []string{domain.ToPlayer, domain.FromPlayer}[rng.IntN(2)], forPlayer(p), clientIn(c)), "transfer"
				case 3:
					d, kind = withdrawal(id, randAmount(c), forPlayer(p), clientIn(c)), "withdrawal"
				case 4:
					d, kind = adjustment(id, domain.FromMinor(rng.Int64N(2000)-1000, c), forPlayer(p), clientIn(c)), "adjustment"
				case 5, 6:
					if rng.IntN(3) == 0 {
						id = pick()
					}
					ownKey = domain.GameTxKey(client, provider, id)
					d, kind = bet(id, randAmount(c), g()...), "bet"
				case 7:
					if rng.IntN(4) == 0 {
						id = pick()
					}
					ref := ""
					if rng.IntN(2) == 0 {
						ref = pick()
					}
					ownKey = domain.GameTxKey(client, provider, id)
					d, kind = win(id, randAmount(c), ref, g()...), "win"
				case 8:
					ref := pick()
					ownKey = domain.GameTxKey(client, provider, id)
					d, kind = rollback(id, ref, g()...), "rollback:"+ref
				}
				// A known id is a retry: commands answer it from the record
				// and never ask the domain again.
				if r, ok := h.v.Record(ownKey); ok && r.Kind != domain.TxTombstone {
					continue
				}
				ch, err := d(h.v, h.env())
				if err != nil {
					seen[sentinelOf(err)]++
				}
				if ref, ok := strings.CutPrefix(kind, "rollback:"); ok && errors.Is(err, domain.ErrBetSettled) {
					if r := betRound[ref]; betWins[ref] == 0 && (r == "" || roundWins[r] == 0) {
						t.Fatalf("step %d: rollback of bet %s refused as settled, but no win settles it", step, ref)
					}
				}
				if err == nil {
					var e domain.Event
					e, err = h.v.Apply(ch)
					if err != nil {
						t.Fatalf("step %d %s: decided but Apply refused: %v", step, kind, err)
					}
					if e.Version != versions[e.StreamID]+1 {
						t.Fatalf("step %d: %s version %d after %d", step, e.StreamID, e.Version, versions[e.StreamID])
					}
					versions[e.StreamID] = e.Version
					seen[string(e.Type)]++
					if (kind == "bet" || kind == "win") && tombstoned[e.Data.ExternalTxID] {
						t.Fatalf("step %d: %s %s booked after it was rolled back", step, kind, e.Data.ExternalTxID)
					}
					switch e.Type {
					case domain.EventBetRolledBack, domain.EventWinReversed:
						if rolledBack[e.Data.ReferenceTx]++; rolledBack[e.Data.ReferenceTx] > 1 {
							t.Fatalf("step %d: %s rolled back twice", step, e.Data.ReferenceTx)
						}
					}
					switch d := e.Data; e.Type {
					case domain.EventBetPlaced:
						betRound[d.ExternalTxID] = d.RoundID
					case domain.EventWinCredited:
						ref, round := d.ReferenceTx, d.RoundID
						switch {
						case ref != "":
							betWins[ref]++
							winSettles[d.ExternalTxID] = func(n int) { betWins[ref] += n }
						case round != "":
							roundWins[round]++
							winSettles[d.ExternalTxID] = func(n int) { roundWins[round] += n }
						}
					case domain.EventWinReversed:
						if f := winSettles[d.ReferenceTx]; f != nil {
							f(-1)
						}
					case domain.EventBetRolledBack:
						if r := betRound[d.ReferenceTx]; betWins[d.ReferenceTx] > 0 || (r != "" && roundWins[r] > 0) {
							t.Fatalf("step %d: bet %s refunded while a win settles it", step, d.ReferenceTx)
						}
					}
					switch e.Type {
					case domain.EventRollbackRecorded:
						tombstoned[e.Data.ReferenceTx] = true
						ids = append(ids, e.Data.ReferenceTx)
					case domain.EventBetPlaced, domain.EventWinCredited:
						ids = append(ids, e.Data.ExternalTxID)
					}
				}
				sums := map[string]int64{}
				for id, s := range h.v.DirtyAccounts() {
					sums[id.CurrencyCode()] += s.Balance
					if s.Balance < 0 && !id.Kind().MayGoNegative() {
						t.Fatalf("step %d: %s at %d", step, id, s.Balance)
					}
				}
				for cur, s := range sums {
					if s != 0 {
						t.Fatalf("step %d: %s balances sum to %d", step, cur, s)
					}
				}
			}
			for _, want := range []string{string(domain.EventBetPlaced), string(domain.EventWinCredited),
				string(domain.EventBetRolledBack), string(domain.EventWinReversed), string(domain.EventRollbackRecorded),
				string(domain.EventTransferred), domain.ErrInsufficientFunds.Error(), domain.ErrAlreadyRolledBack.Error(),
				domain.ErrRolledBackEarlier.Error(), domain.ErrBetSettled.Error()} {
				if seen[want] == 0 {
					t.Errorf("the walk never saw %s: it tests too little (%v)", want, seen)
				}
			}
			t.Logf("%v", seen)
		})
	}
}

// sentinelOf names the domain sentinel err wraps.
func sentinelOf(err error) string {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return s.Error()
		}
	}
	return err.Error()
}
