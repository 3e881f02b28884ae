package auditstore_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres/auditstore"
	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/postgres/readstore"
	"github.com/pitboss/pitboss/audit"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
)

// audPlay books a small but complete ledger for client through the real
// commands: a float deposit, a transfer to a player, bets, a win, a
// rollback, the ledger's close of a stale round (wallet.round_closed.v1,
// no postings) and a withdrawal. It returns the bet's position and amount
// text.
func audPlay(t testing.TB, h *commands.Handler, client string) (betPosition int64) {
	t.Helper()
	ctx := context.Background()
	must := func(r commands.Result, err error) commands.Result {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", client, err)
		}
		return r
	}
	m := func(s string) domain.Money {
		x, err := domain.ParsePositive(s, eur)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	call := func(tx string) domain.ClientTx {
		return domain.ClientTx{Client: client, ExternalTxID: tx, Currency: eur}
	}
	must(h.Deposit(ctx, call("float"), m("1000.00")))
	pc := call("t1")
	pc.Player = "p1"
	must(h.Transfer(ctx, pc, m("100.00"), domain.ToPlayer))
	game := func(tx, round string) domain.GameTx {
		return domain.GameTx{Client: client, Player: "p1", Provider: "prov", Game: "g1", Round: round,
			Session: "s1", ExternalTxID: tx, Currency: eur}
	}
	bet := must(h.PlaceBet(ctx, game("b1", "r1"), m("2.50")))
	must(h.CreditWin(ctx, game("w1", "r1"), m("7.30"), "b1"))
	must(h.PlaceBet(ctx, game("b2", "r2"), m("1.25")))
	must(h.Rollback(ctx, game("rb2", "r2"), "b2"))
	// r3 is left open; a limit of a nanosecond makes it stale by the time
	// the close is decided (after the bet's commit).
	must(h.PlaceBet(ctx, game("b3", "r3"), m("0.75")))
	must(h.CloseRound(ctx, commands.StaleRound{Wallet: domain.PlayerWallet(client, "p1", eur),
		RoundClose: domain.RoundClose{Client: client, Provider: "prov", Round: "r3", After: time.Nanosecond}}))
	wc := call("wd1")
	wc.Player = "p1"
	must(h.Withdraw(ctx, wc, m("10.00")))
	return bet.Position
}

// audExec runs one statement and returns the rows it changed.
func audExec(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) int64 {
	t.Helper()
	tag, err := pool.Exec(context.Background(), sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return tag.RowsAffected()
}

type audEnv struct {
	pool  *pgxpool.Pool
	a     *auditstore.Audit
	h     *commands.Handler
	c1    string
	c2    string
	bet   int64 // position of c1's first bet
	count int
}

func newAudEnv(t *testing.T) *audEnv {
	t.Helper()
	pool, _ := pgtest.NewDatabase(t)
	_, h := startLedger(t, pool, eventstore.LedgerConfig{})
	e := &audEnv{pool: pool, a: auditstore.NewAudit(pool), h: h, c1: uid("c"), c2: uid("c")}
	e.bet = audPlay(t, h, e.c1)
	audPlay(t, h, e.c2)
	e.count = eventCount(t, pool)
	return e
}

func (e *audEnv) verify(t *testing.T, opts auditstore.VerifyOptions) audit.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if opts.BatchSize == 0 {
		opts.BatchSize = 3 // several batches and cursor fetches even on a small ledger
	}
	rep, err := e.a.Verify(ctx, opts)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	return rep
}

// wantOnly asserts that exactly the named checks failed.
func wantOnly(t *testing.T, rep audit.Report, failed ...string) {
	t.Helper()
	for _, c := range rep.Checks {
		bad := !c.OK && c.Skipped == ""
		want := false
		for _, f := range failed {
			want = want || f == c.Name
		}
		if bad != want {
			var b strings.Builder
			_ = rep.WriteText(&b)
			t.Fatalf("check %s: ok=%v, want failed=%v\n%s", c.Name, c.OK, want, b.String())
		}
	}
	if rep.OK != (len(failed) == 0) {
		t.Fatalf("report ok=%v with failed checks %v", rep.OK, failed)
	}
}

