package api_test

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/pitboss/pitboss/adapters/postgres/auditstore"
	"github.com/pitboss/pitboss/adapters/postgres/logstore"
	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/vlog"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/internal/eventually"
	"github.com/pitboss/pitboss/ledgerlog"
)

// logFixture is the API on a ledger of two clients' events with the
// verifiable logs built and signed, as the relay role does.
type logFixture struct {
	*apitest.Harness
	t *testing.T
	// keys: acme with audit:read, acme without it, other with audit:read
	acme, acmeNoScope, other string
	n                        int
}

func newLogFixture(t *testing.T) *logFixture {
	t.Helper()
	f := &logFixture{Harness: apitest.New(t, apitest.Options{AdminToken: admToken}), t: t}
	for _, c := range []string{"acme", "other"} {
		f.AddClient(c, "sandbox")
	}
	f.acme, _ = f.IssueKey("acme", gateway.ScopeAuditRead)
	f.acmeNoScope, _ = f.IssueKey("acme", gateway.ScopeWalletRead)
	f.other, _ = f.IssueKey("other", gateway.ScopeAuditRead)
	for range 3 {
		f.deposit("acme")
		f.deposit("other")
	}
	f.grow(true)
	return f
}

// deposit books one event of client.
func (f *logFixture) deposit(client string) {
	f.t.Helper()
	f.n++
	eur := domain.MustCurrency("EUR")
	if _, err := f.Commands.Deposit(f.t.Context(), domain.ClientTx{Client: client, Player: "p1",
		ExternalTxID: fmt.Sprintf("d%d", f.n), Currency: eur}, domain.FromMinor(100, eur)); err != nil {
		f.t.Fatal(err)
	}
}

// grow builds the logs up to the ledger's head and, with sign, signs a
// checkpoint of every log that grew.
func (f *logFixture) grow(sign bool) {
	f.t.Helper()
	ctx := f.t.Context()
	b, store := logstore.NewBuilder(f.Pool, 0, nil), logstore.New(f.Pool)
	eventually.True(f.t, 30*time.Second, "the platform log at the ledger's head", func() bool {
		if _, err := b.Pass(ctx); err != nil {
			f.t.Fatal(err)
		}
		tree, err := store.Tree(ctx, ledgerlog.PlatformLog)
		return err == nil && tree.Position == f.Head()
	})
	if sign {
		if _, err := store.SignDue(ctx, apitest.LogOrigin, auditstore.NewCheckpoints(f.Pool, f.Box), 0, time.Now()); err != nil {
			f.t.Fatal(err)
		}
	}
}

// verifierKey is the log's verifier key from the keys route.
func (f *logFixture) verifierKey(prefix, key string) string {
	f.t.Helper()
	rec := f.logGet(prefix+"/keys", key)
	keys := apitest.Data[vlog.KeysAnswer](f.t, rec)
	if len(keys.Keys) != 1 || !keys.Keys[0].Active {
		f.t.Fatalf("keys: %s", rec.Body.String())
	}
	return keys.Keys[0].VerifierKey
}

// logGet is a GET with key, or with the admin token when key is "".
func (f *logFixture) logGet(path, key string) *httptest.ResponseRecorder {
	f.t.Helper()
	if key == "" {
		return f.Admin(http.MethodGet, path, nil)
	}
	return f.Get(path, key)
}

