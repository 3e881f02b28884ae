package witness

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/pitboss/pitboss/adapters/postgres/logstore"
)

// Refusals of add-checkpoint (C2SP tlog-witness).
var (
	// ErrUnknownLog: 404, the witness does not know the checkpoint's origin.
	ErrUnknownLog = errors.New("the witness does not know the log (404)")
	// ErrForbidden: 403, no signature verified with the log's key the
	// witness trusts.
	ErrForbidden = errors.New("the witness trusts no key that signed the checkpoint (403)")
	// ErrInconsistent: 422, the consistency proof did not verify.
	ErrInconsistent = errors.New("the witness refused the consistency proof (422)")
	// ErrBadRequest: 400, an old size above the checkpoint's, or a body it
	// could not read.
	ErrBadRequest = errors.New("the witness refused the request (400)")
)

// ConflictError is a 409: the witness's latest cosigned size for the log
// is Size, not the old size sent (Size is -1 when the answer named none: a
// checkpoint of the size it has with another root).
type ConflictError struct{ Size int64 }

func (e *ConflictError) Error() string {
	if e.Size < 0 {
		return "the witness holds another tree of that size (409)"
	}
	return fmt.Sprintf("the witness's size for the log is %d (409)", e.Size)
}

// AddCheckpoint posts note (a signed checkpoint) to w with the old size
// and the consistency proof from it, and returns the answer's signature
// lines (each with its newline).
func AddCheckpoint(ctx context.Context, hc *http.Client, w Witness, old int64, proof tlog.TreeProof, note []byte) ([]string, error) {
	var body bytes.Buffer
	fmt.Fprintf(&body, "old %d\n", old)
	for _, h := range proof {
		body.WriteString(base64.StdEncoding.EncodeToString(h[:]) + "\n")
	}
	body.WriteString("\n")
	body.Write(note)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL+"/add-checkpoint", &body)
	if err != nil {
		return nil, fmt.Errorf("witness %s: %w", w.Name, err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("witness %s: %w", w.Name, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return nil, fmt.Errorf("witness %s: read the answer: %w", w.Name, err)
	}
	switch resp.StatusCode {
	case http.StatusOK:
		lines := strings.SplitAfter(string(answer), "\n")
		if n := len(lines); n > 0 && lines[n-1] == "" {
			lines = lines[:n-1]
		}
		return lines, nil
	case http.StatusConflict:
		size, err := strconv.ParseInt(strings.TrimSuffix(string(answer), "\n"), 10, 64)
		if err != nil || size < 0 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/x.tlog.size") {
			size = -1
		}
		return nil, fmt.Errorf("witness %s: %w", w.Name, &ConflictError{Size: size})
	case http.StatusNotFound:
		return nil, fmt.Errorf("witness %s: %w", w.Name, ErrUnknownLog)
	case http.StatusForbidden:
		return nil, fmt.Errorf("witness %s: %w", w.Name, ErrForbidden)
	case http.StatusUnprocessableEntity:
		return nil, fmt.Errorf("witness %s: %w", w.Name, ErrInconsistent)
	case http.StatusBadRequest:
		return nil, fmt.Errorf("witness %s: %w: %s", w.Name, ErrBadRequest, bytes.TrimSpace(answer))
	}
	return nil, fmt.Errorf("witness %s: answered %s", w.Name, resp.Status)
}

// Store is what the cosigner reads and writes (*logstore.Store).
type Store interface {
	LatestCheckpoints(ctx context.Context) ([]logstore.SignedCheckpoint, error)
	TileReader(ctx context.Context, log string) *logstore.Tiles
	AddCosignatures(ctx context.Context, id int64, note []byte) error
}

// Cosigner asks every witness to cosign each log's latest checkpoint. It
// remembers, per witness and log, the size the witness holds (learnt from
// its cosignatures and its 409 answers, so a restart costs one 409) and
// the logs a witness does not know (404, asked again after a restart).
type Cosigner struct {
	store     Store
	http      *http.Client
	witnesses []Witness
	log       *slog.Logger
	sizes     map[string]int64
	unknown   map[string]bool
}

