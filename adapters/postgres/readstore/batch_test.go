package readstore_test

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/postgres/readstore"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/projections"
)

// bbEv is one wallet event of a case of
// TestReadModelsBatchMergesGameResultsAndPlayers. Every event gets a stream
// of its own (the projection reads the player from the data), so any of
// them can share a batch, named so that a batch applies its events in the
// order the case lists them.
type bbEv struct {
	typ                      domain.EventType
	pos                      int64
	at                       time.Time
	player, game, round, cur string
	tx, ref                  string // the event's provider transaction, the one it undoes
	amount                   string // on the player's wallet, signed
	closed                   bool
}

func bbBet(pos int64, at time.Time, player, game, round, tx string) bbEv {
	return bbEv{typ: domain.EventBetPlaced, pos: pos, at: at, player: player, game: game, round: round, tx: tx, amount: "-1.00"}
}

func bbWin(pos int64, at time.Time, player, game, round, tx string, closed bool) bbEv {
	return bbEv{typ: domain.EventWinCredited, pos: pos, at: at, player: player, game: game, round: round, tx: tx,
		amount: "2.50", closed: closed}
}

func bbRollback(pos int64, at time.Time, player, round, tx, ref string) bbEv {
	return bbEv{typ: domain.EventBetRolledBack, pos: pos, at: at, player: player, round: round, tx: tx, ref: ref, amount: "1.00"}
}

func bbReversal(pos int64, at time.Time, player, round, tx, ref string) bbEv {
	return bbEv{typ: domain.EventWinReversed, pos: pos, at: at, player: player, round: round, tx: tx, ref: ref, amount: "-2.50"}
}

func bbEvents(batches [][]bbEv) [][]domain.Event {
	out := make([][]domain.Event, len(batches))
	n := 0
	for b, batch := range batches {
		for i, x := range batch {
			n++
			cur := cmp.Or(x.cur, "EUR")
			stream := domain.AccountID(fmt.Sprintf("player:acme:s%02d%02d:%s", b, i, cur))
			out[b] = append(out[b], domain.Event{ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", n), Type: x.typ,
				StreamID: stream, Version: 1, Position: x.pos, OccurredAt: x.at,
				Data: domain.EventData{ClientID: "acme", PlayerID: x.player, Provider: "prov", GameID: x.game,
					RoundID: x.round, ExternalTxID: x.tx, ReferenceTx: x.ref, Currency: cur, Amount: x.amount,
					RoundClosed: x.closed, Postings: []domain.Posting{{Account: stream, Amount: x.amount}}}})
		}
	}
	return out
}

// bbTables are the read models a batch's game results, players and rounds
// write, and the checkpoints.
var bbTables = []string{"transactions", "ggr_daily", "ggr_players", "ggr_player_months", "ggr_rounds", "checkpoints"}

// bbDump reads every row of bbTables, sorted.
func bbDump(t *testing.T, pool *pgxpool.Pool) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, tb := range bbTables {
		rows, _ := pool.Query(t.Context(), `SELECT to_jsonb(x)::text FROM readmodels.`+tb+` x ORDER BY 1`)
		rs, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatalf("read %s: %v", tb, err)
		}
		out[tb] = rs
	}
	return out
}

// bbQuery reads rows of a query as text, sorted.
func bbQuery(t *testing.T, pool *pgxpool.Pool, sql string) []string {
	t.Helper()
	rows, _ := pool.Query(t.Context(), sql)
	rs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	slices.Sort(rs)
	return rs
}

