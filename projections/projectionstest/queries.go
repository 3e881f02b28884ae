// Watermark numbering, and the queries of a store that answers them.

package projectionstest

import (
	"cmp"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/projections"
)

// numbered is what the watermark's numbering must give, from the rows the
// store holds: each client's rows with seq up to the watermark in (seq,
// sub) order, their counts per type and per player, and their days.
func numbered(st State, watermark int64) (order map[string][]string, counts map[projections.FilterValue]int64,
	days map[projections.ClientDay]projections.SeqRange) {
	var rows []projections.Transaction
	for _, r := range st.Rows {
		if r.Seq <= watermark {
			rows = append(rows, r)
		}
	}
	slices.SortFunc(rows, func(a, b projections.Transaction) int {
		return cmp.Or(cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.Sub, b.Sub))
	})
	order, counts, days = map[string][]string{}, map[projections.FilterValue]int64{}, map[projections.ClientDay]projections.SeqRange{}
	for _, r := range rows {
		order[r.ClientID] = append(order[r.ClientID], r.ID)
		counts[projections.FilterValue{ClientID: r.ClientID, Filter: projections.FilterType, Value: string(r.Type)}]++
		if r.PlayerID != "" {
			counts[projections.FilterValue{ClientID: r.ClientID, Filter: projections.FilterPlayer, Value: r.PlayerID}]++
		}
		k := projections.ClientDay{ClientID: r.ClientID, Day: midnight(r.CreatedAt)}
		d, ok := days[k]
		if !ok {
			d = projections.SeqRange{Min: r.Seq, Max: r.Seq}
		}
		days[k] = projections.SeqRange{Min: min(d.Min, r.Seq), Max: max(d.Max, r.Seq)}
	}
	return order, counts, days
}

func checkNumbered(t *testing.T, st State, watermark int64) {
	t.Helper()
	order, counts, days := numbered(st, watermark)
	if !reflect.DeepEqual(st.Order, order) {
		t.Errorf("numbered history up to %d:\n%v\nwant\n%v", watermark, st.Order, order)
	}
	if !maps.Equal(st.FilterCounts, counts) {
		t.Errorf("filter counts up to %d:\n%v\nwant\n%v", watermark, st.FilterCounts, counts)
	}
	if !maps.Equal(st.Days, days) {
		t.Errorf("days up to %d:\n%v\nwant\n%v", watermark, st.Days, days)
	}
	for _, n := range projections.All {
		if st.Positions[n] != watermark {
			t.Errorf("%s watermark %d, want %d", n, st.Positions[n], watermark)
		}
	}
}

// The watermark numbers each client's history rows in (seq, sub) order, a
// step at a time: rows numbered once keep their numbers, a game result
// changed later stays where it was numbered, and rows above the
// watermark are not numbered yet.
func testWatermark(t *testing.T, newStore func(t *testing.T) Store) {
	l := richLedger(t)
	first, rest := l.Events[:8], l.Events[8:]
	s := newStore(t)
	applyAll(t, s, first...)
	if st := state(t, s); len(st.Order) != 0 || len(st.FilterCounts) != 0 || len(st.Positions) != 0 {
		t.Fatalf("numbered before any watermark: %v %v %v", st.Order, st.FilterCounts, st.Positions)
	}
	settleAll(t, s, last(first))
	st1 := state(t, s)
	checkNumbered(t, st1, last(first))
	if len(st1.Order["acme"]) < 8 || len(st1.Order["bolt"]) < 2 {
		t.Fatalf("numbered %v: the test proves little", st1.Order)
	}

	applyAll(t, s, rest...)
	st2 := state(t, s)
	if !reflect.DeepEqual(st2.Order, st1.Order) || !maps.Equal(st2.FilterCounts, st1.FilterCounts) {
		t.Errorf("rows above the watermark were numbered: %v", st2.Order)
	}
	settleAll(t, s, last(rest))
	st3 := state(t, s)
	checkNumbered(t, st3, last(rest))
	for c, ids := range st1.Order {
		if len(st3.Order[c]) < len(ids) || !slices.Equal(st3.Order[c][:len(ids)], ids) {
			t.Errorf("%s's rows were numbered again:\n%v\nthen\n%v", c, ids, st3.Order[c])
		}
	}
}

// matches is the filter rule of projections.TransactionFilter.
func matches(f projections.TransactionFilter, r projections.Transaction) bool {
	return r.ClientID == f.ClientID && (f.PlayerID == "" || r.PlayerID == f.PlayerID) &&
		(f.Type == "" || r.Type == f.Type) && (f.Status == "" || r.Status == f.Status) &&
		(f.Currency == "" || r.Currency == f.Currency) && (f.Provider == "" || r.Provider == f.Provider) &&
		(f.Game == "" || r.Game == f.Game) && (f.From.IsZero() || !r.CreatedAt.Before(f.From)) &&
		(f.To.IsZero() || r.CreatedAt.Before(f.To))
}

