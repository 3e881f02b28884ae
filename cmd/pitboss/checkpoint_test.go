package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/checkpointjob"
	"github.com/pitboss/pitboss/adapters/kafka"
	"github.com/pitboss/pitboss/adapters/kafka/kafkatest"
	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/audit"
	"github.com/pitboss/pitboss/internal/eventually"
)

type ckptEnv struct {
	t   *testing.T
	cfg config
	dir string
}

func newCkptEnv(t *testing.T) (*ckptEnv, *pgxpool.Pool) {
	t.Helper()
	pool, dsn := pgtest.NewDatabase(t)
	if _, err := eventstore.SeedEvents(t.Context(), pool, eventstore.SeedOptions{Events: 300, Clients: 2, PlayersPerClient: 5, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	return &ckptEnv{t: t, cfg: config{DatabaseURL: dsn, DataDir: t.TempDir()}, dir: t.TempDir()}, pool
}

// run runs a pitboss command line as main does.
func (e *ckptEnv) run(args ...string) (string, int) {
	e.t.Helper()
	var out, errOut bytes.Buffer
	var err error
	switch args[0] {
	case "checkpoint":
		err = checkpointCommand(e.t.Context(), e.cfg, args[1:], &out, &errOut)
	case "checkpoint-key":
		err = checkpointKeyCommand(e.t.Context(), e.cfg, args[1:], &out, &errOut)
	case "verify":
		err = verify(e.t.Context(), e.cfg, args[1:], &out, &errOut)
	}
	return out.String() + errOut.String() + errText(err), exitCode(err)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return "\nerror: " + err.Error()
}

// write saves a record in a file and returns its path.
func (e *ckptEnv) write(name string, rec audit.CheckpointRecord) string {
	e.t.Helper()
	raw, err := json.Marshal(rec)
	if err != nil {
		e.t.Fatal(err)
	}
	p := filepath.Join(e.dir, name)
	if err := os.WriteFile(p, raw, 0o600); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// get is `pitboss checkpoint get ID` decoded.
func (e *ckptEnv) get(id int64) audit.CheckpointRecord {
	e.t.Helper()
	out, code := e.run("checkpoint", "get", "--id", strconv.FormatInt(id, 10))
	var rec audit.CheckpointRecord
	if err := json.Unmarshal([]byte(out), &rec); code != 0 || err != nil {
		e.t.Fatalf("checkpoint get %d: exit %d, %v\n%s", id, code, err, out)
	}
	return rec
}

var madeRe = regexp.MustCompile(`^checkpoint (\d+): position (\d+), chain hash [0-9a-f]{64}, signed \S+ with key ([0-9a-f]{16}); (\d+) client checkpoints\n$`)

// make is `pitboss checkpoint`: the platform checkpoint's id and key.
func (e *ckptEnv) make() (int64, string) {
	e.t.Helper()
	out, code := e.run("checkpoint")
	m := madeRe.FindStringSubmatch(out)
	if code != 0 || m == nil {
		e.t.Fatalf("pitboss checkpoint: exit %d\n%s", code, out)
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)
	return id, m[3]
}

// `pitboss checkpoint`, `checkpoint get`, `checkpoint-key list|rotate` and
// `verify --checkpoint` as an operator runs them: a checkpoint verifies by
// id and from its file, a changed payload fails its signature, an edited
// event fails the ledger half, and a rotated key leaves old checkpoints
// verifying.
func TestCheckpointCommands(t *testing.T) {
	t.Parallel()
	e, pool := newCkptEnv(t)

	// the first checkpoint makes the key
	id, key := e.make()
	out, code := e.run("checkpoint-key", "list")
	if code != 0 || !strings.HasPrefix(out, key+"  ") || !strings.Contains(out, "active\n-----BEGIN PUBLIC KEY-----") ||
		strings.Count(out, "BEGIN PUBLIC KEY") != 1 {
		t.Fatalf("checkpoint-key list: exit %d\n%s", code, out)
	}
	rec := e.get(id)
	p, err := audit.ParseCheckpoint([]byte(rec.Payload))
	if err != nil || p.Scope != audit.CheckpointScopePlatform || p.Position != 300 || rec.KeyID != key {
		t.Fatalf("record %+v: %v", rec, err)
	}
	var clientID int64
	if err := pool.QueryRow(t.Context(), `SELECT min(id) FROM checkpoints WHERE client_id <> ''`).Scan(&clientID); err != nil {
		t.Fatal(err)
	}

	// the platform's and a client's verify, by id and from a file
	file := e.write("platform.json", rec)
	for _, arg := range []string{strconv.FormatInt(id, 10), file, strconv.FormatInt(clientID, 10)} {
		out, code := e.run("verify", "--checkpoint", arg, "--batch", "64")
		if code != 0 || !strings.HasPrefix(out, "verify checkpoint OK: key "+key) || !strings.Contains(out, "ok   checkpoint_totals") ||
			!strings.Contains(out, "ok   anchors") {
			t.Fatalf("verify --checkpoint %s: exit %d\n%s", arg, code, out)
		}
	}
	out, code = e.run("verify", "--checkpoint", file, "--json")
	var rep struct {
		OK        bool                `json:"ok"`
		Signature string              `json:"signature"`
		Checks    []audit.CheckResult `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || !rep.OK || rep.Signature != "ok" || len(rep.Checks) < 5 {
		t.Fatalf("--json: exit %d, %v\n%s", code, err, out)
	}

	// a payload changed by one byte fails its signature
	forged := rec
	forged.Payload = strings.Replace(rec.Payload, `"position":300`, `"position":299`, 1)
	out, code = e.run("verify", "--checkpoint", e.write("forged.json", forged))
	if code != exitVerifyFailed || !strings.Contains(out, "FAIL signature  the signature does not verify") {
		t.Fatalf("forged payload: exit %d\n%s", code, out)
	}

	// a rotated key signs the next checkpoint; the old one still verifies
	out, code = e.run("checkpoint-key", "rotate")
	if code != 0 || !strings.HasPrefix(out, "checkpoint key ") || strings.Contains(out, key) {
		t.Fatalf("rotate: exit %d\n%s", code, out)
	}
	id2, key2 := e.make()
	if key2 == key || id2 <= id {
		t.Fatalf("after rotation: checkpoint %d key %s", id2, key2)
	}
	if out, code := e.run("checkpoint-key", "list"); code != 0 || strings.Count(out, "BEGIN PUBLIC KEY") != 2 ||
		!strings.Contains(out, key+"  ") || !strings.Contains(out, "retired") {
		t.Fatalf("list after rotation: exit %d\n%s", code, out)
	}
	// a record carrying a key of its own is refused even when its signature holds
	substituted := e.get(id2)
	substituted.KeyID = key
	if out, code := e.run("verify", "--checkpoint", e.write("substituted.json", substituted)); code != exitVerifyFailed ||
		!strings.Contains(out, "FAIL signature  the record's public key is not the key listed as "+key) {
		t.Fatalf("substituted key: exit %d\n%s", code, out)
	}
	for _, c := range []int64{id, id2} {
		if out, code := e.run("verify", "--checkpoint", strconv.FormatInt(c, 10)); code != 0 {
			t.Fatalf("checkpoint %d after rotation: exit %d\n%s", c, code, out)
		}
	}

	// an amount edited in the database fails the ledger half (the event's
	// data.amount: its postings, and so the totals, are unchanged)
	var edited int64
	if err := pool.QueryRow(t.Context(), `
UPDATE events SET body = regexp_replace(body::text, '"amount":"([0-9]+)', '"amount":"9\1')::json
 WHERE position = (SELECT min(position) FROM events WHERE position >= 120 AND body::text ~ '"amount":"[0-9]')
RETURNING position`).Scan(&edited); err != nil {
		t.Fatal(err)
	}
	out, code = e.run("verify", "--checkpoint", file)
	if code != exitVerifyFailed || !strings.HasPrefix(out, "verify checkpoint FAILED") || !strings.Contains(out, "ok   signature") ||
		!strings.Contains(out, "FAIL hash_chain") || !strings.Contains(out, "first position "+strconv.FormatInt(edited, 10)+":") {
		t.Fatalf("verify after an edit: exit %d\n%s", code, out)
	}

	// usage errors and what cannot be read: exit 2
	for _, args := range [][]string{{"checkpoint", "get", "--id", "x"}, {"checkpoint", "get"}, {"checkpoint", "get", "--id", "1", "extra"}, {"checkpoint", "nope"},
		{"checkpoint-key"}, {"checkpoint-key", "burn"}, {"checkpoint-key", "list", "extra"},
		{"verify", "--checkpoint", filepath.Join(e.dir, "missing.json")}, {"verify", "--checkpoint", "999999"},
		{"verify", "--checkpoint", "1", "--anchor", "1:" + strings.Repeat("ab", 32)}} {
		if out, code := e.run(args...); code != 2 {
			t.Errorf("%v: exit %d\n%s", args, code, out)
		}
	}
}

// The two recipes in docs/audit.md ("Verifying a checkpoint without our
// code"), run as written against a real checkpoint: each accepts it and
// refuses it with one payload byte changed.
func TestCheckpointRecipes(t *testing.T) {
	t.Parallel()
	e, _ := newCkptEnv(t)
	id, _ := e.make()
	good := e.get(id)
	bad := good
	bad.Payload = strings.Replace(good.Payload, `"position":300`, `"position":301`, 1)
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "audit.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := func(opening string) string {
		_, rest, ok := strings.Cut(string(doc), "```"+opening)
		body, _, ok2 := strings.Cut(rest, "```")
		if !ok || !ok2 {
			t.Fatalf("docs/audit.md has no block opening %q", opening)
		}
		_, first, _ := strings.Cut(opening, "\n")
		return first + body
	}

	t.Run("python", func(t *testing.T) {
		py, err := osexec.LookPath("python3")
		if err != nil {
			t.Skip("python3 is not installed: the documented script cannot run here")
		}
		if out, err := osexec.Command(py, "-c", "import cryptography.hazmat.primitives.asymmetric.ed25519").CombinedOutput(); err != nil {
			t.Skipf("python3 has no cryptography package (pip install cryptography): %s", out)
		}
		script := filepath.Join(e.dir, "verify_checkpoint.py")
		if err := os.WriteFile(script, []byte(block("python\n# verify_checkpoint.py")), 0o600); err != nil {
			t.Fatal(err)
		}
		p, _ := audit.ParseCheckpoint([]byte(good.Payload))
		out, err := osexec.Command(py, script, e.write("good.json", good)).CombinedOutput()
		if err != nil || !strings.HasPrefix(string(out), "OK platform  position 300 chain_hash "+p.ChainHash) ||
			!strings.Contains(string(out), "postings sum 0.") {
			t.Fatalf("script on a good checkpoint: %v\n%s", err, out)
		}
		// pinned to the key from checkpoint-keys, as the docs advise
		if out, err := osexec.Command(py, script, e.write("good.json", good), good.PublicKey).CombinedOutput(); err != nil {
			t.Fatalf("script with the pinned key: %v\n%s", err, out)
		}
		out, err = osexec.Command(py, script, e.write("bad.json", bad)).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "BAD signature") {
			t.Fatalf("script on a changed payload: %v\n%s", err, out)
		}
	})

	t.Run("openssl", func(t *testing.T) {
		for _, tool := range []string{"openssl", "jq", "base64", "sh"} {
			if _, err := osexec.LookPath(tool); err != nil {
				t.Skipf("%s is not installed: the documented recipe cannot run here", tool)
			}
		}
		if v, err := osexec.Command("openssl", "version").Output(); err != nil || !regexp.MustCompile(`^OpenSSL [3-9]\.`).Match(v) {
			t.Skipf("openssl %q (%v): Ed25519 with -rawin needs OpenSSL 3.0 or later", v, err)
		}
		recipe := block("sh\n# verify a checkpoint with openssl")
		run := func(rec audit.CheckpointRecord) (string, error) {
			dir := t.TempDir()
			raw, _ := json.Marshal(rec)
			if err := os.WriteFile(filepath.Join(dir, "checkpoint.json"), raw, 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := osexec.Command("sh", "-e", "-c", recipe)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			return string(out), err
		}
		if out, err := run(good); err != nil || !strings.Contains(out, "Signature Verified Successfully") {
			t.Fatalf("openssl on a good checkpoint: %v\n%s", err, out)
		}
		if out, err := run(bad); err == nil || !strings.Contains(out, "Signature Verification Failure") {
			t.Fatalf("openssl on a changed payload: %v\n%s", err, out)
		}
	})
}

// serve's relay role signs the day's checkpoint on its first tick and
// publishes every checkpoint on the checkpoint topic.
func TestServeMakesDailyCheckpoint(t *testing.T) {
	t.Parallel()
	cfg, pool := testConfig(t)
	cfg.Topic = kafkatest.NewTopic(t, cfg.KafkaBrokers, 1)
	ckTopic := cfg.Topic + checkpointjob.TopicSuffix
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = kafka.DeleteTopic(ctx, cfg.KafkaBrokers, ckTopic)
	})
	if _, err := eventstore.SeedEvents(t.Context(), pool, eventstore.SeedOptions{Events: 40, Clients: 2, PlayersPerClient: 2, Seed: 9}); err != nil {
		t.Fatal(err)
	}
	startServe(t, cfg, "api,relay")
	var made, published int
	eventually.True(t, 60*time.Second, "a checkpoint made and published", func() bool {
		if err := pool.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM checkpoints), (SELECT count(*) FROM checkpoint_publications)`).
			Scan(&made, &published); err != nil {
			t.Fatal(err)
		}
		return made > 0 && published == made
	})
	if made != 3 {
		t.Fatalf("%d checkpoints, want the platform's and two clients'", made)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	recs, err := kafkatest.ReadUntil(ctx, cfg.KafkaBrokers, ckTopic, func(r []kafkatest.Record) bool { return len(r) >= 3 })
	if err != nil || len(recs) != 3 {
		t.Fatalf("%d records on %s: %v", len(recs), ckTopic, err)
	}
}

// TestExportCheckpointsRecipe: `pitboss export --checkpoints` writes the
// platform checkpoints the export holds, and docs/audit.md's tie script
// accepts them with the export, and refuses an export whose line at a
// checkpoint's position was changed, or a checkpoint whose payload was.
func TestExportCheckpointsRecipe(t *testing.T) {
	t.Parallel()
	e, _ := newCkptEnv(t)
	id, _ := e.make()
	events, cps := filepath.Join(e.dir, "events.ndjson"), filepath.Join(e.dir, "checkpoints.ndjson")
	var out, errOut bytes.Buffer
	if err := export(t.Context(), e.cfg, []string{"--output", events, "--checkpoints", cps}, &out, &errOut); err != nil {
		t.Fatalf("export: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(errOut.String(), "wrote 1 signed checkpoints inside the export to "+cps) {
		t.Fatalf("summary %q", errOut.String())
	}
	raw, err := os.ReadFile(cps)
	if err != nil {
		t.Fatal(err)
	}
	var rec audit.CheckpointRecord
	if err := json.Unmarshal(bytes.TrimSpace(raw), &rec); err != nil || rec.ID != id {
		t.Fatalf("checkpoints file %s (%v), want checkpoint %d", raw, err, id)
	}
	py, err := osexec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the documented script cannot run here")
	}
	if out, err := osexec.Command(py, "-c", "import cryptography.hazmat.primitives.asymmetric.ed25519").CombinedOutput(); err != nil {
		t.Skipf("python3 has no cryptography package (pip install cryptography): %s", out)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "audit.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(doc), "```python\n# tie_checkpoints.py")
	body, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("docs/audit.md has no tie_checkpoints.py block")
	}
	script := filepath.Join(e.dir, "tie_checkpoints.py")
	if err := os.WriteFile(script, []byte("# tie_checkpoints.py"+body), 0o600); err != nil {
		t.Fatal(err)
	}
	tie := func(ev, cp string) (string, error) {
		out, err := osexec.Command(py, script, ev, cp).CombinedOutput()
		return string(out), err
	}
	if out, err := tie(events, cps); err != nil || !strings.HasPrefix(out, "OK 1 signed checkpoints tie to the export") {
		t.Fatalf("a true export: %v\n%s", err, out)
	}
	lines, err := os.ReadFile(events)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := audit.ParseCheckpoint([]byte(rec.Payload))
	changed := strings.Replace(string(lines), `"hash":"`+p.ChainHash+`"`, `"hash":"`+strings.Repeat("0", 64)+`"`, 1)
	if changed == string(lines) {
		t.Fatal("the test could not change the line at the checkpoint")
	}
	bad := filepath.Join(e.dir, "bad-events.ndjson")
	if err := os.WriteFile(bad, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := tie(bad, cps); err == nil || !strings.Contains(out, "is not the signed one") {
		t.Fatalf("a changed export: %v\n%s", err, out)
	}
	badCP := filepath.Join(e.dir, "bad-checkpoints.ndjson")
	if err := os.WriteFile(badCP, bytes.Replace(raw, []byte(`\"position\":`), []byte(`\"position\" :`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := tie(events, badCP); err == nil || !strings.Contains(out, "BAD signature") {
		t.Fatalf("a changed checkpoint: %v\n%s", err, out)
	}
}
