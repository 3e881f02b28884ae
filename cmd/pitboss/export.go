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
	if !*quiet {
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