func firstOf(t *testing.T, rep audit.Report, name string) audit.Finding {
	t.Helper()
	c, ok := rep.Check(name)
	if !ok {
		t.Fatalf("no check %s", name)
	}
	f, ok := c.First()
	if !ok {
		t.Fatalf("check %s has no finding", name)
	}
	return f
}

func eventIDAt(t *testing.T, pool *pgxpool.Pool, pos int64) string {
	t.Helper()
	var id string
	if err := pool.QueryRow(context.Background(), `SELECT event_id::text FROM events WHERE position = $1`, pos).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// Verify holds on a ledger booked through the real commands, and names the
// first broken row of each kind of tampering; after each tampering is
// undone it holds again.
func TestAuditVerify(t *testing.T) {
	t.Parallel()
	e := newAudEnv(t)
	ctx := context.Background()
	rm := readstore.NewReadModels(e.pool)
	applyLive(t, rm, storedEvents(t, e.pool, 0), 2)
	player := string(domain.PlayerWallet(e.c1, "p1", eur))

	// given an untouched ledger, when verified, then every check holds
	rep := e.verify(t, auditstore.VerifyOptions{})
	wantOnly(t, rep)
	if rep.Events != int64(e.count) || rep.HeadPosition != int64(e.count) {
		t.Fatalf("verified %d events to head %d, the store has %d", rep.Events, rep.HeadPosition, e.count)
	}
	for _, name := range []string{audit.CheckHashChain, audit.CheckEventBodies, audit.CheckDoubleEntry,
		audit.CheckAccounts, audit.CheckTxRecords, audit.CheckReadModels} {
		if c, _ := rep.Check(name); c.Rows == 0 {
			t.Errorf("check %s examined no rows", name)
		}
	}
	var head []byte
	if err := e.pool.QueryRow(ctx, `SELECT hash FROM events WHERE position = $1`, rep.HeadPosition).Scan(&head); err != nil {
		t.Fatal(err)
	}
	if rep.HeadHash != hex.EncodeToString(head) {
		t.Fatalf("head hash %s, stored %x", rep.HeadHash, head)
	}
	if len(rep.Currencies) != 1 || rep.Currencies[0].Sum != "0.00" || rep.Currencies[0].Debits == "0.00" {
		t.Fatalf("currency totals %+v", rep.Currencies)
	}

	tests := []struct {
		name    string
		tamper  []string // SQL, $1 = the bet's position, $2 = c1's player wallet
		restore []string
		anchors func() []audit.Anchor
		failed  []string
		then    func(t *testing.T, rep audit.Report)
	}{
		{
			name:    "an amount edited in a body",
			tamper:  []string{`UPDATE events SET body = replace(body::text, '"amount":"2.50"', '"amount":"0.50"')::json WHERE position = $1 AND $2 <> ''`},
			restore: []string{`UPDATE events e SET body = s.body FROM audit_saved s WHERE e.position = s.position AND $1 > 0 AND $2 <> ''`},
			// the edit touched the house's posting as well: the postings no
			// longer balance and the house's balance is not their fold (the
			// read models follow the player's posting, which is unchanged)
			failed: []string{audit.CheckHashChain, audit.CheckDoubleEntry, audit.CheckAccounts},
			then: func(t *testing.T, rep audit.Report) {
				f := firstOf(t, rep, audit.CheckHashChain)
				if f.Position != e.bet || f.EventID != eventIDAt(t, e.pool, e.bet) || !strings.Contains(f.Message, "stored hash") {
					t.Fatalf("first broken %v, want position %d", f, e.bet)
				}
				if c, _ := rep.Check(audit.CheckHashChain); c.Failures != 1 {
					t.Fatalf("%d rows flagged: only the edited one should be", c.Failures)
				}
				if f := firstOf(t, rep, audit.CheckDoubleEntry); f.Position != e.bet {
					t.Fatalf("double entry first broken %v", f)
				}
				if f := firstOf(t, rep, audit.CheckAccounts); f.Account != string(domain.HouseAccount(e.c1, "prov", eur)) {
					t.Fatalf("accounts first broken %v", f)
				}
			},
		},
		{
			name:    "an event deleted",
			tamper:  []string{`DELETE FROM events WHERE position = $1 AND $2 <> ''`},
			restore: []string{`INSERT INTO events SELECT * FROM audit_saved WHERE $1 > 0 AND $2 <> ''`},
			failed:  []string{audit.CheckHashChain, audit.CheckAccounts, audit.CheckTxRecords, audit.CheckReadModels},
			then: func(t *testing.T, rep audit.Report) {
				f := firstOf(t, rep, audit.CheckHashChain)
				if f.Position != e.bet+1 || !strings.Contains(f.Message, fmt.Sprintf("position %d missing", e.bet)) {
					t.Fatalf("first broken %v, want the hole at %d", f, e.bet)
				}
				if f := firstOf(t, rep, audit.CheckTxRecords); !strings.Contains(f.Message, "not in the event store") {
					t.Fatalf("tx_records first broken %v", f)
				}
			},
		},
		{
			name:    "a balance edited",
			tamper:  []string{`UPDATE accounts SET balance = balance + 100000 WHERE account_id = $2 AND $1 > 0`},
			restore: []string{`UPDATE accounts SET balance = balance - 100000 WHERE account_id = $2 AND $1 > 0`},
			failed:  []string{audit.CheckAccounts},
			then: func(t *testing.T, rep audit.Report) {
				f := firstOf(t, rep, audit.CheckAccounts)
				if f.Account != player || f.Field != "balance" || f.Stored != "1094.05" || f.Recomputed != "94.05" {
					t.Fatalf("first broken %+v", f)
				}
			},
		},
		{
			name:    "a version edited",
			tamper:  []string{`UPDATE accounts SET version = version + 1 WHERE account_id = $2 AND $1 > 0`},
			restore: []string{`UPDATE accounts SET version = version - 1 WHERE account_id = $2 AND $1 > 0`},
			failed:  []string{audit.CheckAccounts},
			then: func(t *testing.T, rep audit.Report) {
				if f := firstOf(t, rep, audit.CheckAccounts); f.Account != player || f.Field != "version" {
					t.Fatalf("first broken %+v", f)
				}
			},
		},
		{
			name:    "an account row deleted",
			tamper:  []string{`DELETE FROM accounts WHERE account_id = $2 AND $1 > 0`},
			restore: []string{`INSERT INTO accounts (account_id, kind, currency, balance, version, last_position) SELECT account_id, kind, currency, balance, version, last_position FROM audit_saved_acc WHERE $1 > 0 AND $2 <> ''`},
			failed:  []string{audit.CheckAccounts},
			then: func(t *testing.T, rep audit.Report) {
				if f := firstOf(t, rep, audit.CheckAccounts); f.Account != player || !strings.Contains(f.Message, "has no row") {
					t.Fatalf("first broken %+v", f)
				}
			},
		},
		{
			name:    "a record naming another event",
			tamper:  []string{`UPDATE tx_records SET record = jsonb_set(record, '{event_id}', '"00000000-0000-4000-8000-000000000000"') WHERE key = 'game|' || split_part($2, ':', 2) || '|prov|b1' AND $1 > 0`},
			restore: []string{`UPDATE tx_records t SET record = s.record FROM audit_saved_rec s WHERE t.key = s.key AND $1 > 0 AND $2 <> ''`},
			failed:  []string{audit.CheckTxRecords},
			then: func(t *testing.T, rep audit.Report) {
				if f := firstOf(t, rep, audit.CheckTxRecords); f.Key != domain.GameTxKey(e.c1, "prov", "b1") {
					t.Fatalf("first broken %+v", f)
				}
			},
		},
		{
			name:    "a read model row edited",
			tamper:  []string{`UPDATE readmodels.balances SET balance = balance + 1 WHERE account_id = $2 AND $1 > 0`},
			restore: []string{`UPDATE readmodels.balances SET balance = balance - 1 WHERE account_id = $2 AND $1 > 0`},
			failed:  []string{audit.CheckReadModels},
			then: func(t *testing.T, rep audit.Report) {
				if f := firstOf(t, rep, audit.CheckReadModels); f.Key != "balances" {
					t.Fatalf("first broken %+v", f)
				}
			},
		},
		{
			name:    "the head hash anchored",
			anchors: func() []audit.Anchor { return []audit.Anchor{{Position: rep.HeadPosition, Hash: head}} },
			then: func(t *testing.T, rep audit.Report) {
				if c, _ := rep.Check(audit.CheckAnchors); c.Rows != 1 || !c.OK {
					t.Fatalf("anchors %+v", c)
				}
			},
		},
		{
			name: "a wrong anchor",
			anchors: func() []audit.Anchor {
				return []audit.Anchor{{Position: 2, Hash: bytes.Repeat([]byte{9}, 32)}}
			},
			failed: []string{audit.CheckAnchors},
			then: func(t *testing.T, rep audit.Report) {
				if f := firstOf(t, rep, audit.CheckAnchors); f.Position != 2 {
					t.Fatalf("first broken %+v", f)
				}
			},
		},
	}
	audExec(t, e.pool, `CREATE TABLE audit_saved AS SELECT * FROM events WHERE position = $1`, e.bet)
	audExec(t, e.pool, `CREATE TABLE audit_saved_acc AS SELECT * FROM accounts WHERE account_id = $1`, player)
	audExec(t, e.pool, `CREATE TABLE audit_saved_rec AS SELECT * FROM tx_records`)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, q := range tc.tamper {
				if n := audExec(t, e.pool, q, e.bet, player); n != 1 {
					t.Fatalf("tampering changed %d rows, want 1: %s", n, q)
				}
			}
			opts := auditstore.VerifyOptions{}
			if tc.anchors != nil {
				opts.Anchors = tc.anchors()
			}
			got := e.verify(t, opts)
			for _, q := range tc.restore {
				audExec(t, e.pool, q, e.bet, player)
			}
			wantOnly(t, got, tc.failed...)
			if tc.then != nil {
				tc.then(t, got)
			}
			// and once undone, the ledger verifies again
			wantOnly(t, e.verify(t, auditstore.VerifyOptions{SkipReadModels: true}))
		})
	}
}

