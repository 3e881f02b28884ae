package auditstore_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres/auditstore"
	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/secretbox"
	"github.com/pitboss/pitboss/audit"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/statement"
)

func newBox(t *testing.T) *secretbox.Box {
	t.Helper()
	key := make([]byte, secretbox.KeySize)
	_, _ = rand.Read(key)
	box, err := secretbox.New(key)
	if err != nil {
		t.Fatal(err)
	}
	return box
}

// verifyOK asserts that every check of a checkpoint verification held.
func verifyOK(t *testing.T, checks []audit.CheckResult) {
	t.Helper()
	for _, c := range checks {
		if !c.OK {
			t.Fatalf("check %s failed: %+v", c.Name, c)
		}
	}
}

func failedChecks(checks []audit.CheckResult) []string {
	var out []string
	for _, c := range checks {
		if !c.OK {
			out = append(out, c.Name)
		}
	}
	return out
}

// A run signs the platform's head and each client's own part with a key
// made on first use and sealed at rest; each checkpoint verifies by its
// signature and against the events; a rotated key signs the next run while
// the old one stays listed.
func TestCheckpoints(t *testing.T) {
	t.Parallel()
	e := newAudEnv(t)
	ctx := t.Context()
	box := newBox(t)
	at := time.Date(2026, 11, 26, 0, 0, 1, 123456789, time.UTC)
	cps := auditstore.NewCheckpoints(e.pool, box).WithClock(func() time.Time { return at })

	// when the first run signs
	res, err := cps.Make(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// then one key was made, its seed sealed
	keys, err := cps.Keys(ctx)
	if err != nil || len(keys) != 1 || !keys[0].Active || keys[0].KeyID != audit.CheckpointKeyID(keys[0].PublicKey) {
		t.Fatalf("keys %+v %v", keys, err)
	}
	var sealed []byte
	if err := e.pool.QueryRow(ctx, `SELECT sealed_private_key FROM checkpoint_keys`).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	seed, err := box.Open(sealed, "checkpoint_key:"+keys[0].KeyID)
	if err != nil || !bytes.Equal(ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey), keys[0].PublicKey) ||
		bytes.Contains(sealed, seed) {
		t.Fatalf("the sealed key does not open to the listed key's seed (or holds it in plain text): %v", err)
	}
	if _, err := newBox(t).Open(sealed, "checkpoint_key:"+keys[0].KeyID); err == nil {
		t.Fatal("another master key opened the signing key")
	}

	// and the platform's checkpoint is the head, with verify's totals
	rep := e.verify(t, auditstore.VerifyOptions{SkipReadModels: true})
	p, err := audit.VerifyCheckpointSignature(res.Platform.Payload, res.Platform.Signature, keys[0].PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	if p.Scope != audit.CheckpointScopePlatform || p.Position != rep.HeadPosition || p.ChainHash != rep.HeadHash ||
		!slices.Equal(p.Totals, rep.Currencies) || p.SignedAt != "2026-11-26T00:00:01.123456Z" || res.Clients != 2 {
		t.Fatalf("platform checkpoint %s; verify says head %d %s totals %+v; %d clients", res.Platform.Payload,
			rep.HeadPosition, rep.HeadHash, rep.Currencies, res.Clients)
	}
	checks, err := e.a.VerifyCheckpoint(ctx, p, 3)
	if err != nil {
		t.Fatal(err)
	}
	verifyOK(t, checks)

	// and each client's is its own last event, its own totals only
	clientCP := map[string]audit.SignedCheckpoint{}
	for _, span := range rep.Clients {
		list, err := cps.ClientCheckpoints(ctx, span.Client, 0, 10)
		if err != nil || len(list) != 1 {
			t.Fatalf("%s: %d checkpoints, %v", span.Client, len(list), err)
		}
		cp := list[0]
		clientCP[span.Client] = cp
		p, err := audit.VerifyCheckpointSignature(cp.Payload, cp.Signature, cp.PublicKey)
		if err != nil {
			t.Fatal(err)
		}
		tally := audit.NewCheckpointTally(span.Client)
		for _, r := range storedRecords(t, e) {
			tally.Add(r)
		}
		if p.ClientID != span.Client || p.Position != span.HeadPosition || p.ChainHash != span.HeadHash ||
			!slices.Equal(p.Totals, tally.Totals()) || len(p.Totals) != 1 || p.Totals[0].Debits == rep.Currencies[0].Debits {
			t.Fatalf("%s's checkpoint %s; its span %+v, its totals %+v (platform %+v)", span.Client, cp.Payload, span,
				tally.Totals(), rep.Currencies)
		}
		checks, err := e.a.VerifyCheckpoint(ctx, p, 4)
		if err != nil {
			t.Fatal(err)
		}
		verifyOK(t, checks)
	}
	if list, err := cps.ClientCheckpoints(ctx, "nobody", 0, 10); err != nil || len(list) != 0 {
		t.Fatalf("a client without events has checkpoints %v %v", list, err)
	}

	// when the key is rotated and another run signs after more events
	rotated, err := cps.RotateKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	audPlay(t, e.h, e.c1+"x") // a third client: c1's and c2's heads stay
	at = at.Add(24 * time.Hour)
	res2, err := cps.Make(ctx)
	if err != nil {
		t.Fatal(err)
	}
	keys, err = cps.Keys(ctx)
	if err != nil || len(keys) != 2 || keys[0].Active || !keys[1].Active || keys[1].KeyID != rotated.KeyID {
		t.Fatalf("keys after rotation %+v %v", keys, err)
	}
	if res2.Platform.KeyID != rotated.KeyID || res2.Clients != 3 {
		t.Fatalf("second run signed with %s, %d clients", res2.Platform.KeyID, res2.Clients)
	}
	// then the first run's checkpoints still verify with the old key
	list, err := cps.ClientCheckpoints(ctx, e.c1, 0, 10)
	if err != nil || len(list) != 2 || list[0].KeyID != keys[0].KeyID || list[1].KeyID != keys[1].KeyID ||
		list[0].Position != list[1].Position {
		t.Fatalf("c1's checkpoints %+v %v", list, err)
	}
	for _, cp := range list {
		if _, err := audit.VerifyCheckpointSignature(cp.Payload, cp.Signature, cp.PublicKey); err != nil {
			t.Fatal(err)
		}
	}
	if page, err := cps.ClientCheckpoints(ctx, e.c1, list[0].ID, 1); err != nil || len(page) != 1 || page[0].ID != list[1].ID {
		t.Fatalf("second page %+v %v", page, err)
	}
	got, err := cps.Get(ctx, res.Platform.ID)
	if err != nil || !bytes.Equal(got.Payload, res.Platform.Payload) {
		t.Fatalf("get %d: %v", res.Platform.ID, err)
	}
	if _, err := cps.Get(ctx, 1<<40); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("get of a missing checkpoint: %v", err)
	}

	// when one of c1's amounts is edited in the database
	p1, _ := audit.ParseCheckpoint(clientCP[e.c1].Payload)
	p2, _ := audit.ParseCheckpoint(clientCP[e.c2].Payload)
	pPlat, _ := audit.ParseCheckpoint(res.Platform.Payload)
	audExec(t, e.pool, `UPDATE events SET body = replace(body::text, '"amount":"2.50"', '"amount":"0.50"')::json WHERE position = $1`, e.bet)
	// then c1's and the platform's checkpoints no longer hold; c2's
	// checkpoint stands after the bet, so the chain up to it is broken too
	for name, p := range map[string]audit.CheckpointPayload{"c1": p1, "c2": p2, "platform": pPlat} {
		checks, err := e.a.VerifyCheckpoint(ctx, p, 3)
		if err != nil {
			t.Fatal(err)
		}
		failed := failedChecks(checks)
		if !slices.Contains(failed, audit.CheckHashChain) {
			t.Errorf("%s: failed %v, want the hash chain among them", name, failed)
		}
		if name != "c2" && !slices.Contains(failed, auditstore.CheckCheckpointTotals) {
			t.Errorf("%s: failed %v, want the totals among them", name, failed)
		}
	}
}

