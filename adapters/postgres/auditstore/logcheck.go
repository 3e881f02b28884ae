package auditstore

import (
	"bytes"
	"cmp"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"hash"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/pitboss/pitboss/audit"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/ledgerlog"
)

// CheckLog is verify's check of the verifiable log (docs/audit.md, "The
// log check"): every log's tree recomputed from the events with Go's tlog
// alone equals the stored tree, tiles and signed checkpoints.
const CheckLog = "log"

// edgeTree is a tree grown by tlog from its records that keeps only its
// right edge: the roots of the complete subtrees the tree's size
// decomposes into, the only stored hashes tlog reads to append a record
// (tlog.StoredHashes) or to hash the tree (tlog.TreeHash). O(log n)
// memory, whatever the log's size.
type edgeTree struct {
	n    int64
	edge map[int64]tlog.Hash // stored hash index → hash
}

func (t *edgeTree) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		h, ok := t.edge[x]
		if !ok {
			return nil, fmt.Errorf("stored hash %d is not on the tree's right edge", x)
		}
		out[i] = h
	}
	return out, nil
}

// add appends record n and returns its stored hashes: hs[k] is the hash at
// tree level k, index n>>k.
func (t *edgeTree) add(record []byte) ([]tlog.Hash, error) {
	hs, err := tlog.StoredHashes(t.n, record, t)
	if err != nil {
		return nil, err
	}
	top := len(hs) - 1
	for k := range top { // the left siblings merged into hs[top]
		delete(t.edge, tlog.StoredHashIndex(k, (t.n>>k)-1))
	}
	t.edge[tlog.StoredHashIndex(top, t.n>>top)] = hs[top]
	t.n++
	return hs, nil
}

// logWant is a tree size a log is compared at: its stored tree's, or a
// signed checkpoint's.
type logWant struct {
	size       int64
	root       tlog.Hash
	checkpoint int64 // the checkpoint's id; 0: the stored tree
}

// logState is one log under recomputation.
type logState struct {
	name   string
	tree   edgeTree
	stored int64 // log_trees.size (0: none)
	atHead int64 // its leaves up to the platform tree's position
	wants  []logWant
	// tile[L] digests the hashes at tree level 8L of the tile being
	// filled; tileN[L] counts them.
	tile  [8]hash.Hash
	tileN [8]int
	tiles int64 // tiles compared
}

// tileCheck is a recomputed tile to compare with the stored one.
type tileCheck struct {
	log      string
	level, w int
	n        int64
	digest   []byte
	position int64 // the event that completed it
}

// logCheck recomputes every log from the events in position order.
type logCheck struct {
	tx       pgx.Tx
	findings *logFindings
	logs     map[string]*logState
	head     int64 // the platform tree's position: the builder's progress
	pending  []tileCheck
	tileRows map[string]int64 // stored tiles per log
	checked  int64            // checkpoints whose signature was checked
}

// logFindings keeps the first examples and counts every failure.
type logFindings struct {
	max      int
	failures int64
	examples []audit.Finding
}

func (f *logFindings) fail(x audit.Finding) {
	f.failures++
	if len(f.examples) < f.max {
		f.examples = append(f.examples, x)
	}
}

// checkLog runs the log check on tx (a snapshot of events and logs): the
// stored trees and checkpoints are read first, then every event is
// appended to the platform's log and to its client's, each log compared
// at its stored size (its root, its tiles, the position of its last event,
// and the size itself: its events up to the platform tree's position) and
// at each checkpoint's size. Memory is O(log n) per log and the
// checkpoints' sizes and roots; no event is kept.
func checkLog(ctx context.Context, tx pgx.Tx, examples, batch int) (audit.CheckResult, error) {
	c := &logCheck{tx: tx, findings: &logFindings{max: examples}, logs: map[string]*logState{}, tileRows: map[string]int64{}}
	if err := c.readStored(ctx); err != nil {
		return audit.CheckResult{}, err
	}
	if err := c.readCheckpoints(ctx); err != nil {
		return audit.CheckResult{}, err
	}
	events, err := c.walk(ctx, batch)
	if err != nil {
		return audit.CheckResult{}, err
	}
	tiles := c.finish()
	res := audit.CheckResult{Name: CheckLog, Rows: events, Failures: c.findings.failures, Examples: c.findings.examples,
		OK: c.findings.failures == 0}
	res.Note = fmt.Sprintf("%d logs, %d tiles and %d signed checkpoints compared with the trees recomputed from the events",
		len(c.logs), tiles, c.checked)
	return res, nil
}

