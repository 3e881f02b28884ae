package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/readstore"
)

// errDifferences makes `pitboss replay` exit 1 when the rebuild differs.
var errDifferences = errors.New("the live read models differ from the rebuild")

// replay rebuilds every read model from the event store into the shadow
// schema, compares it with the live tables and prints the differences;
// --swap then makes the rebuild live.
func replay(ctx context.Context, cfg config, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	swap := fs.Bool("swap", false, "swap the rebuilt tables in atomically (whatever the comparison found)")
	full := fs.Bool("full", false, "apply every event up to the head, not just what the live projectors applied; "+
		"differences then include the projectors' lag")
	examples := fs.Int("diffs", 10, "differences listed per table")
	quiet := fs.Bool("quiet", false, "no progress bar")
	passEvents := fs.Int64("pass-events", readstore.DefaultPassEvents, "most events rebuilt in memory at once "+
		"(about 1.2 GB of heap per million); clients are rebuilt in passes of at most this many, a larger client alone")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the rebuild (Go's pprof format) to this file")
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	stopProfile, err := startCPUProfile(*cpuProfile)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	defer stopProfile()
	rebuildGC()
	pool, err := openDatabase(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	rm := readstore.NewReadModels(pool)
	bar := &progressBar{w: stderr}
	if *passEvents < 1 {
		printUsage(fs, stderr)
		return &exitError{exitUsage, errors.New("replay: --pass-events must be at least 1")}
	}
	opts := readstore.ReplayOptions{Full: *full, Shadow: true, Examples: *examples, PassEvents: *passEvents}
	var plog *progressLog
	switch {
	case *quiet:
	case isTerminal(stderr):
		opts.Progress = bar.update
	default:
		plog = newProgressLog(stderr, "replay")
		opts.Progress = func(p readstore.ReplayProgress) {
			plog.update(progressStep{Phase: "events", Done: p.Events, Total: p.Total, Elapsed: p.Elapsed, End: p.Done})
		}
	}
	rep, err := rm.Compare(ctx, opts)
	if plog != nil {
		plog.finish()
	}
	if err != nil {
		return err
	}
	printReport(stdout, rep)
	if *swap {
		sw, err := rm.Swap(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "swapped the rebuilt read models in (%d events the projectors applied meanwhile were caught up)\n", sw.CaughtUp)
		return nil
	}
	if rep.Differences() > 0 {
		return errDifferences
	}
	return nil
}

// rebuildGC turns the proportional garbage collector off (GOGC=off) when
// the operator set a memory limit (GOMEMLIMIT) and no GOGC: nearly all a
// rebuild allocates stays live until its pass ends, so collecting each time
// the heap doubles marks the same growing heap again and again; with a
// limit the collector runs only as the heap nears it. Measured on the
// 10-million-event benchmark store with GOMEMLIMIT=14GiB: the collector's
// CPU 81 → 33 s, the same peak memory. Without a limit nothing changes:
// GOGC=off alone would grow without bound.
func rebuildGC() {
	if os.Getenv("GOMEMLIMIT") != "" && os.Getenv("GOGC") == "" {
		debug.SetGCPercent(-1)
	}
}

func printReport(w io.Writer, rep readstore.ReplayReport) {
	rate := float64(rep.Events) / max(rep.Read+rep.Write, time.Millisecond).Seconds()
	fmt.Fprintf(w, "rebuilt from %d events (head position %d, %d dead-lettered) in %d pass(es), %s: read and apply %s, write shadow %s; %.0f events/s\n",
		rep.Events, rep.Head, rep.Skipped, rep.Passes, (rep.Read + rep.Write).Round(time.Millisecond), rep.Read.Round(time.Millisecond),
		rep.Write.Round(time.Millisecond), rate)
	mode := "as of the live checkpoints"
	if rep.Full {
		mode = "every event up to the head"
	}
	fmt.Fprintf(w, "compared with the live tables (%s) in %s:\n", mode, rep.Compare.Round(time.Millisecond))
	for _, t := range rep.Tables {
		fmt.Fprintf(w, "  %-13s live %9d  rebuilt %9d  missing %d  extra %d  changed %d\n",
			t.Table, t.Live, t.Rebuilt, t.Missing, t.Extra, t.Changed)
		for _, ex := range t.Examples {
			fmt.Fprintf(w, "      %s\n", ex)
		}
	}
	fmt.Fprintf(w, "%d differences\n", rep.Differences())
}

// progressBar draws the rebuild's progress on one line of stderr.
type progressBar struct {
	w    io.Writer
	last int
}

func (b *progressBar) update(p readstore.ReplayProgress) {
	const width = 30
	frac := 1.0
	if p.Total > 0 {
		frac = min(float64(p.Events)/float64(p.Total), 1)
	}
	rate := float64(p.Events) / max(p.Elapsed, time.Millisecond).Seconds()
	eta := "--"
	if d, ok := (progressStep{Done: p.Events, Total: p.Total, Elapsed: p.Elapsed}).eta(); ok {
		eta = d.Round(time.Second).String()
	}
	filled := int(frac * width)
	line := fmt.Sprintf("\r[%s%s] %3.0f%% %d/%d events  %.0f events/s  ETA %s", strings.Repeat("=", filled),
		strings.Repeat(" ", width-filled), frac*100, p.Events, p.Total, rate, eta)
	pad := max(b.last-len(line), 0)
	b.last = len(line)
	fmt.Fprint(b.w, line+strings.Repeat(" ", pad))
	if p.Done {
		fmt.Fprintln(b.w)
	}
}

// seedEvents is the hidden `pitboss seed-events`: it fills an empty event
// store with a generated ledger for benchmarks (see eventstore.SeedEvents).
func seedEvents(ctx context.Context, cfg config, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("seed-events", flag.ContinueOnError)
	n := fs.Int("events", 1_000_000, "events to generate")
	clients := fs.Int("clients", 3, "clients")
	players := fs.Int("players", 2000, "players per client")
	seed := fs.Uint64("seed", 1, "random seed")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the generator (Go's pprof format) to this file")
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	stopProfile, err := startCPUProfile(*cpuProfile)
	if err != nil {
		return fmt.Errorf("seed-events: %w", err)
	}
	defer stopProfile()
	pool, err := openDatabase(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	res, err := eventstore.SeedEvents(ctx, pool, eventstore.SeedOptions{Events: *n, Clients: *clients,
		PlayersPerClient: *players, Seed: *seed})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %d events (head %d) in %s: %.0f events/s\n", res.Events, res.Head,
		res.Took.Round(time.Millisecond), float64(res.Events)/res.Took.Seconds())
	return nil
}
