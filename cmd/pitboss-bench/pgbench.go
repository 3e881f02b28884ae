package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The baseline: pgbench inserting one event-shaped row per transaction
// (bench/pgbench_insert.sql into the table of bench/pgbench_schema.sql)
// into the same Postgres, at the same concurrency and for the same time
// as the wallet step it is compared with.

// PgbenchResult is one pgbench run.
type PgbenchResult struct {
	Clients  int     `json:"clients"` // connections used (capped)
	TPS      float64 `json:"tps"`
	Failed   int64   `json:"failed"`
	P50ms    float64 `json:"p50_ms"`
	P99ms    float64 `json:"p99_ms"`
	P999ms   float64 `json:"p99_9_ms"`
	CPU      CPUUse  `json:"cpu"`
	Duration float64 `json:"duration_seconds"`
}

// analyzeTables gathers the planner's statistics of every table of the
// database at dbURL.
func analyzeTables(ctx context.Context, dbURL string) error {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `ANALYZE`); err != nil {
		return fmt.Errorf("analyze: %w", err)
	}
	return nil
}

func preparePgbench(ctx context.Context, root, dbURL string) error {
	sql, err := os.ReadFile(filepath.Join(root, "bench", "pgbench_schema.sql"))
	if err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, string(sql)); err != nil {
		return fmt.Errorf("bench/pgbench_schema.sql: %w", err)
	}
	return nil
}

var tpsLine = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)
var failedLine = regexp.MustCompile(`number of failed transactions: ([0-9]+)`)

// runPgbench runs pgbench with clients connections for d. Latencies come
// from its per-transaction log (-l), written into dir.
func runPgbench(ctx context.Context, cfg config, dbURL, dir string, clients int, d time.Duration, watch cpuWatch) (PgbenchResult, error) {
	res := PgbenchResult{Clients: clients}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}
	prefix := filepath.Join(dir, "c"+strconv.Itoa(clients))
	secs := max(int(d.Round(time.Second)/time.Second), 1)
	args := []string{"-n", "-f", filepath.Join(cfg.Root, "bench", "pgbench_insert.sql"), "-c", strconv.Itoa(clients),
		"-j", strconv.Itoa(min(clients, 2)), "-T", strconv.Itoa(secs), "-l", "--log-prefix", prefix, dbURL}
	cmd := exec.CommandContext(ctx, "pgbench", args...)
	cmd.Dir = dir
	span := watch.begin()
	out, err := cmd.CombinedOutput()
	res.CPU = span.stop(watch)
	res.Duration = span.end.at.Sub(span.start.at).Seconds()
	_ = os.WriteFile(prefix+".out", out, 0o644)
	if err != nil {
		return res, fmt.Errorf("pgbench -c %d: %w: %s", clients, err, lastLines(out, 5))
	}
	m := tpsLine.FindSubmatch(out)
	if m == nil {
		return res, fmt.Errorf("pgbench -c %d: no tps in its output: %s", clients, lastLines(out, 5))
	}
	res.TPS, _ = strconv.ParseFloat(string(m[1]), 64)
	if m := failedLine.FindSubmatch(out); m != nil {
		res.Failed, _ = strconv.ParseInt(string(m[1]), 10, 64)
	}
	h := newHist()
	files, _ := filepath.Glob(prefix + ".*")
	for _, f := range files {
		if strings.HasSuffix(f, ".out") {
			continue
		}
		if err := readPgbenchLog(f, func(us int64) { _ = h.RecordValue(max(us, 1)) }); err != nil {
			return res, err
		}
		_ = os.Remove(f) // large, and the histogram keeps what matters
	}
	res.P50ms = float64(h.ValueAtQuantile(50)) / 1000
	res.P99ms = float64(h.ValueAtQuantile(99)) / 1000
	res.P999ms = float64(h.ValueAtQuantile(99.9)) / 1000
	return res, nil
}

// readPgbenchLog reads pgbench's per-transaction log: "client_id
// transaction_no time script_no time_epoch time_us", time being the
// latency in µs (or "failed"/"skipped").
func readPgbenchLog(path string, record func(us int64)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 {
			continue
		}
		if us, err := strconv.ParseInt(fields[2], 10, 64); err == nil {
			record(us)
		}
	}
	return sc.Err()
}
