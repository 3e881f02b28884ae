package vlog

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/ledgerlog"
)

// noteCheckpoint reads a stored signed note's checkpoint (the text before
// the signatures; the store signed it, the caller verifies it).
func noteCheckpoint(msg []byte) (ledgerlog.Checkpoint, error) {
	i := bytes.Index(msg, []byte("\n\n"))
	if i < 0 {
		return ledgerlog.Checkpoint{}, errors.New("stored checkpoint note without signatures")
	}
	cp, err := ledgerlog.ParseCheckpoint(string(msg[:i+1]))
	if err != nil {
		return cp, fmt.Errorf("stored checkpoint note: %w", err)
	}
	return cp, nil
}

// Inclusion is the answer of prefix/proofs/inclusion.
type Inclusion struct {
	Position  int64    `json:"position"`
	LeafIndex int64    `json:"leaf_index"`
	TreeSize  int64    `json:"tree_size"`
	LeafHash  string   `json:"leaf_hash"`  // standard base64
	Proof     []string `json:"proof"`      // standard base64 hashes, tlog.RecordProof's order
	Note      string   `json:"checkpoint"` // the signed note of tree_size
}

// Consistency is the answer of prefix/proofs/consistency.
type Consistency struct {
	From     int64    `json:"from"`
	To       int64    `json:"to"`
	FromNote string   `json:"from_checkpoint"`
	ToNote   string   `json:"to_checkpoint"`
	Proof    []string `json:"proof"` // standard base64 hashes, tlog.TreeProof's order
}

// isUUID reports whether s is a UUID in its canonical text form.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, r := range s {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if r != '-' {
				return false
			}
		case !('0' <= r && r <= '9' || 'a' <= r && r <= 'f' || 'A' <= r && r <= 'F'):
			return false
		}
	}
	return true
}

func badParam(field, msg string) error {
	return &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidRequest, Message: msg,
		Details: map[string]any{"field": field}}
}

