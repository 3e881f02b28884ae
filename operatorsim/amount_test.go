package operatorsim_test

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/pitboss/pitboss/operatorsim"
)

// TestExactAmounts: amounts are read from the JSON number's own digits
// and kept as integers of the currency's minor units, so sums are exact
// in every precision: 6 decimals (USDT, and EUR written with 6), 8 (BTC),
// 0 (JPY), and the sums that float64 gets wrong.
func TestExactAmounts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, currency, start string
		withdraws             []string // JSON numbers, each its own withdraw
		deposit               string   // JSON number, into the first withdraw's round
		wantCash              string   // answered cashAmount, exactly
	}{
		{"USDT six decimals", "USDT", "1.000000", []string{"0.000001", "0.123456"}, "0.000002", "0.876545"},
		{"EUR written with six decimals", "EUR", "100.00", []string{"10.500000", "0.010000"}, "0.000000", "89.49"},
		{"BTC eight decimals", "BTC", "0.3", []string{"0.1", "0.2"}, "0.00000001", "0.00000001"},
		{"BTC in exponent form", "BTC", "1", []string{"1e-8", "2.5E-7"}, "1e-8", "0.99999975"},
		{"JPY no decimals", "JPY", "1000", []string{"1", "999"}, "12", "12"},
		{"JPY written with decimals", "JPY", "1000", []string{"100.000000"}, "0.0", "900"},
		{"float64's 0.1 + 0.2", "EUR", "0.30", []string{"0.1", "0.2"}, "0.3", "0.30"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sim, base := startSim(t, operatorsim.Config{})
			tok, err := sim.AddPlayer("p1", tc.currency, tc.start)
			if err != nil {
				t.Fatal(err)
			}
			p := newPAM(t, base, "p1", tok)
			var last answer
			for i, amt := range tc.withdraws {
				b := newTx("WITHDRAW", "w"+strconv.Itoa(i), "r"+strconv.Itoa(i), amt)
				b.Currency = tc.currency
				if last = p.add(b); last.code() != "" {
					t.Fatalf("withdraw %s: %s", amt, last.raw)
				}
			}
			d := newTx("DEPOSIT", "d", "r0", tc.deposit)
			d.Currency = tc.currency
			if last = p.add(d); last.code() != "" {
				t.Fatalf("deposit %s: %s", tc.deposit, last.raw)
			}
			if got := last.num("transactionResult.balance.cashAmount"); got != tc.wantCash {
				t.Fatalf("cashAmount %s, want %s", got, tc.wantCash)
			}
			if got := cash(t, sim, "p1", tc.currency); got != tc.wantCash {
				t.Fatalf("balance %s, want %s", got, tc.wantCash)
			}
		})
	}
}

// TestAmountsBeyondPrecision: a number with more significant decimals
// than the currency has is refused, never rounded.
func TestAmountsBeyondPrecision(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ currency, amount string }{
		{"BTC", "0.000000001"}, {"JPY", "0.5"}, {"EUR", "1.005"}, {"BTC", "1e-9"}, {"EUR", "0.1000000000000000000001"},
	} {
		t.Run(tc.currency+" "+tc.amount, func(t *testing.T) {
			t.Parallel()
			sim, base := startSim(t, operatorsim.Config{})
			tok, err := sim.AddPlayer("p1", tc.currency, "10")
			if err != nil {
				t.Fatal(err)
			}
			b := newTx("WITHDRAW", "w", "r", tc.amount)
			b.Currency = tc.currency
			if a := newPAM(t, base, "p1", tok).add(b); a.status != 400 {
				t.Fatalf("%d %s, want 400", a.status, a.raw)
			}
		})
	}
}

// TestTBBSubunits: TBB's integer subunits in a 0-decimal and an
// 8-decimal currency.
func TestTBBSubunits(t *testing.T) {
	t.Parallel()
	sim, base := startSim(t, operatorsim.Config{Protocol: operatorsim.ProtocolTBB})
	for _, tc := range []struct {
		currency, start string
		bet             int64
		want            string // balance after, subunits
	}{{"JPY", "1000", 999, "1"}, {"BTC", "0.00000002", 1, "1"}, {"KWD", "1.000", 1, "999"}} {
		if _, err := sim.AddPlayer("p-"+tc.currency, tc.currency, tc.start); err != nil {
			t.Fatal(err)
		}
		a := tbb{t: t, base: base}.post(tbbMoney("bet", "p-"+tc.currency, tc.currency, json.Number(strconv.FormatInt(tc.bet, 10)),
			map[string]any{"transaction_id": "b-" + tc.currency, "round_id": "r"}), nil)
		if a.status != 200 || a.num("balance") != tc.want {
			t.Fatalf("%s: %d %s, want balance %s", tc.currency, a.status, a.raw, tc.want)
		}
	}
}