// bbMemory is what Postgres must hold of mem, in bbQuery's form.
func bbMemory(mem *projections.Memory) map[string][]string {
	day := func(t time.Time) string { return t.UTC().Format(time.DateOnly) }
	out := map[string][]string{}
	mem.Transactions(func(x *projections.Transaction) {
		out["transactions"] = append(out["transactions"], fmt.Sprintf("%s %s %d %s %s %s %s %d %d %d %d %d %t", x.ID,
			x.Type, x.Amount, x.Status, x.CreatedAt.UTC().Format(time.RFC3339Nano), x.Game, x.PlayerID, x.Seq, x.Position,
			x.OpenBets, x.RolledBets, x.Wins, x.Closed))
	})
	for k, g := range mem.GGR {
		out["ggr_daily"] = append(out["ggr_daily"], fmt.Sprintf("%s %s %s %d %d %d %d %d", day(k.Day), k.Game, k.Currency,
			g.Bets, g.BetRefunds, g.Wins, g.WinReversals, g.Rounds))
	}
	for p := range mem.Players {
		out["ggr_players"] = append(out["ggr_players"], fmt.Sprintf("%s %s %s %s", day(p.Day), p.Game, p.Currency, p.Member))
	}
	for k, days := range mem.PlayerMonths {
		out["ggr_player_months"] = append(out["ggr_player_months"], fmt.Sprintf("%s %s %s %d", day(k.Month), k.Currency,
			k.PlayerID, days))
	}
	for k, s := range mem.Rounds {
		out["ggr_rounds"] = append(out["ggr_rounds"], fmt.Sprintf("%s %s %s %s", k.Round, k.Currency, day(s.Day), s.Game))
	}
	for _, rs := range out {
		slices.Sort(rs)
	}
	return out
}