// Pages of the history are newest first ((seq, sub) descending), the rows
// a filter selects, the numbered ones and those above the watermark alike,
// with an exact total.
func testPages(t *testing.T, newStore func(t *testing.T) Store) {
	s := newStore(t)
	q, ok := s.(Queries)
	if !ok {
		t.Skip("the store answers no queries")
	}
	l := richLedger(t)
	applyAll(t, s, l.Events[:8]...)
	settleAll(t, s, l.Events[7].Position)
	applyAll(t, s, l.Events[8:]...) // above the watermark
	st := state(t, s)
	filters := []projections.TransactionFilter{
		{ClientID: "acme"},
		{ClientID: "bolt"},
		{ClientID: "acme", Type: projections.TypeBet},
		{ClientID: "acme", PlayerID: "p2"},
		{ClientID: "acme", Type: projections.TypeGameResult, Status: projections.StatusSettled},
		{ClientID: "acme", Status: projections.StatusRolledBack},
		{ClientID: "acme", Game: "slot-a", Provider: "prov", Currency: "EUR"},
		{ClientID: "acme", From: midnight(day2)},
		{ClientID: "acme", To: midnight(day2)},
		{ClientID: "nobody"},
	}
	for _, f := range filters {
		var want []projections.Transaction
		for _, r := range st.Rows {
			if matches(f, r) {
				want = append(want, r)
			}
		}
		slices.SortFunc(want, func(a, b projections.Transaction) int {
			return cmp.Or(cmp.Compare(b.Seq, a.Seq), cmp.Compare(b.Sub, a.Sub))
		})
		if len(want) == 0 && f.ClientID != "nobody" {
			t.Fatalf("%+v matches nothing: the test proves nothing", f)
		}
		const size = 3
		for page := 1; page <= len(want)/size+2; page++ {
			got, err := q.Transactions(t.Context(), f, projections.Page{Number: page, Size: size})
			if err != nil {
				t.Fatalf("%+v page %d: %v", f, page, err)
			}
			lo, hi := min((page-1)*size, len(want)), min(page*size, len(want))
			if !reflect.DeepEqual(ids(got.Rows), ids(want[lo:hi])) {
				t.Errorf("%+v page %d: %v, want %v", f, page, ids(got.Rows), ids(want[lo:hi]))
			}
			for i, r := range got.Rows {
				if !reflect.DeepEqual(r, want[lo+i]) {
					t.Errorf("%+v page %d row %d:\n%+v\nwant\n%+v", f, page, i, r, want[lo+i])
				}
			}
			if got.Total != int64(len(want)) || !got.TotalExact {
				t.Errorf("%+v page %d: total %d (exact %v), want %d", f, page, got.Total, got.TotalExact, len(want))
			}
		}
	}
}

func ids(rows []projections.Transaction) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.ID
	}
	return out
}

// A GGR report is the sum of the daily groups it covers, with the rounds
// counted where they start and each player once per group.
func testGGRReport(t *testing.T, newStore func(t *testing.T) Store) {
	s := newStore(t)
	q, ok := s.(Queries)
	if !ok {
		t.Skip("the store answers no queries")
	}
	l := richLedger(t)
	applyAll(t, s, l.Events...)
	settleAll(t, s, last(l.Events))
	st := state(t, s)
	type group struct {
		sum     projections.GGRRow
		players map[string]bool
	}
	for _, by := range [][]projections.Dimension{nil, {projections.DimDay}} {
		want := map[string]*group{}
		key := func(day time.Time, currency string) string {
			if len(by) == 0 {
				return currency
			}
			return day.Format(time.DateOnly) + " " + currency
		}
		for k, g := range st.GGR {
			if k.ClientID != "acme" {
				continue
			}
			w := want[key(k.Day, k.Currency)]
			if w == nil {
				w = &group{players: map[string]bool{}}
				want[key(k.Day, k.Currency)] = w
			}
			w.sum.Bets += g.Bets
			w.sum.BetRefunds += g.BetRefunds
			w.sum.Wins += g.Wins
			w.sum.WinReversals += g.WinReversals
			w.sum.PromoBets += g.PromoBets
			w.sum.PromoWins += g.PromoWins
			w.sum.PromoBetRefunds += g.PromoBetRefunds
			w.sum.PromoWinReversals += g.PromoWinReversals
			w.sum.JackpotWins += g.JackpotWins
			w.sum.JackpotWinReversals += g.JackpotWinReversals
			w.sum.Rounds += g.Rounds
		}
		for m := range st.Players {
			if m.ClientID == "acme" {
				want[key(m.Day, m.Currency)].players[m.Member] = true
			}
		}
		rows, err := q.GGR(t.Context(), projections.ReportQuery{ClientID: "acme", From: midnight(day1), To: midnight(day2),
			GroupBy: by})
		if err != nil {
			t.Fatalf("GGR by %v: %v", by, err)
		}
		if len(rows) != len(want) {
			t.Errorf("GGR by %v: %d rows, want %d", by, len(rows), len(want))
		}
		for _, r := range rows {
			w := want[key(r.Period, r.Currency)]
			if w == nil {
				t.Errorf("GGR by %v: a row %+v no group has", by, r)
				continue
			}
			got := r
			got.Period, got.Provider, got.Game, got.Currency, got.Scale, got.Players = time.Time{}, "", "", "", 0, 0
			if got != w.sum || r.Players != int64(len(w.players)) || r.Scale != 2 {
				t.Errorf("GGR by %v, %s: %+v, want %+v with %d players", by, key(r.Period, r.Currency), r, w.sum,
					len(w.players))
			}
		}
	}
}

// diffStates names the parts of two states that differ.
func diffStates(a, b State) string {
	var out []string
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range va.NumField() {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			out = append(out, fmt.Sprintf("%s: %v\n  then %v", va.Type().Field(i).Name, va.Field(i).Interface(),
				vb.Field(i).Interface()))
		}
	}
	return strings.Join(out, "\n")
}
