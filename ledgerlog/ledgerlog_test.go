package ledgerlog_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/pitboss/pitboss/ledgerlog"
	"github.com/pitboss/pitboss/ledgerlog/ledgerlogtest"
)

// memTiles is a tile store in memory: what the Postgres store does, kept
// simple.
type memTiles map[[2]int64][]byte // (level, n) -> data

func (m memTiles) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		d, ok := m[[2]int64{int64(t.L), t.N}]
		if !ok || len(d) < t.W*tlog.HashSize {
			return nil, fmt.Errorf("no tile %s", t.Path())
		}
		out[i] = d
	}
	return out, nil
}

func (m memTiles) save(g ledgerlog.Growth) {
	for _, t := range g.Tiles {
		m[[2]int64{int64(t.L), t.N}] = t.Data
	}
}

func records(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = fmt.Appendf(nil, `{"position":%d,"id":"e-%d"}`, i+1, i)
	}
	return out
}

// TestAppendInBatchesIsTheTree grows a tree in batches of every size the
// builder may meet (one leaf, across a tile, across levels) and checks its
// root against the tree tlog computes at once, and that the stored tiles
// serve verifiable proofs.
func TestAppendInBatchesIsTheTree(t *testing.T) {
	t.Parallel()
	for _, batches := range [][]int{{1}, {7}, {256}, {257}, {1, 1, 1, 300}, {255, 1, 1}, {100, 200, 300, 66000}} {
		t.Run(fmt.Sprint(batches), func(t *testing.T) {
			t.Parallel()
			total := 0
			for _, b := range batches {
				total += b
			}
			recs := records(total)
			tiles := memTiles{}
			var size int64
			var root tlog.Hash
			for _, b := range batches {
				leaves := make([]tlog.Hash, b)
				for i := range leaves {
					leaves[i] = ledgerlog.LeafHash(recs[int(size)+i])
				}
				g, err := ledgerlog.Append(size, ledgerlog.StoredHashes(tiles), leaves)
				if err != nil {
					t.Fatal(err)
				}
				tiles.save(g)
				size, root = g.To, g.Root
			}
			if want := ledgerlogtest.RootOf(t, recs); root != want {
				t.Fatalf("root %s, tlog's %s", root, want)
			}
			// A verifier's reader checks every tile against the root.
			tree := tlog.Tree{N: size, Hash: root}
			hr := tlog.TileHashReader(tree, tileReader{tiles})
			for _, n := range []int64{0, size / 2, size - 1} {
				p, err := tlog.ProveRecord(size, n, hr)
				if err != nil {
					t.Fatal(err)
				}
				if err := tlog.CheckRecord(p, size, root, n, tlog.RecordHash(recs[n])); err != nil {
					t.Fatalf("record %d: %v", n, err)
				}
				if err := tlog.CheckRecord(p, size, root, n, tlog.RecordHash([]byte("tampered"))); err == nil {
					t.Fatalf("record %d: a changed record passed", n)
				}
			}
		})
	}
}

type tileReader struct{ m memTiles }

func (r tileReader) Height() int { return ledgerlog.TileHeight }
func (r tileReader) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	data, err := r.m.ReadTiles(tiles)
	if err != nil {
		return nil, err
	}
	for i, t := range tiles { // exactly the width asked
		data[i] = data[i][:t.W*tlog.HashSize]
	}
	return data, nil
}
func (r tileReader) SaveTiles([]tlog.Tile, [][]byte) {}

func TestCheckpointSignAndOpen(t *testing.T) {
	t.Parallel()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	const origin = "pitboss.example/ledger/clients/acme"
	cp := ledgerlog.Checkpoint{Origin: origin, Size: 42, Root: tlog.RecordHash([]byte("root"))}
	msg, err := ledgerlog.Sign(cp, ledgerlog.Key{Name: origin, Priv: priv})
	if err != nil {
		t.Fatal(err)
	}
	vkey, err := ledgerlog.VerifierKey(origin, pub)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := ledgerlog.Open(msg, vkey)
	if err != nil || got != cp {
		t.Fatalf("open: %+v %v", got, err)
	}
	if !strings.HasPrefix(string(msg), origin+"\n42\n") {
		t.Fatalf("note %q", msg)
	}
	forged := strings.Replace(string(msg), "\n42\n", "\n43\n", 1)
	if _, _, err := ledgerlog.Open([]byte(forged), vkey); err == nil {
		t.Fatal("a changed size verified")
	}
	otherPub, _, _ := ed25519.GenerateKey(rand.Reader)
	other, _ := ledgerlog.VerifierKey(origin, otherPub)
	if _, _, err := ledgerlog.Open(msg, other); err == nil {
		t.Fatal("another key verified")
	}
}