// positions are client's events' positions ("" : every event's).
func (f *logFixture) positions(client string) []int64 {
	f.t.Helper()
	rows, err := f.Pool.Query(f.t.Context(), `SELECT position FROM events
		WHERE $1 = '' OR split_part(stream_id, ':', 2) = $1 ORDER BY position`, client)
	if err != nil {
		f.t.Fatal(err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var p int64
		if err := rows.Scan(&p); err != nil {
			f.t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// Each log is served as C2SP tlog-tiles: the signed checkpoint verifies
// with the keys route's verifier key under the log's origin; the tiles
// hold the leaves of the entry bundles' bodies; a client sees only its
// own log, the admin the platform's.
func TestAuditLogTiles(t *testing.T) {
	t.Parallel()
	f := newLogFixture(t)
	cases := []struct {
		name, prefix, key, origin string
		size                      int
	}{
		{"acme's log", "/api/v1/audit/log", f.acme, apitest.LogOrigin + "/clients/acme", len(f.positions("acme"))},
		{"other's log", "/api/v1/audit/log", f.other, apitest.LogOrigin + "/clients/other", len(f.positions("other"))},
		{"the platform's log", "/admin/v1/log", "", apitest.LogOrigin, len(f.positions(""))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := f.logGet(tc.prefix+"/checkpoint", tc.key)
			if rec.Code != 200 || rec.Header().Get("Content-Type") != "text/plain; charset=utf-8" ||
				rec.Header().Get("Cache-Control") != vlog.CacheMutable {
				t.Fatalf("checkpoint: %d %v %s", rec.Code, rec.Header(), rec.Body.String())
			}
			cp, _, err := ledgerlog.Open(rec.Body.Bytes(), f.verifierKey(tc.prefix, tc.key))
			if err != nil || cp.Origin != tc.origin || cp.Size != int64(tc.size) {
				t.Fatalf("checkpoint %+v, %v; want %s of %d", cp, err, tc.origin, tc.size)
			}
			// the entries and the leaves agree, and hash to the signed root
			w := fmt.Sprint(tc.size)
			rec = f.logGet(tc.prefix+"/tile/entries/000.p/"+w, tc.key)
			bodies := bundle(t, rec)
			leaves := f.logGet(tc.prefix+"/tile/0/000.p/"+w, tc.key)
			if rec.Code != 200 || leaves.Code != 200 || len(bodies) != tc.size || leaves.Body.Len() != tc.size*tlog.HashSize ||
				leaves.Header().Get("Content-Type") != "application/octet-stream" {
				t.Fatalf("entries %d (%d), tile %d (%d bytes)", rec.Code, len(bodies), leaves.Code, leaves.Body.Len())
			}
			var hashes []tlog.Hash
			for i, b := range bodies {
				var h tlog.Hash
				copy(h[:], leaves.Body.Bytes()[i*tlog.HashSize:])
				if h != tlog.RecordHash(b) {
					t.Fatalf("leaf %d is not its entry's hash", i)
				}
				hashes = append(hashes, h)
			}
			if root := rootOf(hashes); root != cp.Root {
				t.Fatalf("the tile's root %x, the checkpoint's %x", root, cp.Root)
			}
			// a narrower partial tile is the tile of an earlier size
			if rec := f.logGet(tc.prefix+"/tile/0/000.p/1", tc.key); rec.Code != 200 ||
				string(rec.Body.Bytes()) != string(leaves.Body.Bytes()[:tlog.HashSize]) {
				t.Fatalf("narrower tile: %d", rec.Code)
			}
		})
	}
	t.Run("a long index reaches the tile handler", func(t *testing.T) {
		e := apitest.WantError(t, f.Get("/api/v1/audit/log/tile/0/x001/000.p/1", f.acme), 404, wire.CodeNotFound)
		if !strings.Contains(e.Error.Message, "tile/0/x001/000.p/1 in the tree of the latest checkpoint") {
			t.Fatalf("not the tile handler's 404: %+v", e.Error)
		}
	})
	t.Run("statuses", func(t *testing.T) {
		for _, tc := range []struct {
			name, path, key string
			status          int
			code            string
		}{
			{"a wider partial tile", "/api/v1/audit/log/tile/0/000.p/200", f.acme, 404, wire.CodeNotFound},
			{"a full tile the tree lacks", "/api/v1/audit/log/tile/0/000", f.acme, 404, wire.CodeNotFound},
			{"a level above the tree", "/api/v1/audit/log/tile/1/000.p/1", f.acme, 404, wire.CodeNotFound},
			{"a wider bundle", "/api/v1/audit/log/tile/entries/000.p/9", f.acme, 404, wire.CodeNotFound},
			{"not a tile path", "/api/v1/audit/log/tile/0/0", f.acme, 404, wire.CodeNotFound},
			{"a long index beyond the tree", "/api/v1/audit/log/tile/0/x001/000.p/1", f.acme, 404, wire.CodeNotFound},
			{"a long entries index beyond the tree", "/api/v1/audit/log/tile/entries/x002/x001/000", f.acme, 404, wire.CodeNotFound},
			{"without audit:read", "/api/v1/audit/log/checkpoint", f.acmeNoScope, 403, wire.CodeForbidden},
			{"without a key", "/api/v1/audit/log/checkpoint", "none", 401, wire.CodeUnauthorized},
			{"a client key on the platform's", "/admin/v1/log/checkpoint", f.acme, 403, wire.CodeForbidden},
		} {
			t.Run(tc.name, func(t *testing.T) {
				apitest.WantError(t, f.Get(tc.path, tc.key), tc.status, tc.code)
			})
		}
	})
}

// bundle reads an entry bundle: uint16 big-endian lengths, each before
// its entry.
func bundle(t *testing.T, rec *httptest.ResponseRecorder) [][]byte {
	t.Helper()
	var out [][]byte
	for b := rec.Body.Bytes(); len(b) > 0; {
		if len(b) < 2 {
			t.Fatalf("bundle: a truncated length")
		}
		n := int(binary.BigEndian.Uint16(b))
		if len(b) < 2+n {
			t.Fatalf("bundle: a truncated entry")
		}
		out, b = append(out, b[2:2+n]), b[2+n:]
	}
	return out
}

// rootOf is the RFC 6962 root of leaves (at least one), by its
// definition: the largest power of two below n splits the tree.
func rootOf(leaves []tlog.Hash) tlog.Hash {
	if len(leaves) == 1 {
		return leaves[0]
	}
	k := 1
	for 2*k < len(leaves) {
		k *= 2
	}
	return tlog.NodeHash(rootOf(leaves[:k]), rootOf(leaves[k:]))
}

func b64Hash(t *testing.T, s string) tlog.Hash {
	t.Helper()
	var h tlog.Hash
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) != tlog.HashSize {
		t.Fatalf("hash %q: %v", s, err)
	}
	copy(h[:], b)
	return h
}

// Proofs: an event's inclusion (by position or id) in a checkpoint, and
// the consistency of two checkpoints, each checked with tlog alone; every
// refusal with its status.
func TestAuditLogProofs(t *testing.T) {
	t.Parallel()
	f := newLogFixture(t)
	acme := f.positions("acme")
	first := int64(len(acme))
	vkey := f.verifierKey("/api/v1/audit/log", f.acme)
	// a second checkpoint over two more events, and one more event logged
	// but not checkpointed
	f.deposit("acme")
	f.deposit("acme")
	f.grow(true)
	f.deposit("acme")
	f.grow(false)
	acme = f.positions("acme")
	var id string
	if err := f.Pool.QueryRow(t.Context(), `SELECT event_id::text FROM events WHERE position = $1`, acme[1]).Scan(&id); err != nil {
		t.Fatal(err)
	}

	inclusion := func(t *testing.T, query string, wantIndex, wantSize int64) {
		t.Helper()
		rec := f.Get("/api/v1/audit/log/proofs/inclusion?"+query, f.acme)
		inc := apitest.Data[vlog.Inclusion](t, rec)
		cp, _, err := ledgerlog.Open([]byte(inc.Note), vkey)
		if err != nil || inc.LeafIndex != wantIndex || inc.TreeSize != wantSize || cp.Size != wantSize {
			t.Fatalf("inclusion %s: %s (%v)", query, rec.Body.String(), err)
		}
		var proof tlog.RecordProof
		for _, p := range inc.Proof {
			proof = append(proof, b64Hash(t, p))
		}
		var body string
		if err := f.Pool.QueryRow(t.Context(), `SELECT body::text FROM events WHERE position = $1`, inc.Position).Scan(&body); err != nil {
			t.Fatal(err)
		}
		leaf := tlog.RecordHash([]byte(body))
		if leaf != b64Hash(t, inc.LeafHash) || tlog.CheckRecord(proof, cp.Size, cp.Root, inc.LeafIndex, leaf) != nil {
			t.Fatalf("inclusion %s does not check: %s", query, rec.Body.String())
		}
	}
	t.Run("inclusion by position in the latest", func(t *testing.T) { inclusion(t, fmt.Sprint("position=", acme[0]), 0, first+2) })
	t.Run("inclusion by id in the first", func(t *testing.T) { inclusion(t, fmt.Sprint("event_id=", id, "&size=", first), 1, first) })
	t.Run("inclusion in the platform's", func(t *testing.T) {
		rec := f.Admin(http.MethodGet, fmt.Sprint("/admin/v1/log/proofs/inclusion?position=", acme[0]), nil)
		if inc := apitest.Data[vlog.Inclusion](t, rec); inc.LeafIndex != acme[0]-1 {
			t.Fatalf("platform inclusion: %s", rec.Body.String())
		}
	})
	t.Run("consistency", func(t *testing.T) {
		rec := f.Get(fmt.Sprint("/api/v1/audit/log/proofs/consistency?from=", first, "&to=", first+2), f.acme)
		c := apitest.Data[vlog.Consistency](t, rec)
		older, _, err1 := ledgerlog.Open([]byte(c.FromNote), vkey)
		newer, _, err2 := ledgerlog.Open([]byte(c.ToNote), vkey)
		var proof tlog.TreeProof
		for _, p := range c.Proof {
			proof = append(proof, b64Hash(t, p))
		}
		if err1 != nil || err2 != nil || tlog.CheckTree(proof, newer.Size, newer.Root, older.Size, older.Root) != nil {
			t.Fatalf("consistency: %s", rec.Body.String())
		}
	})

	other := f.positions("other")
	for _, tc := range []struct {
		name, path string
		status     int
		code       string
	}{
		{"neither id nor position", "inclusion", 400, wire.CodeInvalidRequest},
		{"both id and position", fmt.Sprint("inclusion?position=1&event_id=", id), 400, wire.CodeInvalidRequest},
		{"a malformed id", "inclusion?event_id=x", 400, wire.CodeInvalidRequest},
		{"a malformed position", "inclusion?position=-3", 400, wire.CodeInvalidRequest},
		{"a malformed size", "inclusion?position=1&size=0", 400, wire.CodeInvalidRequest},
		{"another client's event", fmt.Sprint("inclusion?position=", other[0]), 404, wire.CodeNotFound},
		{"an unknown id", "inclusion?event_id=00000000-0000-0000-0000-000000000000", 404, wire.CodeNotFound},
		{"a size no checkpoint has", fmt.Sprint("inclusion?position=", acme[0], "&size=", first+1), 404, wire.CodeNotFound},
		{"an event logged after the checkpoint", fmt.Sprint("inclusion?position=", acme[len(acme)-1]), 409, wire.CodeNotInLog},
		{"an event after the first checkpoint", fmt.Sprint("inclusion?position=", acme[first], "&size=", first), 409, wire.CodeNotInLog},
		{"no from", "consistency?to=3", 400, wire.CodeInvalidRequest},
		{"no to", "consistency?from=3", 400, wire.CodeInvalidRequest},
		{"from after to", fmt.Sprint("consistency?from=", first+2, "&to=", first), 400, wire.CodeInvalidRequest},
		{"a from no checkpoint has", fmt.Sprint("consistency?from=1&to=", first+2), 404, wire.CodeNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apitest.WantError(t, f.Get("/api/v1/audit/log/proofs/"+tc.path, f.acme), tc.status, tc.code)
		})
	}
	t.Run("another client's proofs are of its own log", func(t *testing.T) {
		rec := f.Get(fmt.Sprint("/api/v1/audit/log/proofs/inclusion?position=", other[0]), f.other)
		if inc := apitest.Data[vlog.Inclusion](t, rec); inc.LeafIndex != 0 || !strings.Contains(inc.Note, "/clients/other\n") {
			t.Fatalf("other: %s", rec.Body.String())
		}
	})
}