// The merged form of a batch's game results and players: a batch with
// several events of one round (bets, wins, rollbacks, a later event with a
// lower seq, one with an equal seq, a round closed half-way) and several
// players, days and games of one player writes what applying its events
// one per batch writes, in the order the batch applies them, and what
// Memory (the rebuild) holds.
func TestReadModelsBatchMergesGameResultsAndPlayers(t *testing.T) {
	t.Parallel()
	d1 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	d2 := time.Date(2025, 3, 2, 9, 30, 0, 0, time.UTC)
	jan := func(day int) time.Time { return time.Date(2024, 1, day, 10, 0, 0, 0, time.UTC) }
	feb := func(day int) time.Time { return time.Date(2024, 2, day, 10, 0, 0, 0, time.UTC) }
	usd := func(e bbEv) bbEv { e.cur = "USD"; return e }
	cases := []struct {
		name    string
		batches [][]bbEv
	}{
		{name: "one round", batches: [][]bbEv{
			{
				bbBet(10, d2, "p1", "g1", "R", "t1"),
				bbBet(7, d1, "p2", "g2", "R", "t2"), // later, lower seq: takes time, game and player
				bbWin(12, d2, "p1", "g1", "R", "t3", true),
				bbBet(13, d2, "p3", "g1", "R", "t4"), // after the close
				bbBet(7, d2, "p4", "g3", "R", "t7"),  // equal seq: the earlier row stays
				bbBet(14, d1, "p1", "g1", "S", "t8"),
				bbBet(9, d2, "p5", "g5", "S", "t9"),
			},
			{
				bbRollback(20, d2, "p1", "R", "r1", "t1"),
				bbWin(5, d2, "p2", "g4", "R", "t5", false), // lower seq than the stored row
				bbBet(21, d2, "p5", "g1", "R", "t6"),
				bbReversal(22, d2, "p1", "R", "r3", "t3"),
				bbRollback(23, d2, "p5", "S", "r9", "t9"),
			},
			{
				bbRollback(30, d2, "p2", "R", "r2", "t2"),
				bbRollback(31, d2, "p3", "R", "r4", "t4"),
				bbReversal(32, d2, "p2", "R", "r5", "t5"),
				bbRollback(33, d2, "p5", "R", "r6", "t6"),
				bbRollback(34, d2, "p4", "R", "r7", "t7"),
				bbBet(35, d1, "p6", "g1", "S", "t10"),
			},
		}},
		{name: "equal seqs of a new row", batches: [][]bbEv{
			{
				bbBet(40, d2, "p1", "g1", "T", "t1"),
				bbBet(40, d1, "p2", "g2", "T", "t2"),
				bbWin(40, d1, "p3", "g3", "T", "t3", true),
			},
			{
				bbBet(40, d1, "p4", "g4", "T", "t4"),
				bbWin(41, d1, "p1", "g1", "T", "t5", false),
			},
		}},
		{name: "one player", batches: [][]bbEv{
			{
				bbBet(1, jan(31), "p1", "a", "r1", "t1"),
				bbBet(2, jan(31), "p1", "b", "r2", "t2"),
				bbBet(3, jan(31), "p1", "a", "r3", "t3"), // the same member again
				bbBet(4, feb(1), "p1", "a", "r4", "t4"),
				bbBet(5, feb(29), "p1", "a", "r5", "t5"),
				usd(bbBet(6, feb(1), "p1", "a", "r6", "t6")),
				bbBet(7, feb(1), "p2", "a", "r7", "t7"),
				bbBet(8, jan(2), "p1", "a", "r1", "t8"), // and a round of it again
			},
			{
				bbBet(9, jan(31), "p1", "a", "r9", "t9"),    // member exists
				bbBet(10, jan(15), "p1", "c", "r10", "t10"), // a new day in a month
				bbBet(11, feb(29), "p1", "b", "r11", "t11"), // a new member, its day set already
				bbBet(12, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), "p2", "a", "r12", "t12"),
				usd(bbBet(13, feb(1), "p1", "b", "r13", "t13")),
			},
		}},
	}
	hist, err := projections.ByName(projections.History)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			batches := bbEvents(c.batches)
			batchedPool, _ := pgtest.NewDatabase(t)
			onePool, _ := pgtest.NewDatabase(t)
			batched, one := readstore.NewReadModels(batchedPool), readstore.NewReadModels(onePool)
			mem := projections.NewMemory()
			for b, batch := range batches {
				res, err := batched.ApplyBatch(t.Context(), hist, batch)
				if err != nil {
					t.Fatalf("batch %d: %v", b, err)
				}
				for i, r := range res {
					if !r.Applied || r.Err != nil {
						t.Fatalf("batch %d, event %d: %+v", b, i, r)
					}
				}
				// The oracle applies them in the batch's order: by stream.
				sorted := slices.SortedFunc(slices.Values(batch), func(a, b domain.Event) int {
					return strings.Compare(string(a.StreamID), string(b.StreamID))
				})
				for i, e := range sorted {
					if ok, err := one.Apply(t.Context(), hist, e); !ok || err != nil {
						t.Fatalf("batch %d, event %d alone: applied %t, %v", b, i, ok, err)
					}
					if ok, err := mem.Apply(hist, e); !ok || err != nil {
						t.Fatalf("batch %d, event %d in memory: applied %t, %v", b, i, ok, err)
					}
				}
			}

			got, want := bbDump(t, batchedPool), bbDump(t, onePool)
			for _, tb := range bbTables {
				if !slices.Equal(got[tb], want[tb]) {
					t.Errorf("%s, batched:\n%s\none event per batch:\n%s", tb, strings.Join(got[tb], "\n"),
						strings.Join(want[tb], "\n"))
				}
			}
			if len(got["transactions"]) == 0 || len(got["ggr_players"]) == 0 {
				t.Fatalf("nothing written: %v", got)
			}

			live := map[string][]string{
				"transactions": bbQuery(t, batchedPool, `SELECT concat_ws(' ', id, type, amount, status,
					to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), coalesce(game, ''),
					coalesce(player_id, ''), seq, position, open_bets, rolled_bets, wins, closed::text)
					FROM readmodels.transactions`),
				"ggr_daily": bbQuery(t, batchedPool, `SELECT concat_ws(' ', day, game, currency, bets, bet_refunds, wins,
					win_reversals, rounds) FROM readmodels.ggr_daily`),
				"ggr_players": bbQuery(t, batchedPool, `SELECT concat_ws(' ', day, game, currency, player_id)
					FROM readmodels.ggr_players`),
				"ggr_player_months": bbQuery(t, batchedPool, `SELECT concat_ws(' ', month, currency, player_id, days)
					FROM readmodels.ggr_player_months`),
				"ggr_rounds": bbQuery(t, batchedPool, `SELECT concat_ws(' ', round_key, currency, day, game)
					FROM readmodels.ggr_rounds`),
			}
			fromMem := bbMemory(mem)
			for tb, rows := range live {
				if !slices.Equal(rows, fromMem[tb]) {
					t.Errorf("%s, Postgres:\n%s\nMemory:\n%s", tb, strings.Join(rows, "\n"), strings.Join(fromMem[tb], "\n"))
				}
			}
		})
	}
}
