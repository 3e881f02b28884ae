// Command pitboss-bench is Pitboss's reproducible benchmark (`make bench`,
// docs/benchmarks.md). It drives a real `pitboss serve` — every role, on
// its own database and Kafka topic — over the provider wallet protocol and
// measures throughput, latency, relay and projection lag, CPU and memory,
// with pgbench's single-row insert on the same Postgres as the baseline;
// then it loads a large generated ledger and times the read side.
//
//	pitboss-bench [run]              the whole benchmark (settings: BENCH_* variables, flags)
//	pitboss-bench seed -events N     only the generator: fill the empty event store at PITBOSS_DATABASE_URL
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres"
	"github.com/pitboss/pitboss/providersim"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pitboss-bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	cmd := "run"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "run":
		cfg, err := loadConfig(args)
		if err != nil {
			return err
		}
		return runAll(ctx, cfg)
	case "seed":
		return seedCommand(ctx, args)
	}
	return fmt.Errorf("unknown command %q (commands: run, seed)", cmd)
}

// config is every setting of a run. Each flag's default comes from its
// BENCH_* variable; the infrastructure comes from the PITBOSS_* variables
// of scripts/env.sh.
type config struct {
	Quick    bool          `json:"quick"`
	Duration time.Duration `json:"step_duration_ns"`
	Steps    []int         `json:"steps"`
	// Rate is the open-loop step's target in wallet calls/s; 0: 70 % of
	// the best closed-loop step's throughput.
	Rate float64 `json:"open_loop_rate"`
	// ModerateRate is the moderate step's fixed open-loop rate in wallet
	// calls/s (issue 38: where operators live); 0 skips it.
	ModerateRate float64 `json:"moderate_open_loop_rate"`
	Players      int     `json:"players"`
	Events       int     `json:"read_events"`
	Samples      int     `json:"read_samples"`
	// PgbenchMaxClients caps pgbench's connections (max_connections is
	// 200 on the local server, shared with everyone's tests).
	PgbenchMaxClients int  `json:"pgbench_max_clients"`
	Write             bool `json:"write"`
	Read              bool `json:"read"`
	Profile           bool `json:"profile"`
	Pgbench           bool `json:"pgbench"`
	// Keep leaves the read benchmark's database (tens of GB at 10M
	// events) in place after the run; by default it is dropped.
	Keep     bool   `json:"keep_read_database"`
	LogLevel string `json:"service_log_level"`
	// Roles is the write side's `pitboss serve --roles` (BENCH_ROLES);
	// empty runs every role. Without the projector the projection lags
	// are not measured: the wallet path alone, for diagnosis.
	Roles string `json:"service_roles,omitempty"`
	// Protocol is the wallet protocol the load generator speaks
	// (BENCH_PROTOCOL): pitboss (ours, the default) or any other protocol
	// the simulator speaks (providersim.Protocols: the registry's). The
	// demo provider is moved to it before the service starts.
	Protocol string `json:"wallet_protocol"`
	// PoolMaxConns, when set, is the service's pgx pool size
	// (pool_max_conns in its database URL); 0 keeps pgx's default.
	PoolMaxConns int `json:"service_pool_max_conns"`
	// BatchMax is PITBOSS_BATCH_MAX for the service; 0 keeps its default.
	BatchMax int `json:"service_batch_max"`
	// Seamless runs the seamless step after the ledger-mode steps
	// (BENCH_SKIP_SEAMLESS=1 skips it): the same steps with the client in
	// seamless mode over `pitboss operator-sim`, which answers every call
	// after OperatorLatency (BENCH_OPERATOR_LATENCY, 5ms).
	Seamless        bool          `json:"seamless"`
	OperatorLatency time.Duration `json:"operator_latency_ns"`
	// SeamlessRate is the rate of the open-loop step run in both modes
	// (BENCH_SEAMLESS_RATE); 0: 70 % of the best seamless closed-loop
	// step's throughput.
	SeamlessRate float64 `json:"seamless_open_loop_rate"`

	Out      string   `json:"-"`
	Root     string   `json:"-"`
	Pitboss  string   `json:"-"`
	ServerDB string   `json:"-"` // PITBOSS_DATABASE_URL: the server, and the database to connect to for CREATE DATABASE
	Brokers  []string `json:"-"`
	WriteDB  string   `json:"write_database"`
	ReadDB   string   `json:"read_database"`
}

func envOr(name, def string) string {
	if v := strings.TrimSpace(os.Getenv(name)); v != "" {
		return v
	}
	return def
}

func envBool(name string, def bool) bool {
	v, err := strconv.ParseBool(envOr(name, strconv.FormatBool(def)))
	if err != nil {
		return def
	}
	return v
}

