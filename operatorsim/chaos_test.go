package operatorsim_test

import (
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/pitboss/pitboss/operatorsim"
)

// chaosFaults strike about every other call, each kind, restarts too.
var chaosFaults = operatorsim.Faults{Seed: 3, Timeout: operatorsim.Rule{Probability: 0.08},
	Error5xx: operatorsim.Rule{Probability: 0.15}, LostAnswer: operatorsim.Rule{Probability: 0.2},
	Restart: operatorsim.Rule{Probability: 0.04}, RestartPause: 30 * time.Millisecond}

// retry sends call until it is answered (any status but a 5xx), as a
// client that cannot know whether a movement it sent was applied must:
// with the same id, within a generous deadline.
func retry(t *testing.T, what string, call func() answer) answer {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		a := call()
		if a.err == nil && a.status < 500 {
			return a
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no answer within 30s (last %d %v %s)", what, a.status, a.err, a.raw)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestNeverTwice: under every fault at once, a client re-sending each
// movement until answered ends with every movement applied exactly once,
// on both protocols, and the state file holds the same.
func TestNeverTwice(t *testing.T) {
	t.Parallel()
	const rounds = 25
	for _, protocol := range operatorsim.Protocols {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			state := filepath.Join(t.TempDir(), "state.json")
			sim, base := startSim(t, operatorsim.Config{Protocol: protocol, StatePath: state, Faults: chaosFaults})
			tok, err := sim.AddPlayer("p1", "EUR", "100.00")
			if err != nil {
				t.Fatal(err)
			}
			impatient := &http.Client{Timeout: 250 * time.Millisecond}
			for i := range rounds {
				n := strconv.Itoa(i)
				for _, move := range []struct{ kind, amount string }{{"bet", "1.00"}, {"win", "0.50"}} {
					var a answer
					if protocol == operatorsim.ProtocolTBB {
						amount := map[string]int{"bet": 100, "win": 50}[move.kind]
						transfer := map[string]any{"transaction_id": move.kind + n, "round_id": "r" + n, "round_close": true}
						body := tbbMoney(move.kind, "p1", "EUR", amount, transfer)
						a = retry(t, move.kind+n, func() answer { return tbb{t: t, base: base, http: impatient}.post(body, nil) })
					} else {
						p := newPAM(t, base, "p1", tok)
						p.http = impatient
						typ := map[string]string{"bet": "WITHDRAW", "win": "DEPOSIT"}[move.kind]
						a = retry(t, move.kind+n, func() answer { return p.add(newTx(typ, move.kind+n, "r"+n, move.amount)) })
					}
					if a.status != 200 || a.code() != "" {
						t.Fatalf("%s%s: %d %s", move.kind, n, a.status, a.raw)
					}
				}
			}
			if got := cash(t, sim, "p1", "EUR"); got != "87.50" {
				t.Fatalf("cash %s, want 87.50 (100 - 25 x 1.00 + 25 x 0.50)", got)
			}
			txs := sim.Transactions()
			keys := map[string]bool{}
			for _, tx := range txs {
				if keys[tx.Key] {
					t.Fatalf("%s applied twice", tx.Key)
				}
				keys[tx.Key] = true
			}
			if len(txs) != 2*rounds {
				t.Fatalf("%d transactions, want %d", len(txs), 2*rounds)
			}
			c := sim.Counts()
			if c.Timeouts == 0 || c.Errors5xx == 0 || c.LostAnswers == 0 || c.Restarts == 0 {
				t.Fatalf("not every fault struck: %+v", c)
			}
			t.Logf("counts %+v", c)
			reopened, err := operatorsim.New(operatorsim.Config{Protocol: protocol, APIToken: apiToken, Secret: secret,
				StatePath: state})
			if err != nil {
				t.Fatal(err)
			}
			if m, err := reopened.Balance("p1", "EUR"); err != nil || m.String() != "87.50" || len(reopened.Transactions()) != 2*rounds {
				t.Fatalf("state file: %v %v, %d transactions", m, err, len(reopened.Transactions()))
			}
		})
	}
}
