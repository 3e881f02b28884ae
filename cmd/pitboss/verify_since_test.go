package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres/auditstore"
	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/logstore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/secretbox"
	"github.com/pitboss/pitboss/audit"
	"github.com/pitboss/pitboss/ledgerlog"
)

const sinceOrigin = "pitboss.test/ledger"

// sinceLedger is a ledger of 3,000 events whose platform log was signed
// at 2,000 leaves (the note in file) and then grown to the head: "the
// day" is the last 1,000 events.
type sinceLedger struct {
	t    *testing.T
	pool *pgxpool.Pool
	cfg  config
	priv ed25519.PrivateKey
	file string
	dir  string
}

func newSinceLedger(t *testing.T) *sinceLedger {
	t.Helper()
	pool, dsn := pgtest.NewDatabase(t)
	ctx := t.Context()
	if _, err := eventstore.SeedEvents(ctx, pool, eventstore.SeedOptions{Events: 3000, Clients: 2, PlayersPerClient: 20, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	box, err := secretbox.New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	cps := auditstore.NewCheckpoints(pool, box)
	if _, err := cps.RotateKey(ctx); err != nil {
		t.Fatal(err)
	}
	_, priv, err := cps.SigningKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l := &sinceLedger{t: t, pool: pool, cfg: config{DatabaseURL: dsn, LogOrigin: sinceOrigin}, priv: priv, dir: t.TempDir()}
	b, st := logstore.NewBuilder(pool, 1000, nil), logstore.New(pool)
	for range 2 {
		if _, err := b.Pass(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.SignDue(ctx, sinceOrigin, cps, time.Minute, time.Now()); err != nil {
		t.Fatal(err)
	}
	cp, err := st.LatestCheckpoint(ctx, ledgerlog.PlatformLog)
	if err != nil || cp.Size != 2000 {
		t.Fatalf("checkpoint %+v: %v", cp, err)
	}
	l.file = l.write("checkpoint", cp.Note)
	for {
		n, err := b.Pass(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	return l
}

func (l *sinceLedger) write(name string, b []byte) string {
	l.t.Helper()
	p := filepath.Join(l.dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		l.t.Fatal(err)
	}
	return p
}

func (l *sinceLedger) run(args ...string) (string, string, int) {
	l.t.Helper()
	var out, errOut bytes.Buffer
	err := verify(l.t.Context(), l.cfg, args, &out, &errOut)
	return out.String(), errOut.String() + errText(err), exitCode(err)
}

func (l *sinceLedger) exec(sql string, args ...any) {
	l.t.Helper()
	if _, err := l.pool.Exec(l.t.Context(), sql, args...); err != nil {
		l.t.Fatal(err)
	}
}

// `pitboss verify --since` on a true ledger, then after each kind of
// tampering (each undone before the next): exit codes, the failing check
// and what it names.
func TestVerifySince(t *testing.T) {
	t.Parallel()
	l := newSinceLedger(t)

	out, progress, code := l.run("--since", l.file, "--batch", "128")
	if code != 0 || !strings.HasPrefix(out, "verify OK: 1000 events, head position 3000") ||
		!strings.Contains(out, "since "+sinceOrigin+" at 2000 leaves (position 2000): 1000 events after it") {
		t.Fatalf("a true ledger: exit %d\n%s\n%s", code, out, progress)
	}
	if !progressLogged(t, progress, "verify phase done", "events", 1000, 1000) {
		t.Fatalf("no progress line for the events phase's end:\n%s", progress)
	}
	out, _, code = l.run("--since", l.file, "--quiet", "--json")
	var rep sinceReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || !rep.OK || rep.Since.Position != 2000 || rep.Events != 1000 {
		t.Fatalf("--json: %v, exit %d\n%s", err, code, out)
	}
	for _, name := range []string{audit.CheckSinceCheckpoint, audit.CheckSinceConsistency, audit.CheckHashChain,
		audit.CheckEventBodies, audit.CheckDoubleEntry, audit.CheckAccounts} {
		if c, ok := rep.Check(name); !ok || !c.OK || c.Rows == 0 {
			t.Errorf("check %s: %+v (found %v)", name, c, ok)
		}
	}

	_, otherPriv, _ := ed25519.GenerateKey(rand.Reader)
	cp, _, err := ledgerlog.Open(mustRead(t, l.file), mustVerifierKey(t, sinceOrigin, l.priv.Public().(ed25519.PublicKey)))
	if err != nil {
		t.Fatal(err)
	}
	foreign := ledgerlog.Checkpoint{Origin: "other.example/ledger", Size: cp.Size, Root: cp.Root}
	tests := []struct {
		name   string
		save   string // SQL reading what undo puts back ($1)
		tamper string // SQL, undone by undo
		undo   string
		file   func() string
		check  string // the check that fails
		want   string // in the report
	}{
		{name: "a body after the checkpoint edited",
			tamper: `UPDATE events SET body = replace(body::text, '"client_id":"', '"client_id":"x')::json WHERE position = 2500`,
			undo:   `UPDATE events SET body = replace(body::text, '"client_id":"x', '"client_id":"')::json WHERE position = 2500`,
			check:  audit.CheckHashChain, want: "position 2500"},
		{name: "a balance after the checkpoint edited",
			tamper: `UPDATE accounts SET balance = balance + 1 WHERE account_id = (SELECT stream_id FROM events WHERE position = 2999)`,
			undo:   `UPDATE accounts SET balance = balance - 1 WHERE account_id = (SELECT stream_id FROM events WHERE position = 2999)`,
			check:  audit.CheckAccounts, want: "stored balance"},
		// The rows read beside the walk claim a touch after the checkpoint:
		// a row that does not is read after it, by the events' list.
		{name: "an account's last_position set back before the checkpoint",
			save:   `SELECT last_position::text::bytea FROM accounts WHERE account_id = (SELECT stream_id FROM events WHERE position = 2999)`,
			tamper: `UPDATE accounts SET last_position = 1 WHERE account_id = (SELECT stream_id FROM events WHERE position = 2999)`,
			undo:   `UPDATE accounts SET last_position = convert_from($1, 'UTF8')::bigint WHERE account_id = (SELECT stream_id FROM events WHERE position = 2999)`,
			check:  audit.CheckAccounts, want: "stored last_position 1 ≠ 2999"},
		{name: "an account's version edited",
			tamper: `UPDATE accounts SET version = version + 1 WHERE account_id = (SELECT stream_id FROM events WHERE position = 2999)`,
			undo:   `UPDATE accounts SET version = version - 1 WHERE account_id = (SELECT stream_id FROM events WHERE position = 2999)`,
			check:  audit.CheckAccounts, want: "stored version"},
		// The event before a stream's first after the checkpoint removed:
		// the stream no longer continues where it stood at the checkpoint.
		{name: "an event before the checkpoint removed from a stream the day continues",
			tamper: `CREATE TABLE removed_event AS SELECT * FROM events e WHERE e.position <= 2000 AND (e.stream_id, e.stream_version) IN
			           (SELECT stream_id, min(stream_version) - 1 FROM events WHERE position > 2000 GROUP BY stream_id ORDER BY stream_id LIMIT 1);
			         DELETE FROM events WHERE event_id IN (SELECT event_id FROM removed_event)`,
			undo:  `INSERT INTO events SELECT * FROM removed_event; DROP TABLE removed_event`,
			check: audit.CheckAccounts, want: "its stream was at"},
		// The tile of the checkpoint's last leaf (1999: level 0, tile 7),
		// a hash of it the checkpoint covers.
		{name: "a tile the checkpoint covers changed",
			save:   `SELECT data FROM log_tiles WHERE log = 'platform' AND level = 0 AND n = 7`,
			tamper: `UPDATE log_tiles SET data = overlay(data PLACING sha256(data) FROM 33 FOR 32) WHERE log = 'platform' AND level = 0 AND n = 7`,
			undo:   `UPDATE log_tiles SET data = $1 WHERE log = 'platform' AND level = 0 AND n = 7`,
			check:  audit.CheckSinceConsistency, want: "do not prove the checkpoint's root"},
		{name: "the stored head's root changed",
			save:   `SELECT root FROM log_trees WHERE log = 'platform'`,
			tamper: `UPDATE log_trees SET root = sha256(root) WHERE log = 'platform'`,
			undo:   `UPDATE log_trees SET root = $1 WHERE log = 'platform'`,
			check:  audit.CheckSinceConsistency, want: "the log is not consistent with the checkpoint"},
		{name: "signed by another key", check: audit.CheckSinceCheckpoint, want: "not signed by a checkpoint key",
			file: func() string {
				return l.write("other-key", mustSign(t, cp, ledgerlog.Key{Name: sinceOrigin, Priv: otherPriv}))
			}},
		{name: "another origin", check: audit.CheckSinceCheckpoint, want: `not this ledger's platform log "pitboss.test/ledger"`,
			file: func() string {
				return l.write("other-origin", mustSign(t, foreign, ledgerlog.Key{Name: foreign.Origin, Priv: l.priv}))
			}},
	}
	for _, tc := range tests {
		var saved []any
		if tc.save != "" {
			var b []byte
			if err := l.pool.QueryRow(t.Context(), tc.save).Scan(&b); err != nil {
				t.Fatal(err)
			}
			saved = append(saved, b)
		}
		if tc.tamper != "" {
			l.exec(tc.tamper)
		}
		file := l.file
		if tc.file != nil {
			file = tc.file()
		}
		out, _, code := l.run("--since", file, "--quiet", "--json")
		var rep sinceReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil || code != exitVerifyFailed || rep.OK {
			t.Errorf("%s: exit %d (%v)\n%s", tc.name, code, err, out)
		} else if c, ok := rep.Check(tc.check); !ok || c.OK || len(c.Examples) == 0 || !strings.Contains(c.Examples[0].String(), tc.want) {
			t.Errorf("%s: check %s %+v, want a finding with %q", tc.name, tc.check, c, tc.want)
		}
		if tc.undo != "" {
			l.exec(tc.undo, saved...)
		}
		if _, _, code := l.run("--since", l.file, "--quiet"); code != 0 {
			t.Fatalf("%s: undone, exit %d", tc.name, code)
		}
	}

	// Usage errors: exit 2 with a message, as verify's.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--since", l.write("garbage", []byte("not a note"))}, "not a signed checkpoint note"},
		{[]string{"--since", l.write("unsigned", []byte(cp.Text()))}, "not a signed checkpoint note"},
		{[]string{"--since", filepath.Join(l.dir, "missing")}, "no such file"},
		{[]string{"--since", l.file, "--anchor", "1:" + strings.Repeat("00", 32)}, "--since checks"},
	} {
		if _, msg, code := l.run(tc.args...); code != exitVerifyError || !strings.Contains(msg, tc.want) {
			t.Errorf("verify %v: exit %d, %q; want 2 and %q", tc.args, code, msg, tc.want)
		}
	}
}

// An event removed before the checkpoint and the log rebuilt without it:
// the stored tree no longer proves the signed root, and the checkpoint's
// last leaf is another event.
func TestVerifySinceRebuiltLog(t *testing.T) {
	t.Parallel()
	l := newSinceLedger(t)
	l.exec(`DELETE FROM events WHERE position = 700`)
	l.exec(`TRUNCATE log_trees, log_tiles, log_leaves`)
	b := logstore.NewBuilder(l.pool, 5000, nil)
	for {
		n, err := b.Pass(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	out, _, code := l.run("--since", l.file, "--quiet", "--json")
	var rep sinceReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != exitVerifyFailed || rep.OK {
		t.Fatalf("exit %d (%v)\n%s", code, err, out)
	}
	if c, _ := rep.Check(audit.CheckSinceConsistency); c.OK || !strings.Contains(c.Examples[0].Message, "do not prove the checkpoint's root") {
		t.Fatalf("log_consistency %+v", c)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustVerifierKey(t *testing.T, name string, pub ed25519.PublicKey) string {
	t.Helper()
	k, err := ledgerlog.VerifierKey(name, pub)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustSign(t *testing.T, cp ledgerlog.Checkpoint, k ledgerlog.Key) []byte {
	t.Helper()
	b, err := ledgerlog.Sign(cp, k)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// BenchmarkVerifySince is `pitboss verify --since` on a ledger of
// PITBOSS_SINCE_LEDGER events (default 200,000) whose log was signed
// PITBOSS_SINCE_DAY events (default 100,000) before the head: the whole
// command, in events after the checkpoint per second. It also reports
// the log builder's rate over the ledger.
//
//	go test ./cmd/pitboss -run '^$' -bench VerifySince -benchtime 3x
func BenchmarkVerifySince(b *testing.B) {
	ledger, day := sinceEnvInt(b, "PITBOSS_SINCE_LEDGER", 200_000), sinceEnvInt(b, "PITBOSS_SINCE_DAY", 100_000)
	pool, dsn := pgtest.NewDatabase(b)
	ctx := b.Context()
	if _, err := eventstore.SeedEvents(ctx, pool, eventstore.SeedOptions{Events: ledger, Clients: 3, Seed: 11}); err != nil {
		b.Fatal(err)
	}
	box, err := secretbox.New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		b.Fatal(err)
	}
	cps := auditstore.NewCheckpoints(pool, box)
	if _, err := cps.RotateKey(ctx); err != nil {
		b.Fatal(err)
	}
	st := logstore.New(pool)
	t0 := time.Now()
	buildTo := func(size int64) {
		for {
			tree, err := st.Tree(ctx, ledgerlog.PlatformLog)
			if err != nil {
				b.Fatal(err)
			}
			left := size - tree.Size
			if left <= 0 {
				return
			}
			if _, err := logstore.NewBuilder(pool, int(min(left, logstore.DefaultBuildBatch)), nil).Pass(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	buildTo(int64(ledger - day))
	if _, err := st.SignDue(ctx, sinceOrigin, cps, 0, time.Now()); err != nil {
		b.Fatal(err)
	}
	buildTo(int64(ledger))
	buildRate := float64(ledger) / time.Since(t0).Seconds()
	cp, err := st.CheckpointOfSize(ctx, ledgerlog.PlatformLog, int64(ledger-day))
	if err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(b.TempDir(), "checkpoint")
	if err := os.WriteFile(file, cp.Note, 0o600); err != nil {
		b.Fatal(err)
	}
	cfg := config{DatabaseURL: dsn, LogOrigin: sinceOrigin}
	var took time.Duration
	for b.Loop() {
		var out bytes.Buffer
		start := time.Now()
		if err := verify(ctx, cfg, []string{"--since", file, "--quiet", "--batch", "4096"}, &out, io.Discard); err != nil {
			b.Fatalf("%v\n%s", err, out.String())
		}
		took += time.Since(start)
	}
	b.ReportMetric(float64(day)*float64(b.N)/took.Seconds(), "events/s")
	b.ReportMetric(buildRate, "log-build-events/s")
}

func sinceEnvInt(b *testing.B, name string, def int) int {
	if v := os.Getenv(name); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("%s=%q", name, v)
		}
		return n
	}
	return def
}