// A crafted event with a correct hash chain and matching account rows, but
// postings that create money, is caught by double entry alone.
func TestAuditVerifyDoubleEntry(t *testing.T) {
	t.Parallel()
	e := newAudEnv(t)
	ctx := context.Background()
	player := domain.PlayerWallet(e.c1, "p1", eur)
	var (
		head    int64
		prev    []byte
		version int64
	)
	if err := e.pool.QueryRow(ctx, `SELECT position, hash FROM events ORDER BY position DESC LIMIT 1`).Scan(&head, &prev); err != nil {
		t.Fatal(err)
	}
	if err := e.pool.QueryRow(ctx, `SELECT version FROM accounts WHERE account_id = $1`, string(player)).Scan(&version); err != nil {
		t.Fatal(err)
	}
	forged := domain.Event{ID: newUUID(), Type: domain.EventAdjusted, StreamID: player, Version: version + 1, Position: head + 1,
		OccurredAt: time.Now().UTC(), Data: domain.EventData{ClientID: e.c1, PlayerID: "p1", Currency: "EUR", Amount: "500.00",
			Postings: []domain.Posting{{Account: player, Amount: "500.00"}}}}
	body, err := domain.EncodeBody(forged)
	if err != nil {
		t.Fatal(err)
	}
	audExec(t, e.pool, `INSERT INTO events (position, event_id, stream_id, stream_version, event_type, occurred_at, body, prev_hash, hash)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, forged.Position, forged.ID, string(forged.StreamID), forged.Version,
		string(forged.Type), forged.OccurredAt, string(body), prev, domain.ChainHash(prev, body))
	audExec(t, e.pool, `UPDATE accounts SET balance = balance + 50000, version = version + 1, last_position = $2 WHERE account_id = $1`,
		string(player), forged.Position)

	rep := e.verify(t, auditstore.VerifyOptions{})
	wantOnly(t, rep, audit.CheckDoubleEntry)
	f := firstOf(t, rep, audit.CheckDoubleEntry)
	if f.Position != forged.Position || f.EventID != forged.ID || !strings.Contains(f.Message, "sum to 500.00, not zero") {
		t.Fatalf("first broken %+v", f)
	}
	if len(rep.Currencies) != 1 || rep.Currencies[0].Sum != "500.00" {
		t.Fatalf("totals %+v", rep.Currencies)
	}
}

// A verification while commands keep committing holds: it reads one
// snapshot, so it never compares events with account rows of another
// moment.
func TestAuditVerifyWhileWriting(t *testing.T) {
	t.Parallel()
	e := newAudEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				c := domain.ClientTx{Client: e.c1, Player: fmt.Sprintf("w%d", w), ExternalTxID: fmt.Sprintf("live-%d-%d", w, i), Currency: eur}
				if _, err := e.h.Deposit(ctx, c, domain.FromMinor(int64(i+1), eur)); err != nil && ctx.Err() == nil {
					t.Errorf("deposit: %v", err)
					return
				}
			}
		})
	}
	defer func() { cancel(); wg.Wait() }()
	var seen []int64
	for len(seen) < 3 || seen[len(seen)-1] == seen[0] {
		if len(seen) == 20 {
			t.Fatalf("the ledger did not grow while verifying: %v", seen)
		}
		rep := e.verify(t, auditstore.VerifyOptions{SkipReadModels: true, BatchSize: 50})
		if !rep.OK {
			var b strings.Builder
			_ = rep.WriteText(&b)
			t.Fatalf("verify during writes:\n%s", b.String())
		}
		seen = append(seen, rep.Events)
	}
}

// exportAll runs Export into NDJSON lines as `pitboss export` writes them.
func exportAll(t *testing.T, a *auditstore.Audit, rng auditstore.ExportRange) ([]byte, auditstore.ExportSummary) {
	t.Helper()
	var buf bytes.Buffer
	rng.BatchSize = 4
	sum, err := a.Export(context.Background(), rng, func(r audit.Record) error {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		buf.Write(append(b, '\n'))
		return nil
	})
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	return buf.Bytes(), sum
}

// independentCheck verifies an export the way an outside auditor would,
// with nothing of ours: JSON, hex and SHA-256. It returns the positions it
// read, or the first line that does not hold.
func independentCheck(ndjson []byte, firstPrev []byte) ([]int64, error) {
	var positions []int64
	prev := firstPrev
	sc := bufio.NewScanner(bytes.NewReader(ndjson))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var l struct {
			Position int64  `json:"position"`
			Body     string `json:"body"`
			PrevHash string `json:"prev_hash"`
			Hash     string `json:"hash"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return positions, fmt.Errorf("line %d: %v", n, err)
		}
		p, err := hex.DecodeString(l.PrevHash)
		if err != nil {
			return positions, fmt.Errorf("line %d: prev_hash: %v", n, err)
		}
		if prev != nil && !bytes.Equal(p, prev) {
			return positions, fmt.Errorf("position %d: prev_hash does not link", l.Position)
		}
		h := sha256.New()
		h.Write(p)
		h.Write([]byte(l.Body))
		got := hex.EncodeToString(h.Sum(nil))
		if got != l.Hash {
			return positions, fmt.Errorf("position %d: hash %s, recomputed %s", l.Position, l.Hash, got)
		}
		if len(positions) > 0 && l.Position != positions[len(positions)-1]+1 {
			return positions, fmt.Errorf("position %d follows %d", l.Position, positions[len(positions)-1])
		}
		positions = append(positions, l.Position)
		prev, _ = hex.DecodeString(l.Hash)
	}
	return positions, sc.Err()
}

