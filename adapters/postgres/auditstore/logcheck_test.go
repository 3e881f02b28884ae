package auditstore_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres/auditstore"
	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/logstore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/audit"
	"github.com/pitboss/pitboss/ledgerlog"
)

const testOrigin = "pitboss.test/ledger"

// logLedger is a seeded ledger (3,000 events, two clients) whose logs the
// builder grew in passes of at most 1,000 events, signing checkpoints
// after each, and left behind the head (at 2,000 to 2,999 events): the
// check compares at the stored sizes.
func logLedger(t *testing.T) (*pgxpool.Pool, *auditstore.Checkpoints) {
	t.Helper()
	pool, _ := pgtest.NewDatabase(t)
	ctx := t.Context()
	if _, err := eventstore.SeedEvents(ctx, pool, eventstore.SeedOptions{Events: 3000, Clients: 2, Seed: 11}); err != nil {
		t.Fatal(err)
	}
	cps := auditstore.NewCheckpoints(pool, newBox(t))
	if _, err := cps.RotateKey(ctx); err != nil {
		t.Fatal(err)
	}
	b, st := logstore.NewBuilder(pool, 1000, nil), logstore.New(pool)
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	growLogs(t, b, 2000, func() {
		now = now.Add(time.Hour)
		if _, err := st.SignDue(ctx, testOrigin, cps, time.Minute, now); err != nil {
			t.Fatal(err)
		}
	})
	return pool, cps
}

// growLogs runs builder passes until the platform's log holds at least
// size events, calling after after each pass that grew it. A pass takes
// only events older than every transaction still running in the cluster
// (other tests' too): it waits for them.
func growLogs(t *testing.T, b *logstore.Builder, size int, after func()) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for total := 0; total < size; {
		n, err := b.Pass(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			total += n
			after()
			continue
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("the logs hold %d events, want %d", total, size)
		case <-tick.C:
		}
	}
}

// hasFinding says whether the log check has a finding on field that says says.
func hasFinding(rep audit.Report, field, says string) bool {
	c, _ := rep.Check(auditstore.CheckLog)
	for _, f := range c.Examples {
		if f.Field == field && strings.Contains(f.Message, says) {
			return true
		}
	}
	return false
}

func logB64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// TestVerifyLog recomputes every log from the events with tlog alone: a
// true ledger passes, and each tampering with the events, the stored
// tree or the checkpoints gives the log check a finding naming it; once
// undone, the check holds again.
func TestVerifyLog(t *testing.T) {
	t.Parallel()
	pool, cps := logLedger(t)
	ctx := t.Context()
	a := auditstore.NewAudit(pool)
	verify := func(t *testing.T) audit.Report {
		t.Helper()
		rep, err := a.Verify(ctx, auditstore.VerifyOptions{BatchSize: 700, SkipReadModels: true})
		if err != nil {
			t.Fatalf("verify: %v", err)
		}
		return rep
	}
	rep := verify(t)
	c, ok := rep.Check(auditstore.CheckLog)
	if !ok || !c.OK || c.Rows != 3000 || !rep.OK {
		t.Fatalf("true ledger: %+v (report ok %v)", c, rep.OK)
	}
	var checkpoints int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM log_checkpoints`).Scan(&checkpoints); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.Note, "3 logs") || !strings.Contains(c.Note, fmt.Sprintf(" %d signed checkpoints", checkpoints)) || checkpoints < 6 {
		t.Fatalf("note %q", c.Note)
	}

	keyID, priv, err := cps.SigningKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := logstore.New(pool).LatestCheckpoint(ctx, ledgerlog.PlatformLog)
	if err != nil {
		t.Fatal(err)
	}
	_, otherKey, _ := ed25519.GenerateKey(rand.Reader)
	forked := cp.Root
	forked[0] ^= 1
	insert := func(t *testing.T, k ed25519.PrivateKey, root [32]byte) string {
		msg, err := ledgerlog.Sign(ledgerlog.Checkpoint{Origin: testOrigin, Size: cp.Size, Root: root}, ledgerlog.Key{Name: testOrigin, Priv: k})
		if err != nil {
			t.Fatal(err)
		}
		var id int64
		if err := pool.QueryRow(ctx, `INSERT INTO log_checkpoints (log, size, root, note, key_id) VALUES ('platform', $1, $2, $3, $4)
			RETURNING id`, cp.Size, root[:], string(msg), keyID).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf(`DELETE FROM log_checkpoints WHERE id = %d`, id)
	}

	tests := []struct {
		name   string
		tamper func(t *testing.T) (restore string)
		field  string // the finding's
		says   string // in its message
	}{
		{"a body changed", func(t *testing.T) string {
			audExec(t, pool, `UPDATE events SET body = (body::text || ' ')::json WHERE position = 300`)
			return `UPDATE events SET body = rtrim(body::text)::json WHERE position = 300`
		}, "tile", "tile/8/0/001 (256 hashes, completed by the event at 512) differs"},
		{"a tile changed", func(t *testing.T) string {
			sql := `UPDATE log_tiles SET data = set_byte(data, 40, get_byte(data, 40) # 1) WHERE log = 'client/' || $1 AND level = 0 AND n = 0`
			audExec(t, pool, sql, clientOf(t, pool))
			return strings.Replace(sql, "$1", "'"+clientOf(t, pool)+"'", 1)
		}, "tile", "tile/8/0/000 (256 hashes"},
		{"the stored root changed", func(t *testing.T) string {
			audExec(t, pool, `UPDATE log_trees SET root = set_byte(root, 0, get_byte(root, 0) # 1) WHERE log = 'platform'`)
			return `UPDATE log_trees SET root = set_byte(root, 0, get_byte(root, 0) # 1) WHERE log = 'platform'`
		}, "root", "the stored tree states root"},
		{"a checkpoint signed by another key", func(t *testing.T) string { return insert(t, otherKey, cp.Root) },
			"checkpoint", "does not verify with key"},
		{"a forked checkpoint signed by the key", func(t *testing.T) string { return insert(t, priv, forked) },
			"root", fmt.Sprintf("states root %s at size %d", logB64(forked[:]), cp.Size)},
		{"a checkpoint's note edited", func(t *testing.T) string {
			audExec(t, pool, `UPDATE log_checkpoints SET note = replace(note, E'\n' || size || E'\n', E'\n' || size - 1 || E'\n')
				WHERE id = $1`, cp.ID)
			return fmt.Sprintf(`UPDATE log_checkpoints SET note = replace(note, E'\n' || size - 1 || E'\n', E'\n' || size || E'\n')
				WHERE id = %d`, cp.ID)
		}, "checkpoint", "does not verify"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			restore := tt.tamper(t)
			rep := verify(t)
			if c, _ := rep.Check(auditstore.CheckLog); c.OK || !hasFinding(rep, tt.field, tt.says) {
				t.Fatalf("log check %+v: want a %s finding saying %q", c, tt.field, tt.says)
			}
			audExec(t, pool, restore)
			if c, _ := verify(t).Check(auditstore.CheckLog); !c.OK {
				t.Fatalf("after the restore: %+v", c)
			}
		})
	}
}

func clientOf(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	var log string
	if err := pool.QueryRow(context.Background(), `SELECT min(log) FROM log_trees WHERE log LIKE 'client/%'`).Scan(&log); err != nil {
		t.Fatal(err)
	}
	return ledgerlog.ClientOf(log)
}
