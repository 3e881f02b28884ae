package witness_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/logstore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/witness"
	"github.com/pitboss/pitboss/ledgerlog"
)

// specWitness is a witness written from the text of C2SP tlog-witness
// and tlog-cosignature, not from our package: it verifies the
// checkpoint's signature with the log keys it trusts (404 for an unknown
// origin, 403 when none verifies), refuses an old size above the
// checkpoint's (400), answers 409 with its size (text/x.tlog.size) when
// the old size is not the latest it cosigned, 409 for another root of the
// same size, 422 when the consistency proof does not verify; otherwise it
// records the checkpoint and answers a cosignature/v1 line: a timestamped
// Ed25519 signature over "cosignature/v1\ntime <t>\n" and the note text.
type specWitness struct {
	name string
	priv ed25519.PrivateKey
	logs map[string]note.Verifier // origin → the log's key
	now  time.Time

	mu        sync.Mutex
	latest    map[string]tlog.Tree
	proofs    int // non-empty consistency proofs that verified
	conflicts int // 409s
}

func (s *specWitness) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/add-checkpoint" {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(r.Body)
	br := bufio.NewReader(bytes.NewReader(body))
	first, _ := br.ReadString('\n')
	old, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(first, "old "), "\n"), 10, 64)
	if !strings.HasPrefix(first, "old ") || err != nil {
		http.Error(w, "old size line", http.StatusBadRequest)
		return
	}
	var proof tlog.TreeProof
	for {
		line, err := br.ReadString('\n')
		if err != nil || len(proof) > 63 {
			http.Error(w, "proof lines", http.StatusBadRequest)
			return
		}
		if line == "\n" {
			break
		}
		h, err := tlog.ParseHash(strings.TrimSuffix(line, "\n"))
		if err != nil {
			http.Error(w, "proof line", http.StatusBadRequest)
			return
		}
		proof = append(proof, h)
	}
	msg, _ := io.ReadAll(br)
	origin, _, _ := strings.Cut(string(msg), "\n")
	v, ok := s.logs[origin]
	if !ok {
		http.Error(w, "unknown log", http.StatusNotFound)
		return
	}
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		http.Error(w, "no trusted signature", http.StatusForbidden)
		return
	}
	lines := strings.Split(n.Text, "\n")
	size, err1 := strconv.ParseInt(lines[1], 10, 64)
	root, err2 := tlog.ParseHash(lines[2])
	if len(lines) < 4 || err1 != nil || err2 != nil || old > size {
		http.Error(w, "checkpoint", http.StatusBadRequest)
		return
	}
	s.mu.Lock() // checking the old size and recording the new one: atomic
	defer s.mu.Unlock()
	latest := s.latest[origin]
	switch {
	case old != latest.N:
		s.conflicts++
		w.Header().Set("Content-Type", "text/x.tlog.size")
		w.WriteHeader(http.StatusConflict)
		fmt.Fprintf(w, "%d\n", latest.N)
		return
	case old == 0 && len(proof) > 0:
		http.Error(w, "a proof from size 0", http.StatusUnprocessableEntity)
		return
	case old == size && root != latest.Hash:
		s.conflicts++
		http.Error(w, "another root of the same size", http.StatusConflict)
		return
	case old > 0 && old < size:
		if err := tlog.CheckTree(proof, size, root, old, latest.Hash); err != nil {
			http.Error(w, "inconsistent", http.StatusUnprocessableEntity)
			return
		}
		s.proofs++
	}
	s.latest[origin] = tlog.Tree{N: size, Hash: root}
	signed := fmt.Appendf(nil, "cosignature/v1\ntime %d\n%s", s.now.Unix(), n.Text)
	sig := binary.BigEndian.AppendUint32(nil, specKeyID(s.name, s.priv.Public().(ed25519.PublicKey)))
	sig = binary.BigEndian.AppendUint64(sig, uint64(s.now.Unix()))
	sig = append(sig, ed25519.Sign(s.priv, signed)...)
	fmt.Fprintf(w, "— %s %s\n", s.name, base64.StdEncoding.EncodeToString(sig))
}

// specKeyID is SHA-256(name || "\n" || 0x04 || key)[:4].
func specKeyID(name string, pub ed25519.PublicKey) uint32 {
	h := sha256.Sum256(append(append([]byte(name+"\n"), 0x04), pub...))
	return binary.BigEndian.Uint32(h[:4])
}

type logKey struct{ priv ed25519.PrivateKey }

func (k logKey) SigningKey(context.Context) (string, ed25519.PrivateKey, error) {
	return "k1", k.priv, nil
}

const origin = "pitboss.test/ledger"

// grow runs builder passes until the platform's log holds size events (a
// pass takes only events older than every running transaction of the
// cluster: it waits for other tests').
func grow(t *testing.T, b *logstore.Builder, st *logstore.Store, size int64) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		tree, err := st.Tree(t.Context(), ledgerlog.PlatformLog)
		if err != nil {
			t.Fatal(err)
		}
		if tree.Size >= size {
			return
		}
		if n, err := b.Pass(t.Context()); err != nil {
			t.Fatal(err)
		} else if n > 0 {
			continue
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("the log holds %d events, want %d", tree.Size, size)
		case <-tick.C:
		}
	}
}

