// Package ledgerlogtest is the verifiable log's test reference: a tree
// computed by Go's golang.org/x/mod/sumdb/tlog alone, every stored hash
// kept in memory, with nothing of ledgerlog or the store — what the tests
// compare our trees, roots and statements with.
package ledgerlogtest

import (
	"testing"

	"golang.org/x/mod/sumdb/tlog"
)

// Tree is a tree grown one record at a time by tlog.
type Tree struct {
	stored []tlog.Hash
	n      int64
}

// ReadHashes implements tlog.HashReader over the stored hashes.
func (tr *Tree) ReadHashes(idx []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(idx))
	for i, x := range idx {
		out[i] = tr.stored[x]
	}
	return out, nil
}

// Add appends a record (an event's body).
func (tr *Tree) Add(t testing.TB, record []byte) {
	t.Helper()
	hs, err := tlog.StoredHashes(tr.n, record, tr)
	if err != nil {
		t.Fatal(err)
	}
	tr.stored = append(tr.stored, hs...)
	tr.n++
}

// Size is the number of records.
func (tr *Tree) Size() int64 { return tr.n }

// Root is the tree's root (the zero hash of an empty tree).
func (tr *Tree) Root(t testing.TB) tlog.Hash {
	t.Helper()
	if tr.n == 0 {
		return tlog.Hash{}
	}
	h, err := tlog.TreeHash(tr.n, tr)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// RootOf is the root of the tree of records.
func RootOf(t testing.TB, records [][]byte) tlog.Hash {
	t.Helper()
	var tr Tree
	for _, r := range records {
		tr.Add(t, r)
	}
	return tr.Root(t)
}