func loadConfig(args []string) (config, error) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	quick := envBool("BENCH_QUICK", false)
	defDur, defEvents, defSamples := "20s", 10_000_000, 200
	if quick {
		defDur, defEvents, defSamples = "3s", 200_000, 50
	}
	root, _ := os.Getwd()
	c := config{Quick: quick}
	dur := fs.String("duration", envOr("BENCH_DURATION", defDur), "length of each load step (BENCH_DURATION)")
	steps := fs.String("steps", envOr("BENCH_STEPS", "1,16,64,256"), "closed-loop concurrencies (BENCH_STEPS)")
	fs.Float64Var(&c.Rate, "rate", atof(envOr("BENCH_RATE", "0")), "open-loop target in wallet calls/s; 0: 70% of the best closed-loop step (BENCH_RATE)")
	fs.Float64Var(&c.ModerateRate, "moderate-rate", atof(envOr("BENCH_MODERATE_RATE", "250")), "the moderate step's fixed open-loop rate in wallet calls/s, after the other steps; 0 skips it (BENCH_MODERATE_RATE)")
	fs.IntVar(&c.Players, "players", atoi(envOr("BENCH_PLAYERS", "3000")), "players preloaded with a balance and a session (BENCH_PLAYERS)")
	fs.IntVar(&c.Events, "events", atoi(envOr("BENCH_EVENTS", strconv.Itoa(defEvents))), "events generated for the read side (BENCH_EVENTS)")
	fs.IntVar(&c.Samples, "samples", atoi(envOr("BENCH_READ_SAMPLES", strconv.Itoa(defSamples))), "calls per read query (BENCH_READ_SAMPLES)")
	fs.IntVar(&c.PgbenchMaxClients, "pgbench-max-clients", atoi(envOr("BENCH_PGBENCH_MAX_CLIENTS", "100")), "most pgbench connections (BENCH_PGBENCH_MAX_CLIENTS)")
	fs.BoolVar(&c.Write, "write", !envBool("BENCH_SKIP_WRITE", false), "run the wallet (write side) benchmark; BENCH_SKIP_WRITE=1 skips it")
	fs.BoolVar(&c.Read, "read", !envBool("BENCH_SKIP_READ", false), "run the read side benchmark; BENCH_SKIP_READ=1 skips it")
	fs.BoolVar(&c.Pgbench, "pgbench", !envBool("BENCH_SKIP_PGBENCH", false), "run the pgbench baseline after each step; BENCH_SKIP_PGBENCH=1 skips it (A/B runs)")
	fs.BoolVar(&c.Seamless, "seamless", !envBool("BENCH_SKIP_SEAMLESS", false), "run the seamless step after the ledger-mode steps; BENCH_SKIP_SEAMLESS=1 skips it")
	fs.Float64Var(&c.SeamlessRate, "seamless-rate", atof(envOr("BENCH_SEAMLESS_RATE", "0")), "the seamless step's open-loop rate, run in both modes; 0: 70% of the best seamless closed-loop step (BENCH_SEAMLESS_RATE)")
	opLatency := fs.String("operator-latency", envOr("BENCH_OPERATOR_LATENCY", "5ms"), "the operator simulator's added latency per wallet call in the seamless step (BENCH_OPERATOR_LATENCY)")
	fs.BoolVar(&c.Keep, "keep", envBool("BENCH_KEEP", false), "keep the read database after the run (BENCH_KEEP)")
	fs.BoolVar(&c.Profile, "profile", envBool("BENCH_PROFILE", true), "take a CPU profile of the service during the 64 step (BENCH_PROFILE)")
	fs.StringVar(&c.Protocol, "protocol", envOr("BENCH_PROTOCOL", "pitboss"), "the wallet protocol the load speaks: "+strings.Join(providersim.Protocols, ", ")+" (BENCH_PROTOCOL)")
	fs.StringVar(&c.Roles, "roles", envOr("BENCH_ROLES", ""), "the write side's `pitboss serve --roles`; empty: every role. Without projector, no projection lag (BENCH_ROLES)")
	fs.StringVar(&c.LogLevel, "log-level", envOr("BENCH_LOG_LEVEL", "warn"), "the service's PITBOSS_LOG_LEVEL (BENCH_LOG_LEVEL)")
	fs.IntVar(&c.PoolMaxConns, "pool-max-conns", atoi(envOr("BENCH_POOL_MAX_CONNS", "0")), "the service's pgx pool size; 0: pgx's default (BENCH_POOL_MAX_CONNS)")
	fs.IntVar(&c.BatchMax, "batch-max", atoi(envOr("BENCH_BATCH_MAX", "0")), "the service's PITBOSS_BATCH_MAX; 0: its default (BENCH_BATCH_MAX)")
	fs.StringVar(&c.Out, "out", envOr("BENCH_OUT", ""), "report folder; default out/bench/<timestamp> (BENCH_OUT)")
	fs.StringVar(&c.Root, "root", envOr("PITBOSS_ROOT", root), "the repository (for bench/*.sql)")
	fs.StringVar(&c.Pitboss, "pitboss", envOr("BENCH_PITBOSS", "bin/pitboss"), "the pitboss binary to benchmark (BENCH_PITBOSS)")
	fs.StringVar(&c.WriteDB, "db", envOr("BENCH_DB", "pitboss_bench"), "database of the wallet benchmark, dropped and recreated (BENCH_DB)")
	fs.StringVar(&c.ReadDB, "read-db", envOr("BENCH_READ_DB", "pitboss_bench_read"), "database of the read benchmark, dropped and recreated (BENCH_READ_DB)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	var errs []error
	var err error
	if c.Duration, err = time.ParseDuration(*dur); err != nil || c.Duration < time.Second {
		errs = append(errs, fmt.Errorf("duration %q: want a duration of at least 1s", *dur))
	}
	if c.OperatorLatency, err = time.ParseDuration(*opLatency); err != nil || c.OperatorLatency < 0 {
		errs = append(errs, fmt.Errorf("operator-latency %q: want a duration, 0 or more", *opLatency))
	}
	for _, s := range strings.Split(*steps, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 4096 {
			errs = append(errs, fmt.Errorf("steps: %q is not a concurrency from 1 to 4096", s))
			continue
		}
		c.Steps = append(c.Steps, n)
	}
	c.ServerDB = os.Getenv("PITBOSS_DATABASE_URL")
	if c.ServerDB == "" {
		errs = append(errs, errors.New("PITBOSS_DATABASE_URL is not set (source scripts/env.sh, or run `make bench`)"))
	}
	for _, b := range strings.Split(envOr("PITBOSS_KAFKA_BROKERS", ""), ",") {
		if b = strings.TrimSpace(b); b != "" {
			c.Brokers = append(c.Brokers, b)
		}
	}
	if c.Write && len(c.Brokers) == 0 {
		errs = append(errs, errors.New("PITBOSS_KAFKA_BROKERS is not set"))
	}
	for _, db := range []string{c.WriteDB, c.ReadDB} {
		// The benchmark drops these: never let it near a database that
		// is not obviously its own.
		if !strings.HasPrefix(db, "pitboss_bench") || strings.Trim(db, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
			errs = append(errs, fmt.Errorf("database %q: the benchmark only drops databases named pitboss_bench[a-z0-9_]*", db))
		}
	}
	if !slices.Contains(providersim.Protocols, c.Protocol) {
		errs = append(errs, fmt.Errorf("protocol %q is not one of %s", c.Protocol, strings.Join(providersim.Protocols, ", ")))
	}
	if c.WriteDB == c.ReadDB {
		errs = append(errs, errors.New("the write and read databases must differ"))
	}
	if c.Players < 1 || c.Events < 1000 || c.Samples < 1 || c.PgbenchMaxClients < 1 {
		errs = append(errs, errors.New("players, samples and pgbench-max-clients must be positive, events at least 1000"))
	}
	if c.Out == "" {
		c.Out = filepath.Join(c.Root, "out", "bench", time.Now().UTC().Format("20060102T150405Z"))
	}
	if !filepath.IsAbs(c.Out) {
		// pgbench writes its logs from another working directory.
		c.Out = filepath.Join(c.Root, c.Out)
	}
	if !filepath.IsAbs(c.Pitboss) {
		c.Pitboss = filepath.Join(c.Root, c.Pitboss)
	}
	return c, errors.Join(errs...)
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

func atof(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return -1
	}
	return f
}