func TestAuditExport(t *testing.T) {
	t.Parallel()
	e := newAudEnv(t)
	genesis := make([]byte, 32)

	t.Run("everything verifies independently", func(t *testing.T) {
		out, sum := exportAll(t, e.a, auditstore.ExportRange{})
		pos, err := independentCheck(out, genesis)
		if err != nil {
			t.Fatal(err)
		}
		if len(pos) != e.count || pos[0] != 1 || sum.Events != int64(e.count) || sum.HeadPosition != int64(e.count) {
			t.Fatalf("exported %d events (%+v), the store has %d", len(pos), sum, e.count)
		}
	})

	t.Run("a tampered export fails", func(t *testing.T) {
		out, _ := exportAll(t, e.a, auditstore.ExportRange{})
		// the bet's amount inside the body string, as exported
		edited := bytes.Replace(out, []byte(`\"amount\":\"2.50\"`), []byte(`\"amount\":\"0.50\"`), 1)
		if bytes.Equal(edited, out) {
			t.Fatal("the bet's amount is not in the export")
		}
		_, err := independentCheck(edited, genesis)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("position %d: hash", e.bet)) {
			t.Fatalf("tampered export: %v, want a hash mismatch at position %d", err, e.bet)
		}
		// and a dropped line breaks the links
		lines := bytes.SplitAfter(out, []byte("\n"))
		dropped := bytes.Join(append(append([][]byte{}, lines[:4]...), lines[5:]...), nil)
		if _, err := independentCheck(dropped, genesis); err == nil || !strings.Contains(err.Error(), "does not link") {
			t.Fatalf("export without line 5: %v", err)
		}
	})

	t.Run("a position range is a piece of the chain", func(t *testing.T) {
		out, sum := exportAll(t, e.a, auditstore.ExportRange{FromPosition: 3, ToPosition: 7})
		var prev2 []byte
		if err := e.pool.QueryRow(context.Background(), `SELECT hash FROM events WHERE position = 2`).Scan(&prev2); err != nil {
			t.Fatal(err)
		}
		pos, err := independentCheck(out, prev2)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(pos) != "[3 4 5 6 7]" || !bytes.Equal(sum.FirstPrevHash, prev2) {
			t.Fatalf("positions %v, summary %+v", pos, sum)
		}
	})

	t.Run("a time range is the contiguous positions between its ends", func(t *testing.T) {
		all, _ := exportAll(t, e.a, auditstore.ExportRange{})
		var times []time.Time
		for _, l := range bytes.Split(bytes.TrimSpace(all), []byte("\n")) {
			var x struct {
				OccurredAt time.Time `json:"occurred_at"`
			}
			if err := json.Unmarshal(l, &x); err != nil {
				t.Fatal(err)
			}
			times = append(times, x.OccurredAt)
		}
		from, to := times[3], times[8] // [from, to)
		var lo, hi int64
		for i, tm := range times {
			if lo == 0 && !tm.Before(from) {
				lo = int64(i + 1)
			}
			if tm.Before(to) {
				hi = int64(i + 1)
			}
		}
		out, sum := exportAll(t, e.a, auditstore.ExportRange{From: from, To: to})
		pos, err := independentCheck(out, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(pos) == 0 || pos[0] != lo || pos[len(pos)-1] != hi || sum.Events != hi-lo+1 {
			t.Fatalf("positions %v, want %d..%d", pos, lo, hi)
		}
		out, sum = exportAll(t, e.a, auditstore.ExportRange{From: time.Now().Add(time.Hour)})
		if len(out) != 0 || sum.Events != 0 {
			t.Fatalf("a range after the last event exported %d events", sum.Events)
		}
	})

	t.Run("invalid ranges", func(t *testing.T) {
		now := time.Now()
		for _, rng := range []auditstore.ExportRange{
			{FromPosition: 1, From: now},
			{FromPosition: -1},
			{FromPosition: 5, ToPosition: 4},
			{From: now, To: now},
		} {
			_, err := e.a.Export(context.Background(), rng, func(audit.Record) error { return nil })
			if !errors.Is(err, domain.ErrInvalidArgument) {
				t.Errorf("%+v: err %v", rng, err)
			}
		}
	})

	t.Run("the script in docs/audit.md verifies the export", func(t *testing.T) {
		py, err := osexec.LookPath("python3")
		if err != nil {
			t.Skip("python3 is not installed: the documented script cannot run here")
		}
		doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "audit.md"))
		if err != nil {
			t.Fatal(err)
		}
		_, rest, ok := bytes.Cut(doc, []byte("```python\n"))
		script, _, ok2 := bytes.Cut(rest, []byte("```"))
		if !ok || !ok2 {
			t.Fatal("docs/audit.md has no python block")
		}
		dir := t.TempDir()
		scriptPath := filepath.Join(dir, "verify_export.py")
		if err := os.WriteFile(scriptPath, script, 0o600); err != nil {
			t.Fatal(err)
		}
		out, _ := exportAll(t, e.a, auditstore.ExportRange{})
		run := func(data []byte) (string, error) {
			p := filepath.Join(dir, "events.ndjson")
			if err := os.WriteFile(p, data, 0o600); err != nil {
				t.Fatal(err)
			}
			b, err := osexec.Command(py, scriptPath, p).CombinedOutput()
			return string(b), err
		}
		if msg, err := run(out); err != nil || !strings.Contains(msg, fmt.Sprintf("OK %d events", e.count)) {
			t.Fatalf("script on a good export: %v: %s", err, msg)
		}
		edited := bytes.Replace(out, []byte(`\"amount\":\"2.50\"`), []byte(`\"amount\":\"0.50\"`), 1)
		if msg, err := run(edited); err == nil || !strings.Contains(msg, fmt.Sprint(e.bet)) {
			t.Fatalf("script on a tampered export: %v: %s", err, msg)
		}
	})
}

