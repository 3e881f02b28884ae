package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/readstore"
	"github.com/pitboss/pitboss/internal/progress"
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
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	restart := fs.Bool("restart", false, "with --full: start afresh even if an interrupted replay with the same arguments "+
		"could resume from its last completed pass")
	memory := fs.String("memory", formatBytes(cfg.ReplayMemory), "memory budget of the rebuild (MB, GB, MiB, GiB; "+
		"default PITBOSS_REPLAY_MEMORY or 512MB): it rebuilds in position slices of this much, whatever the ledger's size")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the rebuild (Go's pprof format) to this file")
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	stopProfile, err := startCPUProfile(*cpuProfile)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	defer stopProfile()
	if *restart && !*full {
		printUsage(fs, stderr)
		return &exitError{exitUsage, errors.New("replay: --restart belongs to --full (only a full replay resumes)")}
	}
	budget, err := parseBytes(*memory)
	if err != nil {
		printUsage(fs, stderr)
		return &exitError{exitUsage, fmt.Errorf("replay: --memory: %w", err)}
	}
	rebuildGC(budget)
	pool, err := openDatabase(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	rm := readstore.NewReadModels(pool)
	opts := readstore.ReplayOptions{Full: *full, Shadow: true, Examples: *examples, Memory: budget,
		Resumable: *full, Restart: *restart, Fingerprint: replayFingerprint(), Started: func(r readstore.ResumeReport) {
			printResume(stderr, r)
		}}
	var prog *progress.Reporter
	if !*quiet {
		prog = progress.New(stderr, progress.IsTerminal(stderr), cfg.LogFormat, "replay")
		opts.Progress = func(p readstore.ReplayProgress) {
			prog.Update(progress.Step{Phase: "events", Done: p.Events, Total: p.Total, Resumed: p.Resumed,
				Pass: p.Pass, Passes: p.Passes, Elapsed: p.Elapsed, End: p.Done})
		}
	}
	rep, err := rm.Compare(ctx, opts)
	if prog != nil {
		prog.Finish()
	}
	if err != nil {
		if *full {
			fmt.Fprintln(stderr, "pitboss replay: stopped; running the same command again resumes from its last completed pass (--restart starts afresh)")
		}
		return err
	}
	printReport(stdout, rep)
	reportPeakMemory(stdout, "replay")
	if *swap {
		var swopts readstore.SwapOptions
		if prog != nil {
			start := time.Now()
			swopts.Progress = func(done, total int) {
				// Steps: the shadow tables' keys and indexes, then a vacuum each.
				prog.Update(progress.Step{Phase: "swap: keys, indexes, vacuum", Done: int64(done), Total: int64(total),
					Elapsed: time.Since(start), End: done == total})
			}
		}
		sw, err := rm.Swap(ctx, swopts)
		if prog != nil {
			prog.Finish()
		}
		if err != nil {
			return err
		}
		printSwap(stdout, sw)
		return nil
	}
	if rep.Differences() > 0 {
		return errDifferences
	}
	return nil
}

// rebuildGC sets the collector for a rebuild of budget bytes. Unless the
// operator set GOGC or GOMEMLIMIT, the budget becomes the runtime's soft
// memory limit: the rebuild sizes its slices to it, and the collector then
// works harder near it instead of letting the heap double past it. With
// only GOMEMLIMIT set the proportional collector is turned off (GOGC=off)
// and collects only near that limit, as before the slices.
func rebuildGC(budget int64) {
	switch {
	case os.Getenv("GOMEMLIMIT") != "" && os.Getenv("GOGC") == "":
		debug.SetGCPercent(-1)
	case os.Getenv("GOMEMLIMIT") == "" && os.Getenv("GOGC") == "":
		debug.SetMemoryLimit(budget)
	}
}

// parseBytes reads a size: a number of bytes with a unit (KB, MB, GB: powers
// of 1000; KiB, MiB, GiB: of 1024), or without one a number of megabytes.
func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := s, "MB"
	if i >= 0 {
		num, unit = s[:i], strings.TrimSpace(s[i:])
	}
	units := map[string]float64{"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30}
	mult, ok := units[strings.ToUpper(unit)]
	n, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || n <= 0 || n*mult < 16<<20 || n*mult > 1<<50 {
		return 0, fmt.Errorf("%q is not a size of at least 16MiB (like 512MB, 2GiB)", s)
	}
	return int64(n * mult), nil
}

func formatBytes(n int64) string {
	if n%1e6 == 0 {
		return strconv.FormatInt(n/1e6, 10) + "MB"
	}
	return strconv.FormatInt(n, 10) + "B"
}

func printReport(w io.Writer, rep readstore.ReplayReport) {
	rate := float64(rep.Events) / max(rep.Read+rep.Write, time.Millisecond).Seconds()
	fmt.Fprintf(w, "rebuilt from %d events (head position %d, %d dead-lettered) in %d slice(s) (%d late changes), %s: read and apply %s, write shadow %s; %.0f events/s\n",
		rep.Events, rep.Head, rep.Skipped, rep.Slices, rep.LateChanges, (rep.Read + rep.Write).Round(time.Millisecond), rep.Read.Round(time.Millisecond),
		rep.Write.Round(time.Millisecond), rate)
	if rep.Resume.From > 0 {
		fmt.Fprintf(w, "resumed an interrupted replay after its pass %d of %d (position %d)\n", rep.Resume.From, rep.Resume.Passes, rep.Resume.Position)
	}
	mode := "as of the live checkpoints"
	if rep.Full {
		mode = "every event up to the head"
	}
	fmt.Fprintf(w, "compared with the live tables (%s) in %s:\n", mode, rep.Compare.Round(time.Millisecond))
	for _, t := range rep.Tables {
		how := ""
		if t.ByDigest {
			how = "  (equal digests)"
		}
		fmt.Fprintf(w, "  %-13s live %9d  rebuilt %9d  missing %d  extra %d  changed %d%s\n",
			t.Table, t.Live, t.Rebuilt, t.Missing, t.Extra, t.Changed, how)
		for _, ex := range t.Examples {
			fmt.Fprintf(w, "      %s\n", ex)
		}
	}
	fmt.Fprintf(w, "%d differences\n", rep.Differences())
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
