package replaypass

import (
	"reflect"
	"testing"
	"time"

	"github.com/pitboss/pitboss/projections"
)

// The tracker records, per pass, only the carried rows the pass changed
// (balances and checkpoints above the last pass's position, GGR groups
// that differ from what was recorded), and a memory restored from every
// pass's rows, the last one's winning, equals the one that made them, map
// keys included (a GGR day read back is the UTC midnight the projections
// make).
func TestTrackerDeltaAndRestore(t *testing.T) {
	day := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	key := projections.GGRKey{ClientID: "c1", Day: day, Provider: "p", Game: "g", Currency: "EUR"}
	mem := projections.NewMemory()
	mem.Balances["player:c1:a:EUR"] = &projections.Balance{Account: "player:c1:a:EUR", Kind: "player", ClientID: "c1",
		PlayerID: "a", Currency: "EUR", Scale: 2, Balance: 1050, Position: 3}
	mem.Balances["player:c1:b:EUR"] = &projections.Balance{Account: "player:c1:b:EUR", Kind: "player", ClientID: "c1",
		PlayerID: "b", Currency: "EUR", Scale: 2, Balance: -7, Position: 5}
	mem.Checkpoints[projections.StreamKey{Projection: projections.History, StreamID: "player:c1:a:EUR"}] =
		projections.StreamCheckpoint{Version: 2, Position: 3}
	mem.GGR[key] = &projections.GGRDelta{GGRKey: key, Scale: 2, Bets: 100, Wins: 40, Rounds: 1}

	tr := NewTracker(0)
	first, err := tr.Delta(mem, 5)
	if err != nil {
		t.Fatal(err)
	}
	if kinds := countKinds(first); !reflect.DeepEqual(kinds, map[string]int{kindBalance: 2, kindCheckpoint: 1, kindGGR: 1}) {
		t.Fatalf("first pass: %v, want every row", kinds)
	}

	// The second pass changes one balance and the GGR group.
	mem.Balances["player:c1:b:EUR"].Balance += 10
	mem.Balances["player:c1:b:EUR"].Position = 8
	mem.GGR[key].Wins += 5
	second, err := tr.Delta(mem, 9)
	if err != nil {
		t.Fatal(err)
	}
	if kinds := countKinds(second); !reflect.DeepEqual(kinds, map[string]int{kindBalance: 1, kindGGR: 1}) {
		t.Fatalf("second pass: %v, want the changed balance and GGR group", kinds)
	}
	if third, err := tr.Delta(mem, 12); err != nil || len(third) != 0 {
		t.Fatalf("a pass that changed nothing: %v %v", third, err)
	}

	// Restore: per key the later pass's row.
	latest := map[string]Carry{}
	for _, c := range append(first, second...) {
		latest[c.Kind+c.Key] = c
	}
	restored := projections.NewMemory()
	back := NewTracker(9)
	for _, c := range latest {
		if err := back.Restore(restored, c); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(restored.Balances, mem.Balances) || !reflect.DeepEqual(restored.Checkpoints, mem.Checkpoints) ||
		!reflect.DeepEqual(restored.GGR, mem.GGR) {
		t.Fatalf("restored %+v %+v %+v, want %+v %+v %+v", restored.Balances, restored.Checkpoints, restored.GGR,
			mem.Balances, mem.Checkpoints, mem.GGR)
	}
	if g := restored.GGR[key]; g == nil || g.Wins != 45 {
		t.Fatalf("GGR group under the projections' key: %+v", g)
	}
	// The restored tracker goes on from the restored state: nothing changed.
	if rows, err := back.Delta(restored, 12); err != nil || len(rows) != 0 {
		t.Fatalf("the restored tracker's first delta: %v %v, want none", rows, err)
	}
	if err := back.Restore(restored, Carry{Kind: "wallet", Value: []byte(`{}`)}); err == nil {
		t.Fatal("a row of an unknown kind was restored")
	}
}

func countKinds(rows []Carry) map[string]int {
	out := map[string]int{}
	for _, c := range rows {
		out[c.Kind]++
	}
	return out
}
