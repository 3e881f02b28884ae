package auditstore

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/pitboss/pitboss/audit"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/ledgerlog"
)

// SinceOptions configures VerifySince.
type SinceOptions struct {
	// Checkpoint is the platform log's signed checkpoint to start from;
	// the caller checked its signature and origin.
	Checkpoint ledgerlog.Checkpoint
	// Position is the event of its last leaf (Checkpoint.Size-1), 0 when
	// it is empty.
	Position int64
	// Tiles reads the platform log's stored tiles.
	Tiles tlog.TileReader
	// Head is the platform log's stored tree, read before VerifySince
	// (its events are then in VerifySince's snapshot).
	Head LogHead
	// Signed are later checkpoints of the platform log (signatures checked
	// by the caller) whose roots the tree grown from Checkpoint must have
	// at their sizes.
	Signed []ledgerlog.Checkpoint
	// Examples bounds the broken rows listed per check. Default 10.
	Examples int
	// BatchSize is the events examined at a time. Default 2000.
	BatchSize int
	// Progress, when set, is called after every batch.
	Progress func(audit.Progress)
}

// LogHead is a log's stored tree: its size, root and last event.
type LogHead struct {
	Size     int64
	Root     tlog.Hash
	Position int64
}

// sinceEvents are the events from the checkpoint's own on, streamed.
const sinceEvents = `SELECT ` + recordColumns + ` FROM events WHERE position >= $1 AND position <= $2 ORDER BY position`

// sinceAccountColumns are an account row and its stream's version at the
// checkpoint's position ($1): the last at or below it, 0 when none.
const sinceAccountColumns = `
SELECT a.account_id, a.kind, a.currency, a.balance, a.version, a.last_position,
       coalesce((SELECT e.stream_version FROM events e WHERE e.stream_id = a.account_id AND e.position <= $1
                  ORDER BY e.stream_version DESC LIMIT 1), 0)
  FROM accounts a`

// sinceClaimed are the rows claiming a touch after the checkpoint, the
// share $2 of $3 (by a hash of the id); read while the events are walked
// (on other connections in the same snapshot), they are the accounts
// touched in a ledger whose rows are true.
const sinceClaimed = sinceAccountColumns + ` WHERE a.last_position > $1 AND abs(hashtext(a.account_id) % $3) = $2`

// sinceSides is the connections that read the claimed rows, a share each:
// each row's version at the checkpoint is an index probe into the
// ledger's older pages, likely cold (10,000 rows: 1.4 s on one connection
// at 10M events with cold caches), which several connections wait for
// side by side. With the walk's, four: pgxpool's least default size.
const sinceSides = 3

// sinceListed are the rows of accounts the events touched but whose rows
// did not claim it: none in a true ledger.
const sinceListed = sinceAccountColumns + ` WHERE a.account_id = ANY($2)`