func (c *logCheck) state(name string) *logState {
	s, ok := c.logs[name]
	if !ok {
		s = &logState{name: name, tree: edgeTree{edge: map[int64]tlog.Hash{}}}
		c.logs[name] = s
	}
	return s
}

// readStored reads log_trees and how many tiles each log stores.
func (c *logCheck) readStored(ctx context.Context) error {
	rows, err := c.tx.Query(ctx, `SELECT log, size, root, position FROM log_trees`)
	if err != nil {
		return fmt.Errorf("read log trees: %w", err)
	}
	var name string
	var size, pos int64
	var root []byte
	if _, err := pgx.ForEachRow(rows, []any{&name, &size, &root, &pos}, func() error {
		s := c.state(name)
		s.stored = size
		w := logWant{size: size}
		copy(w.root[:], root)
		switch {
		case len(root) != tlog.HashSize:
			c.findings.fail(audit.Finding{Key: name, Field: "root", Message: fmt.Sprintf("log %s: stored root of %d bytes", name, len(root))})
		case size < 1:
			c.findings.fail(audit.Finding{Key: name, Field: "size", Message: fmt.Sprintf("log %s: stored tree of %d leaves", name, size)})
		default:
			s.wants = append(s.wants, w)
		}
		if name == ledgerlog.PlatformLog {
			c.head = pos
		}
		return nil
	}); err != nil {
		return fmt.Errorf("read log trees: %w", err)
	}
	rows, err = c.tx.Query(ctx, `SELECT log, count(*) FROM log_tiles GROUP BY log`)
	if err != nil {
		return fmt.Errorf("count log tiles: %w", err)
	}
	var n int64
	if _, err := pgx.ForEachRow(rows, []any{&name, &n}, func() error {
		c.tileRows[name] = n
		return nil
	}); err != nil {
		return fmt.Errorf("count log tiles: %w", err)
	}
	return nil
}

// readCheckpoints checks each signed checkpoint's note (signed under its
// origin by the checkpoint key it names; stating the row's size and root;
// its origin that of its log) and keeps its size and root to compare with
// the recomputed tree.
func (c *logCheck) readCheckpoints(ctx context.Context) error {
	rows, err := c.tx.Query(ctx, `SELECT c.id, c.log, c.size, c.root, c.note, c.key_id, k.public_key
		FROM log_checkpoints c LEFT JOIN checkpoint_keys k USING (key_id) ORDER BY c.id`)
	if err != nil {
		return fmt.Errorf("read log checkpoints: %w", err)
	}
	var (
		id, size         int64
		name, msg, keyID string
		root, pub        []byte
	)
	if _, err := pgx.ForEachRow(rows, []any{&id, &name, &size, &root, &msg, &keyID, &pub}, func() error {
		c.checked++
		w, problem := openLogCheckpoint(name, size, root, msg, keyID, pub)
		if problem != "" {
			c.findings.fail(audit.Finding{Key: name, Field: "checkpoint", Stored: fmt.Sprint(id),
				Message: fmt.Sprintf("log %s: checkpoint %d (size %d): %s", name, id, size, problem)})
			return nil
		}
		w.checkpoint = id
		s := c.state(name)
		s.wants = append(s.wants, w)
		return nil
	}); err != nil {
		return fmt.Errorf("read log checkpoints: %w", err)
	}
	for _, s := range c.logs {
		slices.SortStableFunc(s.wants, func(a, b logWant) int { return cmp.Compare(a.size, b.size) })
	}
	return nil
}

