package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres"
	"github.com/pitboss/pitboss/adapters/postgres/auditstore"
	"github.com/pitboss/pitboss/adapters/postgres/logstore"
	"github.com/pitboss/pitboss/audit"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/internal/progress"
	"github.com/pitboss/pitboss/ledgerlog"
)

// sinceArgs are the flags of `pitboss verify --since` it shares with
// verify.
type sinceArgs struct {
	file            string
	asJSON, quiet   bool
	examples, batch int
}

// sinceReport is `verify --since --json`'s report: verify's, with the
// checkpoint it started from and the rate over the whole command.
type sinceReport struct {
	audit.Report
	Since struct {
		Origin   string `json:"origin"`
		Size     int64  `json:"size"`
		Root     string `json:"root"`
		Position int64  `json:"position"` // the event of its last leaf
	} `json:"since"`
	Seconds         float64 `json:"seconds"` // the whole command
	EventsPerSecond float64 `json:"events_per_second"`
}

// verifySince is `pitboss verify --since FILE`: the ledger from a signed
// checkpoint of the platform log (its note, as the log serves it) to the
// head, reading only the events after it (docs/audit.md, "Incremental
// verification"). A checkpoint that is not this installation's platform
// log's, or not signed by one of the ledger's checkpoint keys, is refused
// (exit 1); an unreadable or malformed file is a usage error (exit 2).
func verifySince(ctx context.Context, cfg config, a sinceArgs, stdout, stderr io.Writer) error {
	started := time.Now()
	msg, err := os.ReadFile(a.file)
	if err != nil {
		return &exitError{exitVerifyError, fmt.Errorf("verify --since: %w", err)}
	}
	claimed, err := noteCheckpoint(msg)
	if err != nil {
		return &exitError{exitVerifyError, fmt.Errorf("verify --since %s: not a signed checkpoint note: %w", a.file, err)}
	}
	pool, err := postgres.Connect(ctx, cfg.DatabaseURL)
	if err != nil {
		return &exitError{exitVerifyError, fmt.Errorf("postgres: %w", err)}
	}
	defer pool.Close()
	origin := cfg.logOrigin()
	keys, err := auditstore.NewCheckpoints(pool, nil).Keys(ctx)
	if err != nil {
		return &exitError{exitVerifyError, err}
	}
	var vkeys []string
	for _, k := range keys {
		vk, err := ledgerlog.VerifierKey(origin, k.PublicKey)
		if err != nil {
			return &exitError{exitVerifyError, err}
		}
		vkeys = append(vkeys, vk)
	}
	out := sinceReport{}
	out.Since.Origin, out.Since.Size, out.Since.Root = claimed.Origin, claimed.Size, b64Root(claimed.Root)
	opts, refused, err := sinceStart(ctx, logstore.New(pool), msg, claimed, origin, vkeys)
	if err != nil {
		return &exitError{exitVerifyError, err}
	}
	if refused != "" {
		out.Report = audit.Report{StartedAt: started.UTC(), Checks: []audit.CheckResult{{Name: audit.CheckSinceCheckpoint,
			Rows: 1, Failures: 1, Examples: []audit.Finding{{Field: "checkpoint", Message: refused}}}}}
		out.Report.Finish(time.Now().UTC())
		return writeSince(out, a.asJSON, stdout)
	}
	out.Since.Position = opts.Position
	opts.Examples, opts.BatchSize = a.examples, a.batch
	var prog *progress.Reporter
	if !a.quiet {
		prog = progress.New(stderr, progress.IsTerminal(stderr), cfg.LogFormat, "verify")
		opts.Progress = func(p audit.Progress) {
			prog.Update(progress.Step{Phase: p.Phase, Done: p.Done, Total: p.Total, Elapsed: p.Elapsed})
		}
	}
	rep, err := auditstore.NewAudit(pool).VerifySince(ctx, opts)
	if prog != nil {
		prog.Finish()
	}
	if err != nil {
		return &exitError{exitVerifyError, err}
	}
	checked := audit.CheckResult{Name: audit.CheckSinceCheckpoint, OK: true, Rows: int64(1 + len(opts.Signed)),
		Note: fmt.Sprintf("%s at %d leaves (position %d), signed by a checkpoint key; %d later signed checkpoints compared",
			claimed.Origin, claimed.Size, opts.Position, len(opts.Signed))}
	rep.Checks = append([]audit.CheckResult{checked}, rep.Checks...)
	rep.StartedAt = started.UTC()
	rep.Finish(time.Now().UTC())
	out.Report = rep
	out.Seconds = time.Since(started).Seconds()
	out.EventsPerSecond = float64(rep.Events) / out.Seconds
	if err := writeSince(out, a.asJSON, stdout); err != nil {
		return err
	}
	if prog != nil {
		prog.PeakMemory()
	}
	return nil
}