// VerifySince checks the ledger from a signed checkpoint of the platform
// log to the head, in one snapshot, reading only the events after it:
//
//   - log_consistency: the stored tiles prove the checkpoint's root (each
//     tile used is checked against it: tlog.TileHashReader), its last leaf
//     is the body of the event at Position, whose stored hash recomputes
//     from its prev_hash; the tree grown from the checkpoint's right edge
//     by the leaves of the events after it, up to the stored head's
//     position, has the stored head's size and root, and every later
//     signed checkpoint's root at its size;
//   - hash_chain, event_bodies, double_entry: as the full verification,
//     for the events after Position, the first linked to Position's hash;
//   - accounts: every account they touch (audit.Touched.Result).
//
// An error means the verification could not run; a broken ledger is a
// Report with OK false.
func (a *Audit) VerifySince(ctx context.Context, opts SinceOptions) (audit.Report, error) {
	if opts.BatchSize <= 0 {
		opts.BatchSize = 2000
	}
	if opts.Examples <= 0 {
		opts.Examples = audit.DefaultExamples
	}
	if opts.Progress == nil {
		opts.Progress = func(audit.Progress) {}
	}
	rep := audit.Report{StartedAt: time.Now().UTC()}
	cp := opts.Checkpoint
	w := &sinceWalk{opts: opts, cons: &sinceFindings{name: audit.CheckSinceConsistency, max: opts.Examples},
		verified: tlog.TileHashReader(tlog.Tree{N: cp.Size, Hash: cp.Root}, opts.Tiles)}
	if cp.Size > 0 {
		h, err := w.verified.ReadHashes([]int64{tlog.StoredHashIndex(0, cp.Size-1)})
		if err != nil {
			w.cons.fail(audit.Finding{Position: opts.Position, Field: "tiles", Recomputed: sinceB64(cp.Root),
				Message: fmt.Sprintf("the stored tiles do not prove the checkpoint's root: %v", err)})
		} else {
			w.cpLeaf = &h[0]
		}
	}
	// Connections in one snapshot: the events after the checkpoint are
	// walked on the first while the others read the accounts rows
	// claiming a touch after it, each with its stream's version at the
	// checkpoint (the walk's time hides theirs).
	snaps, release, err := a.sharedSnapshot(ctx, 1+sinceSides)
	if err != nil {
		return rep, err
	}
	defer release()
	tx, sides := snaps[0], snaps[1:]
	var head int64
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(position), 0) FROM events`).Scan(&head); err != nil {
		return rep, fmt.Errorf("read chain head: %w", err)
	}
	sideCtx, cancelSides := context.WithCancel(ctx)
	shares := make([][]audit.SinceRow, len(sides))
	sideErrs := make([]error, len(sides))
	var wg sync.WaitGroup
	for i, side := range sides {
		wg.Go(func() { shares[i], sideErrs[i] = sinceRows(sideCtx, side, sinceClaimed, opts.Position, i, len(sides)) })
	}
	walkErr := w.walk(ctx, tx, head)
	if walkErr != nil {
		cancelSides()
	}
	wg.Wait()
	cancelSides()
	if walkErr != nil {
		return rep, walkErr
	}
	if err := errors.Join(sideErrs...); err != nil {
		return rep, err
	}
	claimed := slices.Concat(shares...)
	w.consistency()
	rows, err := w.withUnclaimed(ctx, sides[0], claimed)
	if err != nil {
		return rep, err
	}
	checks, totals := w.chain.Results()
	rep.Events = w.chain.Events()
	var h []byte
	rep.HeadPosition, h = w.chain.Head()
	rep.HeadHash = hex.EncodeToString(h)
	rep.Currencies = totals
	rep.Checks = append([]audit.CheckResult{w.cons.result()}, checks...)
	rep.Checks = append(rep.Checks, w.touched.Result(rows))
	rep.Finish(time.Now().UTC())
	return rep, nil
}

// sinceWalk is one VerifySince's state.
type sinceWalk struct {
	opts     SinceOptions
	verified tlog.HashReader // hashes of the checkpoint's tree, each tile checked against its root
	cpLeaf   *tlog.Hash      // the checkpoint's last leaf, proven
	cons     *sinceFindings
	chain    *audit.Chain
	touched  *audit.Touched
	leaves   []tlog.Hash // of the events after the checkpoint, up to the head's position
	seen     bool        // the checkpoint's own event was read
}

// walk streams the events from the checkpoint's own to head in one query,
// examines each batch in parallel (chain hash, body, postings, leaf hash)
// and links them in order.
func (w *sinceWalk) walk(ctx context.Context, tx pgx.Tx, head int64) error {
	cpPos, batch := w.opts.Position, w.opts.BatchSize
	w.touched = audit.NewTouched(cpPos, w.opts.Examples)
	w.chain = audit.NewChainAt(w.opts.Examples, cpPos+1, domain.GenesisHash)
	w.leaves = make([]tlog.Hash, 0, max(0, min(w.opts.Head.Position-cpPos, 1<<24)))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan []audit.Record, 2)
	var readErr error
	var wg sync.WaitGroup
	wg.Go(func() { readErr = streamEvents(ctx, tx, max(cpPos, 1), head, batch, batches) })
	workers := max(1, min(runtime.GOMAXPROCS(0), 8))
	type examined struct {
		ex   audit.Examined
		ev   *domain.Event
		leaf tlog.Hash
	}
	exs := make([]examined, batch)
	start := time.Now()
	var done int64
	for recs := range batches {
		sinceParallel(len(recs), workers, func(i int) {
			ex, ev := audit.ExamineEvent(recs[i])
			exs[i] = examined{ex, ev, ledgerlog.LeafHash(recs[i].Body)}
		})
		for i := range recs {
			r, x := &recs[i], &exs[i]
			if r.Position <= cpPos {
				w.checkpointEvent(*r, x.ex, x.leaf)
				continue
			}
			w.chain.Add(*r, x.ex)
			w.touched.Add(*r, x.ev)
			if r.Position <= w.opts.Head.Position {
				w.leaves = append(w.leaves, x.leaf)
			}
			done++
		}
		w.opts.Progress(audit.Progress{Phase: "events", Done: done, Total: head - cpPos, Elapsed: time.Since(start)})
	}
	wg.Wait()
	if readErr != nil {
		return readErr
	}
	if cpPos > 0 && !w.seen {
		w.cons.fail(audit.Finding{Position: cpPos, Field: "position",
			Message: fmt.Sprintf("the checkpoint's last leaf is the event at position %d, which is not in the event store (removed?)", cpPos)})
	}
	return nil
}

// checkpointEvent checks the event of the checkpoint's last leaf and
// starts the chain at its stored hash.
func (w *sinceWalk) checkpointEvent(r audit.Record, ex audit.Examined, leaf tlog.Hash) {
	w.seen = true
	w.chain = audit.NewChainAt(w.opts.Examples, r.Position+1, r.Hash)
	if w.cpLeaf != nil && leaf != *w.cpLeaf {
		w.cons.fail(audit.Finding{Position: r.Position, EventID: r.EventID, Field: "body", Stored: sinceB64(leaf), Recomputed: sinceB64(*w.cpLeaf),
			Message: fmt.Sprintf("the event's body is not the checkpoint's leaf %d: edited after it was signed", w.opts.Checkpoint.Size-1)})
	}
	if !bytes.Equal(ex.Hash, r.Hash) {
		w.cons.fail(audit.Finding{Position: r.Position, EventID: r.EventID, Field: "hash", Stored: hex.EncodeToString(r.Hash),
			Recomputed: hex.EncodeToString(ex.Hash),
			Message:    "the stored hash of the checkpoint's event ≠ SHA-256(prev_hash || body): the chain does not start from its body"})
	}
}

// consistency grows the checkpoint's tree by the leaves read and compares
// its roots with the stored head's and the later signed checkpoints'.
func (w *sinceWalk) consistency() {
	cp, h := w.opts.Checkpoint, w.opts.Head
	w.cons.rows = int64(len(w.leaves))
	if w.cons.failures > 0 {
		return // the checkpoint's tree is not proven: nothing to grow
	}
	if h.Size < cp.Size || cp.Size+int64(len(w.leaves)) != h.Size {
		w.cons.fail(audit.Finding{Position: h.Position, Field: "size", Stored: fmt.Sprint(h.Size), Recomputed: fmt.Sprint(cp.Size + int64(len(w.leaves))),
			Message: fmt.Sprintf("the stored tree has %d leaves up to position %d; the checkpoint's %d plus the %d events after it up to there make %d",
				h.Size, h.Position, cp.Size, len(w.leaves), cp.Size+int64(len(w.leaves)))})
		return
	}
	type target struct {
		what string
		size int64
		root tlog.Hash
	}
	targets := []target{{"the stored tree", h.Size, h.Root}}
	for _, s := range w.opts.Signed {
		if s.Size > cp.Size && s.Size <= h.Size {
			targets = append(targets, target{fmt.Sprintf("the signed checkpoint of size %d", s.Size), s.Size, s.Root})
		}
	}
	for _, t := range targets {
		root := cp.Root
		if t.size > cp.Size {
			g, err := ledgerlog.Append(cp.Size, w.verified, w.leaves[:t.size-cp.Size])
			if err != nil {
				w.cons.fail(audit.Finding{Field: "tiles", Message: fmt.Sprintf("grow the checkpoint's tree to %d: %v", t.size, err)})
				continue
			}
			root = g.Root
		}
		if root != t.root {
			w.cons.fail(audit.Finding{Field: "root", Stored: sinceB64(t.root), Recomputed: sinceB64(root),
				Message: fmt.Sprintf("%s's root at %d leaves ≠ the root of the checkpoint's tree grown by the events after it: the log is not consistent with the checkpoint",
					t.what, t.size)})
		}
	}
}

// streamEvents reads the events from..upTo in one query and sends them in
// batches; it closes out.
func streamEvents(ctx context.Context, tx pgx.Tx, from, upTo int64, batch int, out chan<- []audit.Record) error {
	defer close(out)
	rows, err := tx.Query(ctx, sinceEvents, from, upTo)
	if err != nil {
		return fmt.Errorf("read events from %d: %w", from, err)
	}
	defer rows.Close()
	recs := make([]audit.Record, 0, batch)
	for rows.Next() {
		var r audit.Record
		if err := rows.Scan(&r.Position, &r.EventID, &r.StreamID, &r.StreamVersion, &r.Type, &r.OccurredAt,
			&r.Body, &r.PrevHash, &r.Hash); err != nil {
			return fmt.Errorf("read events from %d: %w", from, err)
		}
		r.OccurredAt = r.OccurredAt.UTC()
		if recs = append(recs, r); len(recs) == batch {
			select {
			case out <- recs:
			case <-ctx.Done():
				return ctx.Err()
			}
			recs = make([]audit.Record, 0, batch)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read events from %d: %w", from, err)
	}
	if len(recs) > 0 {
		out <- recs
	}
	return nil
}

// withUnclaimed adds to the rows claiming a touch after the checkpoint
// those of the accounts the events touched that did not claim it.
func (w *sinceWalk) withUnclaimed(ctx context.Context, tx pgx.Tx, claimed []audit.SinceRow) ([]audit.SinceRow, error) {
	have := make(map[string]bool, len(claimed))
	for _, r := range claimed {
		have[r.Account] = true
	}
	var missing []string
	for _, id := range w.touched.Accounts() {
		if !have[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return claimed, nil
	}
	more, err := sinceRows(ctx, tx, sinceListed, w.opts.Position, missing)
	if err != nil {
		return nil, err
	}
	return append(claimed, more...), nil
}

func sinceRows(ctx context.Context, tx pgx.Tx, query string, args ...any) ([]audit.SinceRow, error) {
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read the accounts touched: %w", err)
	}
	var out []audit.SinceRow
	var r audit.SinceRow
	if _, err := pgx.ForEachRow(rows, []any{&r.Account, &r.Kind, &r.Currency, &r.Balance, &r.Version, &r.LastPosition,
		&r.VersionAtCheckpoint}, func() error {
		out = append(out, r)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read the accounts touched: %w", err)
	}
	return out, nil
}

// sinceParallel runs f(0..n-1) on workers goroutines.
func sinceParallel(n, workers int, f func(i int)) {
	if workers == 1 || n < 64 {
		for i := range n {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				f(i)
			}
		})
	}
	wg.Wait()
}

// sinceFindings is a check's tally outside package audit.
type sinceFindings struct {
	name     string
	rows     int64
	failures int64
	examples []audit.Finding
	max      int
}

func (f *sinceFindings) fail(x audit.Finding) {
	f.failures++
	if len(f.examples) < f.max {
		f.examples = append(f.examples, x)
	}
}

func (f *sinceFindings) result() audit.CheckResult {
	return audit.CheckResult{Name: f.name, OK: f.failures == 0, Rows: f.rows, Failures: f.failures, Examples: f.examples}
}

func sinceB64(h tlog.Hash) string { return base64.StdEncoding.EncodeToString(h[:]) }
