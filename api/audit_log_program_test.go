package api_test

import (
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/pitboss/pitboss/adapters/postgres/auditstore"
	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/ledgerlog"
)

// buildVerifyLog builds the program docs/audit.md prints ("Verifying the
// log without our code"), exactly as printed, in a directory inside the
// module (so golang.org/x/mod resolves from our go.mod; the leading dot
// keeps it out of ./...), and returns the binary's path.
func buildVerifyLog(t *testing.T) string {
	t.Helper()
	gobin, err := osexec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the documented program")
	}
	doc, err := os.ReadFile("../docs/audit.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```go\n// verifylog.go")
	body, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/audit.md has no verifylog.go block")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(root, ".verifylog-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	src := filepath.Join(dir, "verifylog.go")
	if err := os.WriteFile(src, []byte("// verifylog.go"+body), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "verifylog")
	cmd := osexec.CommandContext(t.Context(), gobin, "build", "-o", bin, src)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the documented program: %v\n%s", err, out)
	}
	return bin
}

// verifyLog runs the program against f's server as acme's auditor.
func (f *logFixture) verifyLog(bin string, args ...string) (string, error) {
	f.t.Helper()
	vkey := f.verifierKey("/api/v1/audit/log", f.acme)
	cmd := osexec.CommandContext(f.t.Context(), bin,
		append([]string{"-api", f.URL + "/api/v1", "-key", f.acme, "-vkey", vkey}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// The outside program of docs/audit.md passes on a true ledger and
// refuses a changed event, a log rebuilt without an event and a forked
// checkpoint.
func TestVerifyLogProgram(t *testing.T) {
	t.Parallel()
	bin := buildVerifyLog(t)

	t.Run("a true ledger", func(t *testing.T) {
		t.Parallel()
		f := newLogFixture(t)
		acme := f.positions("acme")
		saved := filepath.Join(t.TempDir(), "first.checkpoint")
		out, err := f.verifyLog(bin, "-position", fmt.Sprint(acme[0]), "-save", saved)
		if err != nil || !strings.Contains(out, "OK checkpoint: size 3") || !strings.Contains(out, "leaf 0 of the checkpoint") {
			t.Fatalf("%v\n%s", err, out)
		}
		f.deposit("acme")
		f.deposit("other")
		f.grow(true)
		out, err = f.verifyLog(bin, "-position", fmt.Sprint(acme[2]), "-old", saved)
		if err != nil || !strings.Contains(out, "OK event at position "+fmt.Sprint(acme[2])+": leaf 2") ||
			!strings.Contains(out, "OK the log of size 4 extends the checkpoint of size 3") {
			t.Fatalf("%v\n%s", err, out)
		}
	})

	refused := func(t *testing.T, out string, err error, want string) {
		t.Helper()
		if err == nil || !strings.Contains(out, "FAIL: "+want) {
			t.Fatalf("want a refusal %q, got %v:\n%s", want, err, out)
		}
		t.Logf("refused:\n%s", out)
	}
	t.Run("a changed event", func(t *testing.T) {
		t.Parallel()
		f := newLogFixture(t)
		acme := f.positions("acme")
		if _, err := f.Pool.Exec(t.Context(), `UPDATE events SET body = replace(body::text, '"1.00"', '"1000.00"')::json
			WHERE position = $1`, acme[1]); err != nil {
			t.Fatal(err)
		}
		out, err := f.verifyLog(bin, "-position", fmt.Sprint(acme[1]))
		refused(t, out, err, fmt.Sprintf("the event at position %d is NOT in the signed log as shown", acme[1]))
		// the others still prove
		if out, err := f.verifyLog(bin, "-position", fmt.Sprint(acme[0])); err != nil {
			t.Fatalf("an unchanged event: %v\n%s", err, out)
		}
	})
	t.Run("a removed event", func(t *testing.T) {
		t.Parallel()
		f := newLogFixture(t)
		saved := filepath.Join(t.TempDir(), "true.checkpoint")
		if out, err := f.verifyLog(bin, "-save", saved); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		// the event gone, the logs rebuilt from scratch over what is left
		// and grown past the saved size
		ctx := t.Context()
		if _, err := f.Pool.Exec(ctx, `DELETE FROM events WHERE position = $1`, f.positions("acme")[1]); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Pool.Exec(ctx, `DELETE FROM log_trees; DELETE FROM log_tiles; DELETE FROM log_leaves`); err != nil {
			t.Fatal(err)
		}
		f.deposit("acme")
		f.deposit("acme")
		f.grow(true)
		out, err := f.verifyLog(bin, "-old", saved)
		if !strings.Contains(out, "OK checkpoint: size 4") {
			t.Fatalf("the rebuilt log is not the one served:\n%s", out)
		}
		refused(t, out, err, "the log is NOT consistent with the older checkpoint (size 3)")
	})
	t.Run("a forked checkpoint", func(t *testing.T) {
		t.Parallel()
		f := newLogFixture(t)
		saved := filepath.Join(t.TempDir(), "true.checkpoint")
		if out, err := f.verifyLog(bin, "-save", saved); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		// the same size, another root, signed with the same key: what a
		// log showing another auditor another ledger would serve
		origin := apitest.LogOrigin + "/clients/acme"
		keyID, priv, err := auditstore.NewCheckpoints(f.Pool, f.Box).SigningKey(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		fork, err := ledgerlog.Sign(ledgerlog.Checkpoint{Origin: origin, Size: 3, Root: tlog.RecordHash([]byte("another ledger"))},
			ledgerlog.Key{Name: origin, Priv: priv})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Pool.Exec(t.Context(), `INSERT INTO log_checkpoints (log, size, root, note, key_id, created_at)
			SELECT log, size, root, $2, $3, now() FROM log_checkpoints WHERE log = $1`,
			ledgerlog.ClientLog("acme"), string(fork), keyID); err != nil {
			t.Fatal(err)
		}
		out, err := f.verifyLog(bin, "-old", saved)
		if !strings.Contains(out, "OK checkpoint: size 3, root "+tlog.RecordHash([]byte("another ledger")).String()) {
			t.Fatalf("the fork is not the checkpoint served, or its signature was refused:\n%s", out)
		}
		refused(t, out, err, "the log is NOT consistent with the older checkpoint (size 3)")
	})
}
