package api

import (
	"crypto/rand"
	"fmt"
	"math"
	"math/big"

	"github.com/pitboss/pitboss/domain"
)

// The demo slot: three reels with the same 20-stop strip, one pay line
// (the middle row), and a paytable of exact symbol counts on the line.
// Each reel stops uniformly at random (crypto/rand). The highest rule that
// matches pays stake × multiplier. Over all 20³ equally likely lines the
// return to player is exactly 96.1% and 52.375% of spins pay something
// (docs/providers-and-games.md; the tests recompute both from GET
// /demo/state).

// demoSymbol is one reel symbol: a stable key and the text the page shows,
// so the game reads without colour.
type demoSymbol struct {
	Key   string `json:"key"`
	Label string `json:"label"`
}

var demoSymbols = []demoSymbol{
	{"SEVEN", "7"}, {"BAR", "BAR"}, {"BELL", "Bell"}, {"CHERRY", "Cherry"}, {"LEMON", "Lemon"}, {"PLUM", "Plum"},
}

// demoStrip is every reel's strip: 1 seven, 2 bars, 3 bells, 4 cherries,
// 5 lemons and 5 plums.
var demoStrip = []string{
	"SEVEN", "LEMON", "CHERRY", "PLUM", "BELL", "LEMON", "BAR", "PLUM", "CHERRY", "LEMON",
	"BELL", "PLUM", "CHERRY", "LEMON", "BAR", "PLUM", "BELL", "CHERRY", "LEMON", "PLUM",
}

// demoRule pays Multiplier × stake when exactly Count of Symbol are on the
// line.
type demoRule struct {
	Symbol     string `json:"symbol"`
	Count      int    `json:"count"`
	Multiplier int64  `json:"multiplier"`
}

// demoPaytable is ordered from the highest pay down.
var demoPaytable = []demoRule{
	{"SEVEN", 3, 80}, {"BAR", 3, 40}, {"BELL", 3, 20}, {"CHERRY", 3, 10},
	{"LEMON", 3, 6}, {"PLUM", 3, 6}, {"CHERRY", 2, 2}, {"CHERRY", 1, 1},
}

const demoReels = 3

// demoSpin stops every reel at a random position.
func demoSpin() ([demoReels]string, error) {
	var line [demoReels]string
	n := big.NewInt(int64(len(demoStrip)))
	for i := range line {
		stop, err := rand.Int(rand.Reader, n)
		if err != nil {
			return line, fmt.Errorf("random reel stop: %w", err)
		}
		line[i] = demoStrip[stop.Int64()]
	}
	return line, nil
}

// demoPayout is the multiplier the line pays and the rule that paid
// (nil: no win).
func demoPayout(line [demoReels]string) (int64, *demoRule) {
	for i, r := range demoPaytable {
		n := 0
		for _, s := range line {
			if s == r.Symbol {
				n++
			}
		}
		if n == r.Count {
			return r.Multiplier, &demoPaytable[i]
		}
	}
	return 0, nil
}

// demoStakeSteps are the stakes in tenths of the currency's major unit
// (0.10, 0.20, 0.50, 1, 2, 5 for a two-decimal currency); a currency
// without decimals plays 1 to 50.
var demoStakeSteps = []int64{1, 2, 5, 10, 20, 50}

// demoStakes lists the stakes of a currency in minor units.
func demoStakes(cur domain.Currency) []int64 {
	base := int64(1)
	for range cur.Exponent() - 1 {
		if base > math.MaxInt64/10 {
			break
		}
		base *= 10
	}
	out := make([]int64, 0, len(demoStakeSteps))
	for _, s := range demoStakeSteps {
		if base <= math.MaxInt64/s/demoPaytable[0].Multiplier { // the top win must fit
			out = append(out, base*s)
		}
	}
	return out
}