// seedCommand is `pitboss-bench seed`: the generator alone, on the empty
// (migrated) database at PITBOSS_DATABASE_URL.
func seedCommand(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("seed", flag.ContinueOnError)
	var o seedOptions
	fs.IntVar(&o.Events, "events", 1_000_000, "events to generate")
	fs.IntVar(&o.Players, "players", 0, "players in all; default events/1000")
	fs.IntVar(&o.Clients, "clients", 3, "operators")
	fs.Uint64Var(&o.Seed, "seed", 1, "random seed: same seed, same ledger")
	if err := fs.Parse(args); err != nil {
		return err
	}
	url := os.Getenv("PITBOSS_DATABASE_URL")
	if url == "" {
		return errors.New("PITBOSS_DATABASE_URL is not set")
	}
	pool, err := postgres.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	if _, err := postgres.Migrate(ctx, pool); err != nil {
		return err
	}
	o.Progress = func(n int) { fmt.Fprintf(os.Stderr, "\r%d events", n) }
	res, err := seedLedger(ctx, pool, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "\nwrote %d events and %d accounts in %s (copy %s, indexes %s): %.0f events/s\n", res.Events,
		res.Accounts, res.Took.Round(time.Millisecond), res.Copy.Round(time.Millisecond), res.Index.Round(time.Millisecond),
		float64(res.Events)/res.Took.Seconds())
	return nil
}