// TestCosigner has a witness written from the specification cosign the
// platform log's checkpoints: a fresh witness cosigns; the next checkpoint
// is cosigned with a consistency proof; a cosigner that does not know the
// witness's size (a restart) gets its 409 and recovers; a forked
// checkpoint (the same size, another root, signed by the log's key) is
// refused. Client logs, unknown to the witness (404), are skipped.
func TestCosigner(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	ctx := t.Context()
	if _, err := eventstore.SeedEvents(ctx, pool, eventstore.SeedOptions{Events: 3000, Clients: 2, Seed: 9}); err != nil {
		t.Fatal(err)
	}
	logPub, logPriv, _ := ed25519.GenerateKey(rand.Reader)
	vkey, err := ledgerlog.VerifierKey(origin, logPub)
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	wPub, wPriv, _ := ed25519.GenerateKey(rand.Reader)
	sw := &specWitness{name: "witness.test/w1", priv: wPriv, logs: map[string]note.Verifier{origin: verifier},
		now: time.Unix(1780000000, 0), latest: map[string]tlog.Tree{}}
	srv := httptest.NewServer(sw)
	defer srv.Close()
	wkey := fmt.Sprintf("%s+%08x+%s", sw.name, specKeyID(sw.name, wPub), base64.StdEncoding.EncodeToString(append([]byte{0x04}, wPub...)))
	ws, err := witness.ParseWitnesses(wkey + " " + srv.URL + "/")
	if err != nil || len(ws) != 1 || ws[0].URL != srv.URL || witness.VerifierKey(sw.name, wPub) != wkey {
		t.Fatalf("witnesses %+v (%v)", ws, err)
	}
	b, st := logstore.NewBuilder(pool, 1000, nil), logstore.New(pool)
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	checkpoint := func(size int64) logstore.SignedCheckpoint {
		t.Helper()
		grow(t, b, st, size)
		now = now.Add(time.Hour)
		if _, err := st.SignDue(ctx, origin, logKey{logPriv}, time.Minute, now); err != nil {
			t.Fatal(err)
		}
		cp, err := st.LatestCheckpoint(ctx, ledgerlog.PlatformLog)
		if err != nil {
			t.Fatal(err)
		}
		return cp
	}
	// cosigned checks that the stored note still opens with the log's key,
	// carries the witness's cosignature, and that it verifies.
	cosigned := func(t *testing.T, id int64) {
		t.Helper()
		var msg string
		if err := pool.QueryRow(ctx, `SELECT note FROM log_checkpoints WHERE id = $1`, id).Scan(&msg); err != nil {
			t.Fatal(err)
		}
		n, err := note.Open([]byte(msg), note.VerifierList(verifier))
		if err != nil || len(n.UnverifiedSigs) != 1 || n.UnverifiedSigs[0].Name != sw.name {
			t.Fatalf("note %q: %+v %v", msg, n, err)
		}
		line := msg[strings.LastIndex(strings.TrimSuffix(msg, "\n"), "\n")+1:]
		if at, err := ws[0].Verify(n.Text, line); err != nil || !at.Equal(sw.now) {
			t.Fatalf("cosignature %q: %v %v", line, at, err)
		}
	}

	cos := witness.NewCosigner(st, ws, srv.Client(), nil)
	first := checkpoint(1000)
	if n, err := cos.Pass(ctx); n != 1 || err != nil {
		t.Fatalf("a fresh witness: %d cosignatures (%v)", n, err)
	}
	cosigned(t, first.ID)
	if n, err := cos.Pass(ctx); n != 0 || err != nil {
		t.Fatalf("again: %d cosignatures (%v)", n, err)
	}

	second := checkpoint(first.Size + 1)
	if n, err := cos.Pass(ctx); n != 1 || err != nil || sw.proofs != 1 {
		t.Fatalf("the next checkpoint: %d cosignatures, %d proofs (%v)", n, sw.proofs, err)
	}
	cosigned(t, second.ID)

	third := checkpoint(second.Size + 1)
	restarted := witness.NewCosigner(st, ws, srv.Client(), nil)
	if n, err := restarted.Pass(ctx); n != 1 || err != nil || sw.conflicts != 1 || sw.proofs != 2 {
		t.Fatalf("after a restart: %d cosignatures, %d conflicts, %d proofs (%v)", n, sw.conflicts, sw.proofs, err)
	}
	cosigned(t, third.ID)

	// A fork: a checkpoint of the witnessed size with another root, signed
	// by the log's key, is the latest the cosigner finds.
	forked := third.Root
	forked[0] ^= 1
	msg, err := ledgerlog.Sign(ledgerlog.Checkpoint{Origin: origin, Size: third.Size, Root: forked}, ledgerlog.Key{Name: origin, Priv: logPriv})
	if err != nil {
		t.Fatal(err)
	}
	var forkID int64
	if err := pool.QueryRow(ctx, `INSERT INTO log_checkpoints (log, size, root, note, key_id) VALUES ('platform', $1, $2, $3, 'k1')
		RETURNING id`, third.Size, forked[:], string(msg)).Scan(&forkID); err != nil {
		t.Fatal(err)
	}
	var conflict *witness.ConflictError
	if n, err := restarted.Pass(ctx); n != 0 || !errors.As(err, &conflict) || conflict.Size != -1 {
		t.Fatalf("a forked checkpoint: %d cosignatures (%v)", n, err)
	}
	if got := sw.latest[origin]; got.N != third.Size || got.Hash != third.Root {
		t.Fatalf("the witness moved to %+v", got)
	}
	var stored string
	if err := pool.QueryRow(ctx, `SELECT note FROM log_checkpoints WHERE id = $1`, forkID).Scan(&stored); err != nil || stored != string(msg) {
		t.Fatalf("the forked note changed: %q (%v)", stored, err)
	}
}
