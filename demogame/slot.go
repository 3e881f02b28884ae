package demogame

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

// symbol is one reel symbol: a stable key and the text the page shows,
// so the game reads without colour.
type symbol struct {
	Key   string `json:"key"`
	Label string `json:"label"`
}

var symbols = []symbol{
	{"SEVEN", "7"}, {"BAR", "BAR"}, {"BELL", "Bell"}, {"CHERRY", "Cherry"}, {"LEMON", "Lemon"}, {"PLUM", "Plum"},
}

// strip is every reel's strip: 1 seven, 2 bars, 3 bells, 4 cherries,
// 5 lemons and 5 plums.
var strip = []string{
	"SEVEN", "LEMON", "CHERRY", "PLUM", "BELL", "LEMON", "BAR", "PLUM", "CHERRY", "LEMON",
	"BELL", "PLUM", "CHERRY", "LEMON", "BAR", "PLUM", "BELL", "CHERRY", "LEMON", "PLUM",
}

// payRule pays Multiplier × stake when exactly Count of Symbol are on the
// line.
type payRule struct {
	Symbol     string `json:"symbol"`
	Count      int    `json:"count"`
	Multiplier int64  `json:"multiplier"`
}

// paytable is ordered from the highest pay down.
var paytable = []payRule{
	{"SEVEN", 3, 80}, {"BAR", 3, 40}, {"BELL", 3, 20}, {"CHERRY", 3, 10},
	{"LEMON", 3, 6}, {"PLUM", 3, 6}, {"CHERRY", 2, 2}, {"CHERRY", 1, 1},
}

const reels = 3

// spin stops every reel at a random position.
func spin() ([reels]string, error) {
	var line [reels]string
	n := big.NewInt(int64(len(strip)))
	for i := range line {
		stop, err := rand.Int(rand.Reader, n)
		if err != nil {
			return line, fmt.Errorf("random reel stop: %w", err)
		}
		line[i] = strip[stop.Int64()]
	}
	return line, nil
}

// payout is the multiplier the line pays and the rule that paid
// (nil: no win).
func payout(line [reels]string) (int64, *payRule) {
	for i, r := range paytable {
		n := 0
		for _, s := range line {
			if s == r.Symbol {
				n++
			}
		}
		if n == r.Count {
			return r.Multiplier, &paytable[i]
		}
	}
	return 0, nil
}

// stakeSteps are the stakes in tenths of the currency's major unit
// (0.10, 0.20, 0.50, 1, 2, 5 for a two-decimal currency); a currency
// without decimals plays 1 to 50.
var stakeSteps = []int64{1, 2, 5, 10, 20, 50}

// stakesOf lists the stakes of a currency in minor units.
func stakesOf(cur domain.Currency) []int64 {
	base := int64(1)
	for range cur.Exponent() - 1 {
		if base > math.MaxInt64/10 {
			break
		}
		base *= 10
	}
	out := make([]int64, 0, len(stakeSteps))
	for _, s := range stakeSteps {
		if base <= math.MaxInt64/s/paytable[0].Multiplier { // the top win must fit
			out = append(out, base*s)
		}
	}
	return out
}
