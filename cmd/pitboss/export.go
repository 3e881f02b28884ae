package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres"
	"github.com/pitboss/pitboss/adapters/postgres/auditstore"
	"github.com/pitboss/pitboss/audit"
)

// export writes events as NDJSON, one audit.Line per line, in position
// order (see docs/audit.md for the format and how to verify it without our
// code).
func export(ctx context.Context, cfg config, args []string, stdout, stderr io.Writer) (err error) {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fromPos := fs.Int64("from-position", 0, "first position to export (inclusive); default the first")
	toPos := fs.Int64("to-position", 0, "last position to export (inclusive); default the head")
	fromT := fs.String("from", "", "export events that occurred at or after this RFC 3339 time")
	toT := fs.String("to", "", "... and before this RFC 3339 time (exclusive)")
	output := fs.String("output", "-", "file to write; - for standard output")
	quiet := fs.Bool("quiet", false, "no summary on stderr")
	checkpoints := fs.String("checkpoints", "", "also write to this file, as NDJSON records, the platform's signed checkpoints "+
		"whose position the export holds (docs/audit.md): each ties a signed chain hash to an exported line")
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	rng := auditstore.ExportRange{FromPosition: *fromPos, ToPosition: *toPos}
	for _, t := range []struct {
		name string
		in   string
		dst  *time.Time
	}{{"--from", *fromT, &rng.From}, {"--to", *toT, &rng.To}} {
		if t.in == "" {
			continue
		}
		if *t.dst, err = time.Parse(time.RFC3339Nano, t.in); err != nil {
			return fmt.Errorf("export: %s must be an RFC 3339 time such as 2025-01-31T00:00:00Z", t.name)
		}
	}

	pool, err := postgres.Connect(ctx, cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	defer pool.Close()

	out := stdout
	if *output != "-" {
		f, err := os.Create(*output)
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		defer func() {
			if cerr := f.Close(); err == nil && cerr != nil {
				err = fmt.Errorf("export: close %s: %w", *output, cerr)
			}
		}()
		out = f
	}
	sum, err := exportTo(ctx, auditstore.NewAudit(pool), rng, out)
	if err != nil {
		return err
	}
	cps := 0
	if *checkpoints != "" {
		if cps, err = exportCheckpoints(ctx, auditstore.NewCheckpoints(pool, nil), sum, *checkpoints); err != nil {
			return err
		}
	}
	if !*quiet {
		if *checkpoints != "" {
			fmt.Fprintf(stderr, "wrote %d signed checkpoints inside the export to %s\n", cps, *checkpoints)
		}
		if sum.Events == 0 {
			fmt.Fprintf(stderr, "exported no events (head position %d)\n", sum.HeadPosition)
		} else {
			fmt.Fprintf(stderr, "exported %d events, positions %d..%d (head position %d)\n  first prev_hash %s\n  last hash       %s\n",
				sum.Events, sum.FirstPosition, sum.LastPosition, sum.HeadPosition,
				hex.EncodeToString(sum.FirstPrevHash), hex.EncodeToString(sum.LastHash))
		}
	}
	return nil
}

// exportTo writes the NDJSON lines to w.
func exportTo(ctx context.Context, a *auditstore.Audit, rng auditstore.ExportRange, w io.Writer) (auditstore.ExportSummary, error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false) // bodies stay readable; any JSON parser returns the same string
	sum, err := a.Export(ctx, rng, func(r audit.Record) error {
		l, err := r.Line()
		if err != nil {
			return err
		}
		return enc.Encode(l)
	})
	if ferr := bw.Flush(); err == nil && ferr != nil {
		err = ferr
	}
	if err != nil {
		return sum, fmt.Errorf("export: %w", err)
	}
	return sum, nil
}

// exportCheckpoints writes to path, one record per line, the platform's
// checkpoints whose position is one of the export's (sum's range), oldest
// first: with the export and the signing key an auditor checks that the
// chain the export holds is the one the service signed.
func exportCheckpoints(ctx context.Context, cps *auditstore.Checkpoints, sum auditstore.ExportSummary, path string) (n int, err error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, fmt.Errorf("export: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("export: close %s: %w", path, cerr)
		}
	}()
	enc := json.NewEncoder(f)
	enc.SetEscapeHTML(false)
	if sum.Events == 0 {
		return 0, nil
	}
	list, err := cps.PlatformCheckpointsIn(ctx, sum.FirstPosition, sum.LastPosition)
	if err != nil {
		return 0, fmt.Errorf("export: %w", err)
	}
	for _, cp := range list {
		if err := enc.Encode(cp.Record()); err != nil {
			return n, fmt.Errorf("export: %w", err)
		}
		n++
	}
	return n, nil
}
