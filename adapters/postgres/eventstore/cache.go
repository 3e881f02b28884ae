package eventstore

import (
	"bytes"

	"github.com/pitboss/pitboss/domain"
)

// stateCache is what the writer knows the ledger holds: account states and
// idempotency records it loaded under the ledger lock or wrote itself, all
// as they stood when the chain head was (head, headHash). Every change to
// accounts and records comes with an event, so while the head has not
// moved the cache is exact; a batch decided from it proves that by checking
// the head under the lock in the same round trip as its writes
// (ledger_expect_head), and any doubt — another writer moved the head, a
// key the cache did not hold existed after all, any failed batch — empties
// it (invalidate) and the batch is decided again from the store.
//
// It is bounded: each map holds at most limit entries, in two generations
// (the current one, and the one before it, consulted and promoted from on a
// hit): between limit/2 and limit of the most recently used entries stay,
// the rest ages out.
type stateCache struct {
	valid    bool
	head     int64
	headHash []byte
	accounts generations[domain.AccountID, domain.AccountState]
	// records holds each record as its JSON (domain.AppendTxRecordJSON),
	// decoded on a hit (domain.DecodeTxRecord): a byte slice is one object
	// the collector does not look into, where a decoded TxRecord is a dozen
	// strings and a map — 50,000 of them doubled the service's
	// garbage-collection work.
	records generations[string, []byte]
}

func newStateCache(limit int) stateCache {
	return stateCache{
		accounts: newGenerations[domain.AccountID, domain.AccountState](limit),
		records:  newGenerations[string, []byte](limit),
	}
}

// invalidate forgets everything: the next batch loads its state under the
// lock.
func (c *stateCache) invalidate() {
	c.valid, c.head, c.headHash = false, 0, nil
	c.accounts.clear()
	c.records.clear()
}

// at reports whether the cache is valid at the head (position, hash).
func (c *stateCache) at(position int64, hash []byte) bool {
	return c.valid && c.head == position && bytes.Equal(c.headHash, hash)
}

// rebase makes the cache valid at the head a batch read under the lock,
// keeping its entries only if they were valid at that same head.
func (c *stateCache) rebase(position int64, hash []byte) {
	if !c.at(position, hash) {
		c.invalidate()
	}
	c.valid, c.head, c.headHash = true, position, bytes.Clone(hash)
}

// advance moves the head after a committed batch whose changes were stored.
func (c *stateCache) advance(position int64, hash []byte) {
	c.head, c.headHash = position, bytes.Clone(hash)
}

// generations is a map bounded to about limit entries: new entries go to
// cur; when cur reaches half the limit it becomes old and the previous old
// is dropped. A hit in old is copied to cur.
type generations[K comparable, V any] struct {
	cur, old map[K]V
	half     int
}

func newGenerations[K comparable, V any](limit int) generations[K, V] {
	half := max(limit/2, 1)
	return generations[K, V]{cur: make(map[K]V), old: make(map[K]V), half: half}
}

func (g *generations[K, V]) get(k K) (V, bool) {
	if v, ok := g.cur[k]; ok {
		return v, true
	}
	v, ok := g.old[k]
	if ok {
		g.put(k, v)
	}
	return v, ok
}

func (g *generations[K, V]) put(k K, v V) {
	g.cur[k] = v
	if len(g.cur) >= g.half {
		g.old, g.cur = g.cur, make(map[K]V, g.half)
	}
}

func (g *generations[K, V]) clear() {
	clear(g.cur)
	clear(g.old)
}

func (g *generations[K, V]) len() int { return len(g.cur) + len(g.old) }
