package operatorsim_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/operatorsim"
)

// TestTBBRefusesUnsignedCalls: a body whose X-REQUEST-SIGN is not the
// HMAC-SHA256 of its raw bytes with the shared secret is 403, code 403,
// and moves nothing.
func TestTBBRefusesUnsignedCalls(t *testing.T) {
	t.Parallel()
	sim, base := startSim(t, operatorsim.Config{Protocol: operatorsim.ProtocolTBB})
	if _, err := sim.AddPlayer("6", "EUR", "100.00"); err != nil {
		t.Fatal(err)
	}
	bet := tbbMoney("bet", "6", "EUR", 1000, map[string]any{"transaction_id": "t1", "round_id": "r1"})
	for _, tc := range []struct {
		name string
		sign func([]byte) string
		want int
	}{
		{"no signature", func([]byte) string { return "" }, 403},
		{"another secret", func(b []byte) string { return gateway.Signature("other", b) }, 403},
		{"another body", func([]byte) string { return gateway.Signature(secret, []byte(bet+" ")) }, 403},
		{"not hex", func([]byte) string { return "zz" }, 403},
		{"upper-case hex", func(b []byte) string { return strings.ToUpper(gateway.Signature(secret, b)) }, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := tbbBalance("6", "EUR")
			if tc.want == 403 {
				body = bet
			}
			a := tbb{t: t, base: base}.post(body, tc.sign)
			if a.status != tc.want {
				t.Fatalf("%d %s, want %d", a.status, a.raw, tc.want)
			}
			if tc.want == 403 && (a.num("code") != "403" || a.path("message") != "Forbidden. Request sign doesn't match.") {
				t.Fatalf("refusal %s", a.raw)
			}
		})
	}
	if len(sim.Transactions()) != 0 || cash(t, sim, "6", "EUR") != "100.00" {
		t.Fatal("an unsigned call moved money")
	}
}