// The daily job makes one checkpoint a day whichever instance runs it, and
// none on an empty store.
func TestCheckpointsDue(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool, _ := pgtest.NewDatabase(t)
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	cps := auditstore.NewCheckpoints(pool, newBox(t)).WithClock(func() time.Time { return at })
	if _, err := cps.Make(ctx); !errors.Is(err, auditstore.ErrNothingToSign) {
		t.Fatalf("on an empty store: %v", err)
	}
	_, h := startLedger(t, pool, eventstoreConfig())
	audPlay(t, h, uid("c"))
	day := at.Truncate(24 * time.Hour)
	steps := []struct {
		name     string
		now      time.Time
		dueAfter time.Time
		want     bool
	}{
		{"none yet", at, day, true},
		{"one made today", at.Add(time.Hour), day, false},
		{"the next day", at.Add(24 * time.Hour), day.Add(24 * time.Hour), true},
		{"again that day", at.Add(25 * time.Hour), day.Add(24 * time.Hour), false},
	}
	for _, s := range steps {
		at = s.now
		_, made, err := cps.MakeIfDue(ctx, s.dueAfter)
		if err != nil || made != s.want {
			t.Fatalf("%s: made %v, %v; want %v", s.name, made, err, s.want)
		}
	}
	// while another instance holds the lock, a tick does nothing
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(x'636b7074'::int, hashtext('make'))`); err != nil {
		t.Fatal(err)
	}
	at = at.Add(48 * time.Hour)
	if d, err := cps.Daily(ctx, day.Add(48*time.Hour), nil); err != nil || d.Ran || d.Made {
		t.Fatalf("with the lock held elsewhere: %+v %v", d, err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock(x'636b7074'::int, hashtext('make'))`); err != nil {
		t.Fatal(err)
	}
	conn.Release()

	// and every checkpoint goes out once
	pending, err := cps.Unpublished(ctx, 100)
	if err != nil || len(pending) != 4 { // two runs, each the platform's and one client's
		t.Fatalf("unpublished %d %v", len(pending), err)
	}
	if err := cps.MarkPublished(ctx, []int64{pending[0].ID, pending[1].ID}); err != nil {
		t.Fatal(err)
	}
	if pending, err = cps.Unpublished(ctx, 100); err != nil || len(pending) != 2 {
		t.Fatalf("unpublished after marking %d %v", len(pending), err)
	}
}

func eventstoreConfig() eventstore.LedgerConfig { return eventstore.LedgerConfig{} }

// storedRecords reads every event row as stored.
func storedRecords(t *testing.T, e *audEnv) []audit.Record {
	t.Helper()
	rows, err := e.pool.Query(t.Context(), `SELECT position, stream_id, body::text, hash FROM events ORDER BY position`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []audit.Record
	for rows.Next() {
		var r audit.Record
		if err := rows.Scan(&r.Position, &r.StreamID, &r.Body, &r.Hash); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// A signing key sealed with another master key than the server's is the
// statement package's ErrSigningKey (the admin API answers 503 naming
// PITBOSS_SECRET_KEY), not an anonymous fault.
func TestSigningKeyUnderAnotherMasterKey(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	if _, err := auditstore.NewCheckpoints(pool, newBox(t)).RotateKey(t.Context()); err != nil {
		t.Fatal(err)
	}
	_, _, err := auditstore.NewCheckpoints(pool, newBox(t)).SigningKey(t.Context())
	if !errors.Is(err, statement.ErrSigningKey) || !errors.Is(err, secretbox.ErrWrongKey) {
		t.Fatalf("err %v, want statement.ErrSigningKey wrapping secretbox.ErrWrongKey", err)
	}
}