// sinceStart checks the checkpoint (origin, signature, its last leaf in
// the log) and reads what VerifySince starts from: the stored head and
// the latest signed checkpoint beyond it. refused says why the checkpoint
// is refused; err that the verification could not run.
func sinceStart(ctx context.Context, st *logstore.Store, msg []byte, claimed ledgerlog.Checkpoint, origin string,
	vkeys []string) (opts auditstore.SinceOptions, refused string, err error) {
	if claimed.Origin != origin {
		return opts, fmt.Sprintf("the checkpoint is of log %q, not this ledger's platform log %q", claimed.Origin, origin), nil
	}
	cp, _, err := ledgerlog.Open(msg, vkeys...)
	if err != nil {
		return opts, fmt.Sprintf("the checkpoint is not signed by a checkpoint key of this ledger (%d listed): %v", len(vkeys), err), nil
	}
	opts.Checkpoint = cp
	if cp.Size > 0 {
		opts.Position, err = st.Leaf(ctx, ledgerlog.PlatformLog, cp.Size-1)
		if errors.Is(err, domain.ErrNotFound) {
			return opts, fmt.Sprintf("the platform log has no leaf %d: it holds less than the checkpoint (truncated?)", cp.Size-1), nil
		}
		if err != nil {
			return opts, "", err
		}
	}
	// The head first, then VerifySince's snapshot: the events up to it
	// are in the snapshot.
	tree, err := st.Tree(ctx, ledgerlog.PlatformLog)
	if err != nil {
		return opts, "", err
	}
	opts.Head = auditstore.LogHead{Size: tree.Size, Root: tree.Root, Position: tree.Position}
	opts.Tiles = st.TileReader(ctx, ledgerlog.PlatformLog)
	latest, err := st.LatestCheckpoint(ctx, ledgerlog.PlatformLog)
	switch {
	case errors.Is(err, domain.ErrNotFound):
	case err != nil:
		return opts, "", err
	case latest.Size > cp.Size:
		l, _, err := ledgerlog.Open(latest.Note, vkeys...)
		if err != nil {
			return opts, fmt.Sprintf("the platform log's latest checkpoint (%d, size %d) is not signed by a checkpoint key of this ledger: %v",
				latest.ID, latest.Size, err), nil
		}
		opts.Signed = append(opts.Signed, l)
	}
	return opts, "", nil
}

// noteCheckpoint reads the checkpoint a signed note claims, before its
// signature is checked: a text of origin, size and root, a blank line,
// signature lines.
func noteCheckpoint(msg []byte) (ledgerlog.Checkpoint, error) {
	i := bytes.Index(msg, []byte("\n\n"))
	if i < 0 || len(bytes.TrimSpace(msg[i:])) == 0 {
		return ledgerlog.Checkpoint{}, errors.New("no signature lines after the text")
	}
	return ledgerlog.ParseCheckpoint(string(msg[:i+1]))
}

func writeSince(out sinceReport, asJSON bool, stdout io.Writer) error {
	if asJSON {
		if err := writeJSON(stdout, out); err != nil {
			return &exitError{exitVerifyError, err}
		}
	} else {
		if err := out.Report.WriteText(stdout); err != nil {
			return &exitError{exitVerifyError, err}
		}
		fmt.Fprintf(stdout, "  since %s at %d leaves (position %d): %d events after it in %.2fs, %.0f events/s\n",
			out.Since.Origin, out.Since.Size, out.Since.Position, out.Events, out.Seconds, out.EventsPerSecond)
	}
	if !out.OK {
		return &exitError{exitVerifyFailed, errVerifyFailed}
	}
	return nil
}

func b64Root(h [32]byte) string { return base64.StdEncoding.EncodeToString(h[:]) }
