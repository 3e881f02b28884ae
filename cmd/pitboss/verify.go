package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/pitboss/pitboss/adapters/postgres"
	"github.com/pitboss/pitboss/adapters/postgres/auditstore"
	"github.com/pitboss/pitboss/audit"
	"github.com/pitboss/pitboss/internal/progress"
)

// Exit codes of `pitboss verify`, like diff(1): 0 every check held, 1 a
// check failed, 2 the verification could not run.
const (
	exitVerifyFailed = 1
	exitVerifyError  = 2
)

// exitError carries a process exit code other than 1 up to main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// ExitCode is the process exit code main uses.
func (e *exitError) ExitCode() int { return e.code }

// errVerifyFailed is returned when a check failed; the report says which.
var errVerifyFailed = errors.New("verification failed: the event store does not hold up (see the report)")

type anchorFlags []audit.Anchor

func (a *anchorFlags) String() string { return fmt.Sprint(len(*a)) }
func (a *anchorFlags) Set(s string) error {
	x, err := audit.ParseAnchor(s)
	if err != nil {
		return err
	}
	*a = append(*a, x)
	return nil
}

// verify recomputes the hash chain and checks the ledger's invariants (see
// docs/audit.md). It only reads, apart from recording its outcome in
// audit_runs.
func verify(ctx context.Context, cfg config, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	examples := fs.Int("examples", audit.DefaultExamples, "broken rows listed per check")
	skipRM := fs.Bool("skip-read-models", false, "leave out the read-model comparison")
	record := fs.Bool("record", true, "record the outcome in audit_runs for the console")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	batch := fs.Int("batch", 2000, "events read per round trip")
	checkpoint := fs.String("checkpoint", "", "a signed checkpoint to verify (a file with its JSON record, or its id): the signature, then the chain and totals up to it")
	since := fs.String("since", "", "a signed checkpoint note of the platform log (a file): the log at the head consistent with it, and only the events after it checked")
	var anchors anchorFlags
	fs.Var(&anchors, "anchor", "POSITION:HASH recorded earlier (a head hash); repeatable; the hash must still be there")
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err // a usage error is exit 2 (exitVerifyError), help 0
	}
	if fs.NArg() > 0 || *examples < 1 || *batch < 1 || *batch > 100_000 {
		return &exitError{exitVerifyError, fmt.Errorf("verify: unexpected arguments %q (or --examples/--batch out of range)", fs.Args())}
	}
	if *since != "" {
		if *checkpoint != "" || len(anchors) > 0 || *skipRM {
			return &exitError{exitVerifyError, errors.New("verify: --since checks the events after a log checkpoint; --checkpoint, --anchor and --skip-read-models belong to the other verifications")}
		}
		return verifySince(ctx, cfg, sinceArgs{file: *since, asJSON: *asJSON, quiet: *quiet, examples: *examples, batch: *batch}, stdout, stderr)
	}
	if *checkpoint != "" {
		if len(anchors) > 0 || *skipRM {
			return &exitError{exitVerifyError, errors.New("verify: --checkpoint checks one checkpoint; --anchor and --skip-read-models belong to the full verification")}
		}
		return verifyCheckpoint(ctx, cfg, *checkpoint, *asJSON, *batch, stdout)
	}
	pool, err := postgres.Connect(ctx, cfg.DatabaseURL)
	if err != nil {
		return &exitError{exitVerifyError, fmt.Errorf("postgres: %w", err)}
	}
	defer pool.Close()
	a := auditstore.NewAudit(pool)
	opts := auditstore.VerifyOptions{Examples: *examples, Anchors: anchors, SkipReadModels: *skipRM, BatchSize: *batch}
	var prog *progress.Reporter
	if !*quiet {
		prog = progress.New(stderr, progress.IsTerminal(stderr), cfg.LogFormat, "verify")
		opts.Progress = func(p audit.Progress) {
			prog.Update(progress.Step{Phase: p.Phase, Done: p.Done, Total: p.Total, Pass: p.Pass, Passes: p.Passes, Elapsed: p.Elapsed})
		}
	}
	rep, err := a.Verify(ctx, opts)
	if prog != nil {
		prog.Finish()
	}
	if err != nil {
		return &exitError{exitVerifyError, err}
	}
	if *record {
		if err := a.SaveRun(ctx, rep); err != nil {
			fmt.Fprintf(stderr, "pitboss verify: the outcome was not recorded: %v\n", err)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(rep); err != nil {
			return &exitError{exitVerifyError, err}
		}
	} else if err := rep.WriteText(stdout); err != nil {
		return &exitError{exitVerifyError, err}
	}
	if prog != nil {
		prog.PeakMemory()
	}
	if !rep.OK {
		return &exitError{exitVerifyFailed, errVerifyFailed}
	}
	return nil
}