// openLogCheckpoint verifies a stored checkpoint's note; problem says what
// is wrong with it, "" when it holds.
func openLogCheckpoint(log string, size int64, root []byte, msg, keyID string, pub []byte) (w logWant, problem string) {
	if len(pub) != ed25519.PublicKeySize {
		return w, fmt.Sprintf("signed by key %s, which is not a checkpoint key", keyID)
	}
	origin, _, _ := strings.Cut(msg, "\n")
	vkey, err := note.NewEd25519VerifierKey(origin, ed25519.PublicKey(pub))
	if err != nil {
		return w, fmt.Sprintf("origin %q: %v", origin, err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return w, fmt.Sprintf("origin %q: %v", origin, err)
	}
	n, err := note.Open([]byte(msg), note.VerifierList(v))
	if err != nil {
		return w, fmt.Sprintf("the note does not verify with key %s under %q: %v", keyID, origin, err)
	}
	cp, err := ledgerlog.ParseCheckpoint(n.Text)
	if err != nil {
		return w, err.Error()
	}
	if want := ledgerlog.ClientOf(log); log != ledgerlog.PlatformLog && !strings.HasSuffix(cp.Origin, "/clients/"+want) ||
		log == ledgerlog.PlatformLog && strings.Contains(cp.Origin, "/clients/") {
		return w, fmt.Sprintf("origin %q is not the log's", cp.Origin)
	}
	if cp.Size < 1 {
		return w, "an empty tree"
	}
	if cp.Size != size || !bytes.Equal(cp.Root[:], root) {
		return w, fmt.Sprintf("the note states size %d root %s, the row size %d root %s", cp.Size,
			logB64(cp.Root[:]), size, logB64(root))
	}
	return logWant{size: cp.Size, root: cp.Root}, ""
}

func logB64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// walk appends every event to its logs, in batches of position order.
func (c *logCheck) walk(ctx context.Context, batch int) (int64, error) {
	platform := c.state(ledgerlog.PlatformLog)
	var after, events int64
	for {
		rows, err := c.tx.Query(ctx, `SELECT position, stream_id, body::text FROM events WHERE position > $1
			ORDER BY position LIMIT $2`, after, batch)
		if err != nil {
			return 0, fmt.Errorf("read events after %d: %w", after, err)
		}
		var pos int64
		var stream, body string
		n := 0
		if _, err := pgx.ForEachRow(rows, []any{&pos, &stream, &body}, func() error {
			n++
			if err := c.add(platform, pos, []byte(body)); err != nil {
				return err
			}
			id, err := domain.ParseAccountID(stream)
			if err != nil {
				c.findings.fail(audit.Finding{Position: pos, Field: "stream_id", Stored: stream,
					Message: "the event's stream is not an account, so it is in no client's log"})
				return nil
			}
			return c.add(c.state(ledgerlog.ClientLog(id.Client())), pos, []byte(body))
		}); err != nil {
			return 0, fmt.Errorf("read events after %d: %w", after, err)
		}
		events += int64(n)
		after = pos
		if err := c.flushTiles(ctx); err != nil {
			return 0, err
		}
		if n < batch {
			return events, nil
		}
	}
}

// add appends the event at pos to log s and compares what completes.
func (c *logCheck) add(s *logState, pos int64, body []byte) error {
	hs, err := s.tree.add(body)
	if err != nil {
		return fmt.Errorf("log %s: leaf %d: %w", s.name, s.tree.n, err)
	}
	size := s.tree.n
	if c.head > 0 && pos <= c.head {
		s.atHead = size
	}
	for l := 0; 8*l < len(hs) && l < len(s.tile); l++ {
		if s.tile[l] == nil {
			s.tile[l] = sha256.New()
		}
		s.tile[l].Write(hs[8*l][:])
		s.tileN[l]++
		if s.tileN[l] == 1<<ledgerlog.TileHeight {
			if size <= s.stored {
				c.pending = append(c.pending, tileCheck{log: s.name, level: l, n: (size - 1) >> (8 * (l + 1)),
					w: s.tileN[l], digest: s.tile[l].Sum(nil), position: pos})
			}
			s.tile[l].Reset()
			s.tileN[l] = 0
		}
	}
	if size == s.stored { // the partial tiles of the stored tree
		for l := range s.tile {
			if s.tileN[l] > 0 {
				c.pending = append(c.pending, tileCheck{log: s.name, level: l, n: size >> (8 * (l + 1)),
					w: s.tileN[l], digest: s.tile[l].Sum(nil), position: pos})
			}
		}
	}
	for len(s.wants) > 0 && s.wants[0].size == size {
		w := s.wants[0]
		s.wants = s.wants[1:]
		root, err := tlog.TreeHash(size, &s.tree)
		if err != nil {
			return fmt.Errorf("log %s: root of %d: %w", s.name, size, err)
		}
		if root != w.root {
			c.findings.fail(audit.Finding{Position: pos, Key: s.name, Field: "root", Stored: logB64(w.root[:]), Recomputed: logB64(root[:]),
				Message: fmt.Sprintf("log %s: %s states root %s at size %d, the events' tree (last event at %d) has %s",
					s.name, wantName(w), logB64(w.root[:]), size, pos, logB64(root[:]))})
		}
	}
	return nil
}

func wantName(w logWant) string {
	if w.checkpoint == 0 {
		return "the stored tree"
	}
	return fmt.Sprintf("checkpoint %d", w.checkpoint)
}

// flushTiles compares the pending recomputed tiles with the stored ones.
func (c *logCheck) flushTiles(ctx context.Context) error {
	if len(c.pending) == 0 {
		return nil
	}
	logs, levels, ns := make([]string, len(c.pending)), make([]int32, len(c.pending)), make([]int64, len(c.pending))
	for i, p := range c.pending {
		logs[i], levels[i], ns[i] = p.log, int32(p.level), p.n
	}
	rows, err := c.tx.Query(ctx, `SELECT w.i, sha256(t.data) FROM unnest($1::text[], $2::int[], $3::bigint[])
		WITH ORDINALITY AS w(log, level, n, i)
		LEFT JOIN log_tiles t ON t.log = w.log AND t.level = w.level AND t.n = w.n ORDER BY w.i`, logs, levels, ns)
	if err != nil {
		return fmt.Errorf("read log tiles: %w", err)
	}
	var i int64
	var digest []byte
	if _, err := pgx.ForEachRow(rows, []any{&i, &digest}, func() error {
		p := c.pending[i-1]
		if digest != nil {
			c.logs[p.log].tiles++
		}
		if !bytes.Equal(digest, p.digest) {
			what := "differs from"
			if digest == nil {
				what = "is missing from"
			}
			c.findings.fail(audit.Finding{Position: p.position, Key: p.log, Field: "tile",
				Message: fmt.Sprintf("log %s: tile %s (%d hashes, completed by the event at %d) %s the stored tiles",
					p.log, tlog.Tile{H: ledgerlog.TileHeight, L: p.level, N: p.n, W: p.w}.Path(), p.w, p.position, what)})
		}
		return nil
	}); err != nil {
		return fmt.Errorf("read log tiles: %w", err)
	}
	c.pending = c.pending[:0]
	return nil
}

// finish reports what the walk could not meet: sizes beyond the events,
// a log's size that is not its events up to the builder's position, tiles
// stored beyond the tree. It returns how many tiles were compared.
func (c *logCheck) finish() int64 {
	var tiles int64
	names := make([]string, 0, len(c.logs))
	for name := range c.logs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		s := c.logs[name]
		tiles += s.tiles
		for _, w := range s.wants {
			c.findings.fail(audit.Finding{Key: name, Field: "size", Stored: fmt.Sprint(w.size), Recomputed: fmt.Sprint(s.tree.n),
				Message: fmt.Sprintf("log %s: %s states %d leaves, the events give the log %d", name, wantName(w), w.size, s.tree.n)})
		}
		if s.stored != s.atHead {
			c.findings.fail(audit.Finding{Position: c.head, Key: name, Field: "size", Stored: fmt.Sprint(s.stored), Recomputed: fmt.Sprint(s.atHead),
				Message: fmt.Sprintf("log %s: the stored tree has %d leaves, the log's events up to the builder's position %d are %d",
					name, s.stored, c.head, s.atHead)})
		}
		if stored := c.tileRows[name]; stored != s.tiles {
			c.findings.fail(audit.Finding{Key: name, Field: "tiles", Stored: fmt.Sprint(stored), Recomputed: fmt.Sprint(s.tiles),
				Message: fmt.Sprintf("log %s: %d tiles stored, its tree has %d", name, stored, s.tiles)})
		}
	}
	return tiles
}
