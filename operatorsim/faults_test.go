package operatorsim_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/operatorsim"
)

// TestLatency: every wallet call waits the added latency before it is
// handled (the timer's lower bound: it never answers sooner), and each
// is counted.
func TestLatency(t *testing.T) {
	t.Parallel()
	const latency = 30 * time.Millisecond
	sim, base := startSim(t, operatorsim.Config{Faults: operatorsim.Faults{Latency: latency}})
	tok, err := sim.AddPlayer("p1", "EUR", "10")
	if err != nil {
		t.Fatal(err)
	}
	p := newPAM(t, base, "p1", tok)
	for range 3 {
		start := time.Now()
		if a := p.balance(); a.status != 200 {
			t.Fatal(a.raw)
		}
		if took := time.Since(start); took < latency {
			t.Fatalf("answered in %v, before the %v latency", took, latency)
		}
	}
	if c := sim.Counts(); c.Calls != 3 || c.Delayed != 3 {
		t.Fatalf("counts %+v", c)
	}
}

// TestFaultKinds: each fault on a withdraw, what the client sees, whether
// it was applied, and that a re-send with the same id afterwards answers
// OK having moved the money exactly once.
func TestFaultKinds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		faults        operatorsim.Faults
		clientTimeout time.Duration
		wantStatus    int // 0: a transport error
		applied       bool
		count         func(operatorsim.Counts) uint64
	}{
		{"5xx", operatorsim.Faults{Error5xx: operatorsim.Rule{Every: 1}}, 0, 500, false,
			func(c operatorsim.Counts) uint64 { return c.Errors5xx }},
		{"503", operatorsim.Faults{Error5xx: operatorsim.Rule{Every: 1}, ErrorStatus: 503}, 0, 503, false,
			func(c operatorsim.Counts) uint64 { return c.Errors5xx }},
		{"timeout", operatorsim.Faults{Timeout: operatorsim.Rule{Every: 1}}, 300 * time.Millisecond, 0, false,
			func(c operatorsim.Counts) uint64 { return c.Timeouts }},
		{"answer lost: connection dropped", operatorsim.Faults{LostAnswer: operatorsim.Rule{Every: 1}}, 0, 0, true,
			func(c operatorsim.Counts) uint64 { return c.LostAnswers }},
		{"answer lost: 500", operatorsim.Faults{LostAnswer: operatorsim.Rule{Every: 1}, LostAnswerStatus: 500}, 0, 500, true,
			func(c operatorsim.Counts) uint64 { return c.LostAnswers }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sim, base := startSim(t, operatorsim.Config{})
			tok, err := sim.AddPlayer("p1", "EUR", "100.00")
			if err != nil {
				t.Fatal(err)
			}
			if err := sim.SetFaults(tc.faults); err != nil {
				t.Fatal(err)
			}
			p := newPAM(t, base, "p1", tok)
			if tc.clientTimeout > 0 {
				p.http = &http.Client{Timeout: tc.clientTimeout}
			}
			first := p.add(newTx("WITHDRAW", "w1", "r1", "10.00"))
			if (tc.wantStatus == 0) != (first.err != nil) || first.status != tc.wantStatus {
				t.Fatalf("answer %d %v %s, want status %d", first.status, first.err, first.raw, tc.wantStatus)
			}
			want := map[bool]string{true: "90.00", false: "100.00"}[tc.applied]
			if got := cash(t, sim, "p1", "EUR"); got != want || len(sim.Transactions()) != map[bool]int{true: 1}[tc.applied] {
				t.Fatalf("after the fault: cash %s (want %s), %d transactions", got, want, len(sim.Transactions()))
			}
			if n := tc.count(sim.Counts()); n != 1 {
				t.Fatalf("fault counted %d times", n)
			}
			if err := sim.SetFaults(operatorsim.Faults{}); err != nil {
				t.Fatal(err)
			}
			p.http = client
			again := p.add(newTx("WITHDRAW", "w1", "r1", "10.00"))
			if again.status != 200 || again.code() != "" || again.num("transactionResult.balance.cashAmount") != "90.00" {
				t.Fatalf("re-send: %d %s", again.status, again.raw)
			}
			txs := sim.Transactions()
			if len(txs) != 1 || txs[0].ID != again.path("transactionResult.transactionId") || cash(t, sim, "p1", "EUR") != "90.00" {
				t.Fatalf("after the re-send: %d transactions, cash %s", len(txs), cash(t, sim, "p1", "EUR"))
			}
		})
	}
}