// NewCosigner returns a cosigner of store's checkpoints by witnesses.
func NewCosigner(store Store, witnesses []Witness, hc *http.Client, logger *slog.Logger) *Cosigner {
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Cosigner{store: store, http: hc, witnesses: witnesses, log: logger,
		sizes: map[string]int64{}, unknown: map[string]bool{}}
}

// Pass asks each witness for its cosignature of each log's latest
// checkpoint it has not cosigned yet, and stores the cosignatures; it
// returns how many it added, and what failed (the rest went on).
func (c *Cosigner) Pass(ctx context.Context) (int, error) {
	cps, err := c.store.LatestCheckpoints(ctx)
	if err != nil {
		return 0, err
	}
	added := 0
	var errs []error
	for _, cp := range cps {
		for _, w := range c.witnesses {
			if ctx.Err() != nil {
				return added, ctx.Err()
			}
			origin, _, _ := strings.Cut(string(cp.Note), "\n")
			key := w.Name + "\x00" + origin
			if c.unknown[key] || w.signedBy(cp.Note) {
				continue
			}
			note, err := c.cosign(ctx, w, key, cp)
			if errors.Is(err, ErrUnknownLog) {
				c.unknown[key] = true
				continue
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("checkpoint %d of %s (size %d): %w", cp.ID, cp.Log, cp.Size, err))
				continue
			}
			if err := c.store.AddCosignatures(ctx, cp.ID, note); err != nil {
				errs = append(errs, err)
				continue
			}
			cp.Note = note
			added++
		}
	}
	return added, errors.Join(errs...)
}

// cosign gets w's cosignature of cp, from the size w holds (asked again
// once with the size a 409 names), and returns cp's note with it.
func (c *Cosigner) cosign(ctx context.Context, w Witness, key string, cp logstore.SignedCheckpoint) ([]byte, error) {
	text, err := noteText(cp.Note)
	if err != nil {
		return nil, err
	}
	var lines []string
	for try := 0; ; try++ {
		old := c.sizes[key]
		if old > cp.Size {
			return nil, fmt.Errorf("witness %s holds size %d, above the log's latest checkpoint", w.Name, old)
		}
		var proof tlog.TreeProof
		if old > 0 && old < cp.Size {
			hr := tlog.TileHashReader(tlog.Tree{N: cp.Size, Hash: cp.Root}, c.store.TileReader(ctx, cp.Log))
			if proof, err = tlog.ProveTree(cp.Size, old, hr); err != nil {
				return nil, fmt.Errorf("consistency proof %d → %d: %w", old, cp.Size, err)
			}
		}
		lines, err = AddCheckpoint(ctx, c.http, w, old, proof, cp.Note)
		var conflict *ConflictError
		if errors.As(err, &conflict) && conflict.Size >= 0 && conflict.Size != old && try == 0 {
			c.sizes[key] = conflict.Size
			continue
		}
		if err != nil {
			return nil, err
		}
		break
	}
	note := append([]byte(nil), cp.Note...)
	good := 0
	for _, line := range lines {
		if _, err := w.Verify(text, line); errors.Is(err, ErrOtherKey) {
			continue // another key of the witness's: ignored, as the protocol asks
		} else if err != nil {
			return nil, err
		}
		note = append(note, line...)
		good++
	}
	if good == 0 {
		return nil, fmt.Errorf("witness %s answered no cosignature of its key", w.Name)
	}
	c.sizes[key] = cp.Size
	return note, nil
}

// Run cosigns every interval until ctx ends (the relay role, beside the
// log builder, which it never holds up).
func Run(ctx context.Context, c *Cosigner, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if n, err := c.Pass(ctx); ctx.Err() != nil {
			return nil
		} else if err != nil {
			c.log.Warn("verifiable log: witnesses", "error", err, "cosignatures", n)
		} else if n > 0 {
			c.log.Info("verifiable log: cosigned", "cosignatures", n)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