// A run's outcome is kept for the console.
func TestAuditRuns(t *testing.T) {
	t.Parallel()
	e := newAudEnv(t)
	ctx := context.Background()
	if _, ok, err := e.a.LastRun(ctx); err != nil || ok {
		t.Fatalf("last run before any: ok=%v err=%v", ok, err)
	}
	rep := e.verify(t, auditstore.VerifyOptions{SkipReadModels: true})
	if err := e.a.SaveRun(ctx, rep); err != nil {
		t.Fatal(err)
	}
	got, ok, err := e.a.LastRun(ctx)
	if err != nil || !ok {
		t.Fatalf("last run: ok=%v err=%v", ok, err)
	}
	if got.HeadHash != rep.HeadHash || got.Events != rep.Events || got.OK != rep.OK || len(got.Checks) != len(rep.Checks) {
		t.Fatalf("stored %+v, want %+v", got, rep)
	}
}

// TestAuditVerifyRebuildsInScratchSchemas: the read-model check rebuilds in
// bounded memory in scratch schemas of its own, drops them after, and
// leaves a replay's shadow schema (one an operator may be about to swap
// in) as it was.
func TestAuditVerifyRebuildsInScratchSchemas(t *testing.T) {
	t.Parallel()
	e := newAudEnv(t)
	ctx := context.Background()
	rm := readstore.NewReadModels(e.pool)
	applyLive(t, rm, storedEvents(t, e.pool, 0), 2)
	if _, err := rm.Compare(ctx, readstore.ReplayOptions{Shadow: true}); err != nil {
		t.Fatal(err)
	}
	schemas := func() map[string]string {
		rows, err := e.pool.Query(ctx, `SELECT nspname, coalesce(obj_description(oid, 'pg_namespace'), '') FROM pg_namespace
			WHERE nspname LIKE 'readmodels%'`)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		var name, note string
		if _, err := pgx.ForEachRow(rows, []any{&name, &note}, func() error { out[name] = note; return nil }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	before := schemas()
	var shadowRows int64
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM readmodels_shadow.transactions`).Scan(&shadowRows); err != nil || shadowRows == 0 {
		t.Fatalf("the replay's shadow history has %d rows (%v)", shadowRows, err)
	}
	wantOnly(t, e.verify(t, auditstore.VerifyOptions{}))
	after := schemas()
	if _, ok := after[readstore.VerifyShadowSchema]; ok {
		t.Errorf("the verification left %s behind: %v", readstore.VerifyShadowSchema, after)
	}
	if _, ok := after[readstore.VerifyStagingSchema]; ok {
		t.Errorf("the verification left %s behind: %v", readstore.VerifyStagingSchema, after)
	}
	if after[readstore.ShadowSchema] != before[readstore.ShadowSchema] || before[readstore.ShadowSchema] == "" {
		t.Errorf("the replay's shadow schema went from %q to %q", before[readstore.ShadowSchema], after[readstore.ShadowSchema])
	}
	var n int64
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM readmodels_shadow.transactions`).Scan(&n); err != nil || n != shadowRows {
		t.Errorf("the replay's shadow history went from %d to %d rows (%v)", shadowRows, n, err)
	}
}