// snapshot is the simulator's players and transactions as JSON.
func snapshot(t *testing.T, sim *operatorsim.Sim) string {
	t.Helper()
	b, err := json.Marshal(struct {
		P []operatorsim.Player
		T []operatorsim.Transaction
	}{sim.Players(), sim.Transactions()})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRestart: the restart fault drops the call unapplied, closes the
// server and listens on the same address again with the state read back
// from the state file, equal to what it was; a re-send after it is
// still a re-send. A new simulator on the same file reads the same state.
func TestRestart(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "state.json")
	sim, base := startSim(t, operatorsim.Config{StatePath: state, Players: 1, Balance: "100.00", Currency: "EUR"})
	pl, _ := sim.Player("player-1")
	p := newPAM(t, base, "player-1", pl.Tokens[0].Token)
	for _, b := range []tx{newTx("WITHDRAW", "w1", "r1", "10.00"), newTx("DEPOSIT", "d1", "r1", "2.50")} {
		if a := p.add(b); a.code() != "" {
			t.Fatal(a.raw)
		}
	}
	before := snapshot(t, sim)
	if err := sim.SetFaults(operatorsim.Faults{Restart: operatorsim.Rule{Every: 1}, RestartPause: 50 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if a := p.add(newTx("WITHDRAW", "w2", "r2", "1.00")); a.err == nil {
		t.Fatalf("the restarting call was answered: %d %s", a.status, a.raw)
	}
	if err := sim.SetFaults(operatorsim.Faults{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the restarted server answers", func() bool { return p.balance().status == 200 })
	if c := sim.Counts(); c.Restarts != 1 {
		t.Fatalf("counts %+v", c)
	}
	if after := snapshot(t, sim); after != before {
		t.Fatalf("state after the restart\n%s\nwant\n%s", after, before)
	}
	if a := p.add(newTx("WITHDRAW", "w1", "r1", "10.00")); a.code() != "" || a.num("transactionResult.balance.cashAmount") != "92.50" {
		t.Fatalf("re-send after the restart: %s", a.raw)
	}
	reopened, err := operatorsim.New(operatorsim.Config{Protocol: operatorsim.ProtocolValkyriePAM, APIToken: apiToken,
		StatePath: state, Players: 1, Balance: "5", Currency: "EUR"})
	if err != nil {
		t.Fatal(err)
	}
	if got := snapshot(t, reopened); got != before {
		t.Fatalf("state read at start\n%s\nwant\n%s", got, before)
	}
}

// TestFaultsAreDeterministic: one seed, one sequence of faults.
func TestFaultsAreDeterministic(t *testing.T) {
	t.Parallel()
	run := func() (string, uint64) {
		sim, base := startSim(t, operatorsim.Config{Faults: operatorsim.Faults{Seed: 42,
			Error5xx: operatorsim.Rule{Probability: 0.3}, LostAnswer: operatorsim.Rule{Every: 4}, LostAnswerStatus: 503}})
		tok, err := sim.AddPlayer("p1", "EUR", "10")
		if err != nil {
			t.Fatal(err)
		}
		p := newPAM(t, base, "p1", tok)
		pattern := ""
		for range 40 {
			pattern += fmt.Sprint(p.balance().status, " ")
		}
		c := sim.Counts()
		return pattern, c.Errors5xx + c.LostAnswers
	}
	a, na := run()
	b, nb := run()
	if a != b || na != nb {
		t.Fatalf("two runs of one seed differ:\n%s\n%s", a, b)
	}
	if na == 0 || na == 40 {
		t.Fatalf("%d faults in 40 calls: %s", na, a)
	}
}

// TestAdminAPI: the /_sim/ routes need the admin token; they fund a
// player, show the state, set the faults and restart.
func TestAdminAPI(t *testing.T) {
	t.Parallel()
	sim, base := startSim(t, operatorsim.Config{Protocol: operatorsim.ProtocolTBB, AdminToken: "admin-token"})
	call := func(method, path, token, body string) answer {
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		return do(t, client, req)
	}
	if a := call("GET", "/_sim/state", "", ""); a.status != 401 {
		t.Fatalf("no token: %d", a.status)
	}
	if a := call("GET", "/_sim/state", secret, ""); a.status != 401 {
		t.Fatalf("the wallet's secret is not the admin token: %d", a.status)
	}
	f := call("POST", "/_sim/players", "admin-token", `{"playerId":"p9","currency":"BTC","balance":"0.00000010"}`)
	if f.status != 200 || len(f.path("token").(string)) != 40 || f.num("player.balances.BTC.cashAmount") != "0.00000010" {
		t.Fatalf("fund: %d %s", f.status, f.raw)
	}
	if a := call("POST", "/_sim/players", "admin-token", `{"playerId":"p9","currency":"BTC","balance":0.00000005}`); a.status != 200 ||
		a.num("player.balances.BTC.cashAmount") != "0.00000015" || len(a.path("player.tokens").([]any)) != 2 {
		t.Fatalf("fund again: %d %s", a.status, a.raw)
	}
	if a := call("GET", "/_sim/players/p9", "admin-token", ""); a.status != 200 || a.path("id") != "p9" {
		t.Fatalf("player: %s", a.raw)
	}
	if a := call("GET", "/_sim/players/nobody", "admin-token", ""); a.status != 404 {
		t.Fatalf("unknown player: %d", a.status)
	}
	set := call("PUT", "/_sim/faults", "admin-token", `{"latency":"5ms","error5xx":{"every":3},"seed":9}`)
	if set.status != 200 || set.path("latency") != "5ms" || set.num("error5xx.every") != "3" {
		t.Fatalf("set faults: %d %s", set.status, set.raw)
	}
	if got := sim.Faults(); got.Latency != 5*time.Millisecond || got.Error5xx.Every != 3 || got.Seed != 9 {
		t.Fatalf("faults in force %+v", got)
	}
	if a := call("PUT", "/_sim/faults", "admin-token", `{"error5xx":{"probability":2}}`); a.status != 400 {
		t.Fatalf("a probability of 2: %d", a.status)
	}
	for range 3 {
		tbb{t: t, base: base}.post(tbbBalance("p9", "BTC"), nil)
	}
	st := call("GET", "/_sim/state", "admin-token", "")
	if st.num("counts.calls") != "3" || st.num("counts.errors5xx") != "1" || st.num("counts.delayed") != "3" ||
		st.path("protocol") != "tbb" {
		t.Fatalf("state: %s", st.raw)
	}
	if a := call("POST", "/_sim/restart", "admin-token", ""); a.status != 202 {
		t.Fatalf("restart: %d %s", a.status, a.raw)
	}
	eventually(t, "the restart", func() bool {
		return sim.Counts().Restarts == 1 && call("GET", "/_sim/state", "admin-token", "").status == 200
	})
	if a := call("GET", "/_sim/players/p9", "admin-token", ""); a.status != 200 {
		t.Fatalf("a memory-only restart lost the player: %d", a.status)
	}
}

// TestUnwritableStateIsAFault: a movement whose state cannot be written
// is taken back and answered 500, so it is never answered as done and
// lost at the next start.
func TestUnwritableStateIsAFault(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "gone")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sim, base := startSim(t, operatorsim.Config{StatePath: filepath.Join(dir, "state.json")})
	tok, err := sim.AddPlayer("p1", "EUR", "100.00")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	a := newPAM(t, base, "p1", tok).add(newTx("WITHDRAW", "w1", "r1", "10.00"))
	if a.status != 500 || a.code() != "PAM_ERR_UNDEFINED" {
		t.Fatalf("%d %s, want 500", a.status, a.raw)
	}
	if got := cash(t, sim, "p1", "EUR"); got != "100.00" || len(sim.Transactions()) != 0 {
		t.Fatalf("cash %s, %d transactions: the unwritten movement stayed", got, len(sim.Transactions()))
	}
}