// TestTBBCalls: each action in the order a session plays them, with the
// document's answers and codes and the idempotency of every money call.
func TestTBBCalls(t *testing.T) {
	t.Parallel()
	sim, base := startSim(t, operatorsim.Config{Protocol: operatorsim.ProtocolTBB})
	if _, err := sim.AddPlayer("6", "EUR", "100.00"); err != nil {
		t.Fatal(err)
	}
	tr := func(kv ...string) map[string]any {
		m := map[string]any{"table_reference": "c9cbb3d5"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	win := func(id, round string, close bool) map[string]any {
		m := tr("transaction_id", id, "round_id", round)
		m["round_close"] = close
		m["jackpot"] = map[string]any{"is_jackpot": false}
		return m
	}
	ids := map[string]string{}
	for _, tc := range []struct {
		name, body  string
		wantStatus  int
		wantBalance string // "" is not checked
		sameIDAs    string // a step whose transaction_id this one must answer
	}{
		{"balance", tbbBalance("6", "EUR"), 200, "10000", ""},
		{"bet", tbbMoney("bet", "6", "EUR", 1000, tr("transaction_id", "b1", "round_id", "r1")), 200, "9000", ""},
		{"bet re-sent", tbbMoney("bet", "6", "EUR", 1000, tr("transaction_id", "b1", "round_id", "r1")), 200, "9000", "bet"},
		{"bet id reused with another amount", tbbMoney("bet", "6", "EUR", 999, tr("transaction_id", "b1", "round_id", "r1")),
			400, "", ""},
		{"bet beyond the balance", tbbMoney("bet", "6", "EUR", 9001, tr("transaction_id", "b2", "round_id", "r2")), 402, "", ""},
		{"win", tbbMoney("win", "6", "EUR", 2500, win("w1", "r1", true)), 200, "11500", ""},
		{"win re-sent", tbbMoney("win", "6", "EUR", 2500, win("w1", "r1", true)), 200, "11500", "win"},
		{"lost round: win of 0", tbbMoney("win", "6", "EUR", 0, win("w0", "r1", true)), 200, "11500", ""},
		{"second bet", tbbMoney("bet", "6", "EUR", 500, tr("transaction_id", "b3", "round_id", "r3")), 200, "11000", ""},
		{"refund", tbbMoney("refund", "6", "EUR", 500, tr("transaction_id", "b3", "round_id", "r3",
			"refunded_transaction_id", "b3")), 200, "11500", ""},
		{"refund re-sent", tbbMoney("refund", "6", "EUR", 500, tr("transaction_id", "b3", "round_id", "r3",
			"refunded_transaction_id", "b3")), 200, "11500", "refund"},
		{"refund of a bet never seen", tbbMoney("refund", "6", "EUR", 700, tr("transaction_id", "b4", "round_id", "r4",
			"refunded_transaction_id", "b4")), 406, "", ""},
		{"that bet arriving late", tbbMoney("bet", "6", "EUR", 700, tr("transaction_id", "b4", "round_id", "r4")), 408, "", ""},
		{"rollback win", tbbMoney("rollback-win", "6", "EUR", 2500, tr("transaction_id", "w1", "round_id", "r1",
			"rollback_win_transaction_id", "w1")), 200, "9000", ""},
		{"rollback win re-sent", tbbMoney("rollback-win", "6", "EUR", 2500, tr("transaction_id", "w1", "round_id", "r1",
			"rollback_win_transaction_id", "w1")), 200, "9000", "rollback win"},
		{"rollback of a win never seen", tbbMoney("rollback-win", "6", "EUR", 5, tr("transaction_id", "w9", "round_id", "r9",
			"rollback_win_transaction_id", "w9")), 406, "", ""},
		{"unknown player", tbbBalance("7", "EUR"), 404, "", ""},
		{"a currency the player has not", tbbBalance("6", "USD"), 400, "", ""},
		{"badly formatted JSON", `{"action":`, 400, "", ""},
		{"unknown action", strings.Replace(tbbBalance("6", "EUR"), `"balance"`, `"deposit"`, 1), 400, "", ""},
		{"amount with decimals", tbbMoney("bet", "6", "EUR", 10.5, tr("transaction_id", "b5", "round_id", "r5")), 400, "", ""},
		{"amount as a string", tbbMoney("bet", "6", "EUR", "1000", tr("transaction_id", "b5", "round_id", "r5")), 400, "", ""},
		{"no payload", strings.Replace(tbbMoney("bet", "6", "EUR", 1, nil), `"provider_transfer_data":null`, `"x":1`, 1),
			400, "", ""},
		{"win without round_close", tbbMoney("win", "6", "EUR", 1, tr("transaction_id", "w5", "round_id", "r5")), 400, "", ""},
	} {
		a := tbb{t: t, base: base}.post(tc.body, nil)
		if a.status != tc.wantStatus {
			t.Fatalf("%s: %d %s, want %d", tc.name, a.status, a.raw, tc.wantStatus)
		}
		if tc.wantStatus != 200 {
			if a.num("code") != strconv.Itoa(tc.wantStatus) || a.path("message") == "" {
				t.Fatalf("%s: refusal %s, want code %d and a message", tc.name, a.raw, tc.wantStatus)
			}
			continue
		}
		if tc.wantBalance != "" && a.num("balance") != tc.wantBalance {
			t.Fatalf("%s: balance %s, want %s (%s)", tc.name, a.num("balance"), tc.wantBalance, a.raw)
		}
		if a.path("currency_code") != "EUR" {
			t.Fatalf("%s: currency_code %v", tc.name, a.path("currency_code"))
		}
		id, _ := a.path("transaction_id").(string)
		ids[tc.name] = id
		if tc.sameIDAs != "" && id != ids[tc.sameIDAs] {
			t.Fatalf("%s: transaction_id %s, first answer %s", tc.name, id, ids[tc.sameIDAs])
		}
	}
	if got := cash(t, sim, "6", "EUR"); got != "90.00" {
		t.Fatalf("cash %s, want 90.00", got)
	}
}