// sizeParam reads a tree size parameter (a positive integer); ok is false
// when it is absent.
func sizeParam(c echo.Context, name string) (size int64, ok bool, err error) {
	v, ok := wire.QueryValue(c, name)
	if !ok {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 {
		return 0, false, badParam(name, name+" must be a positive integer (a checkpoint's tree size)")
	}
	return n, true, nil
}

// signed is log's checkpoint of size (its latest when size is 0): the note
// and what it says. A size no checkpoint has is 404.
func (h Handlers) signed(c echo.Context, log string, size int64) ([]byte, ledgerlog.Checkpoint, error) {
	ctx := c.Request().Context()
	var msg []byte
	var err error
	if size == 0 {
		msg, err = h.Store.LatestNote(ctx, log)
	} else {
		msg, err = h.Store.NoteOfSize(ctx, log, size)
	}
	if errors.Is(err, domain.ErrNotFound) {
		what := "the log has no checkpoint yet"
		if size > 0 {
			what = "no checkpoint of the log has tree size " + strconv.FormatInt(size, 10)
		}
		return nil, ledgerlog.Checkpoint{}, &wire.Error{Status: http.StatusNotFound, Code: wire.CodeNotFound, Message: what, Err: err}
	}
	if err != nil {
		return nil, ledgerlog.Checkpoint{}, err
	}
	cp, err := noteCheckpoint(msg)
	return msg, cp, err
}

// hashes reads log's tree of cp through its tiles, each checked against
// cp's root.
func (h Handlers) hashes(c echo.Context, log string, cp ledgerlog.Checkpoint) tlog.HashReader {
	return tlog.TileHashReader(tlog.Tree{N: cp.Size, Hash: cp.Root}, h.Store.Tiles(c.Request().Context(), log))
}

func encodeHashes(hs []tlog.Hash) []string {
	out := make([]string, len(hs))
	for i, x := range hs {
		out[i] = base64.StdEncoding.EncodeToString(x[:])
	}
	return out
}

// inclusion answers prefix/proofs/inclusion?event_id=|position=&size=:
// the event's leaf and its inclusion proof in the checkpoint of size (the
// latest when absent). An event that is not the log's is 404; one the log
// or that checkpoint does not hold yet is 409 NOT_IN_LOG.
func (h Handlers) inclusion(c echo.Context) error {
	if h.Store == nil {
		return unavailable()
	}
	ctx, log := c.Request().Context(), h.LogOf(c)
	id, byID := wire.QueryValue(c, "event_id")
	pv, byPos := wire.QueryValue(c, "position")
	var position int64
	switch {
	case byID == byPos:
		return badParam("event_id", "give exactly one of event_id and position")
	case byID && !isUUID(id):
		return badParam("event_id", "event_id must be an event's UUID")
	case byPos:
		n, err := strconv.ParseInt(pv, 10, 64)
		if err != nil || n < 1 {
			return badParam("position", "position must be a positive integer (a ledger position)")
		}
		position = n
	}
	size, _, err := sizeParam(c, "size")
	if err != nil {
		return err
	}
	msg, cp, err := h.signed(c, log, size)
	if err != nil {
		return err
	}
	if position, err = h.Store.EventOf(ctx, log, id, position); err != nil {
		return err
	}
	index, err := h.Store.LeafOf(ctx, log, position)
	if err != nil && !errors.Is(err, domain.ErrNotFound) {
		return err
	}
	if err != nil || index >= cp.Size {
		return &wire.Error{Status: http.StatusConflict, Code: wire.CodeNotInLog,
			Message: fmt.Sprintf("the event at %d is not in the checkpoint of size %d yet", position, cp.Size),
			Details: map[string]any{"position": position, "tree_size": cp.Size}}
	}
	hr := h.hashes(c, log, cp)
	proof, err := tlog.ProveRecord(cp.Size, index, hr)
	if err != nil {
		return fmt.Errorf("inclusion proof of leaf %d in %s at %d: %w", index, log, cp.Size, err)
	}
	leaf, err := hr.ReadHashes([]int64{tlog.StoredHashIndex(0, index)})
	if err != nil {
		return fmt.Errorf("leaf %d of %s: %w", index, log, err)
	}
	return wire.OK(c, Inclusion{Position: position, LeafIndex: index, TreeSize: cp.Size,
		LeafHash: base64.StdEncoding.EncodeToString(leaf[0][:]), Proof: encodeHashes(proof), Note: string(msg)})
}

// consistency answers prefix/proofs/consistency?from=&to=: the proof that
// the checkpoint of size to extends the one of size from (both must be
// checkpoints' sizes; from at most to).
func (h Handlers) consistency(c echo.Context) error {
	if h.Store == nil {
		return unavailable()
	}
	from, okFrom, err := sizeParam(c, "from")
	if err != nil {
		return err
	}
	to, okTo, err := sizeParam(c, "to")
	switch {
	case err != nil:
		return err
	case !okFrom:
		return badParam("from", "from is required (the older checkpoint's tree size)")
	case !okTo:
		return badParam("to", "to is required (the newer checkpoint's tree size)")
	case from > to:
		return badParam("from", "from must be at most to")
	}
	log := h.LogOf(c)
	fromNote, fromCP, err := h.signed(c, log, from)
	if err != nil {
		return err
	}
	toNote, toCP, err := h.signed(c, log, to)
	if err != nil {
		return err
	}
	proof, err := tlog.ProveTree(to, from, h.hashes(c, log, toCP))
	if err != nil {
		return fmt.Errorf("consistency proof of %s from %d to %d: %w", log, from, to, err)
	}
	if err := tlog.CheckTree(proof, to, toCP.Root, from, fromCP.Root); err != nil {
		return fmt.Errorf("%s: the checkpoints of %d and %d disagree: %w", log, from, to, err)
	}
	return wire.OK(c, Consistency{From: from, To: to, FromNote: string(fromNote), ToNote: string(toNote),
		Proof: encodeHashes(proof)})
}
