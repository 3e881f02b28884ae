package main

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The moderate step (issue 38): an open loop at a fixed, modest rate
// (BENCH_MODERATE_RATE, 250 wallet calls/s), where operators live and a
// ledger batch holds one or two operations, so every per-batch cost is
// paid per call. Around it the benchmark takes what each component spent:
// the processes' CPU (as every step), the service's CPU by role (its
// goroutines carry a profiler label, `pitboss serve`'s asRole) and each
// Postgres statement's calls and time (pg_stat_statements, where the
// server preloads it: scripts/postgres-up.sh does).

// StatementCost is one statement's share of the moderate step.
type StatementCost struct {
	Query        string  `json:"query"`
	Calls        int64   `json:"calls"`
	PerCall      float64 `json:"calls_per_wallet_call"`
	MeanMs       float64 `json:"mean_ms"`
	TotalMs      float64 `json:"total_ms"`
	MsPerCall    float64 `json:"ms_per_wallet_call"`
	WALBytes     int64   `json:"wal_bytes"`
	BlocksDirty  int64   `json:"shared_blocks_dirtied"`
	RowsAffected int64   `json:"rows"`
}

// RoleCPU is a role's share of the service's CPU in the step's profile.
type RoleCPU struct {
	Role    string  `json:"role"`
	Share   float64 `json:"share"`       // of the profile's samples
	Cores   float64 `json:"cores"`       // Share × the service's cores
	PerCall float64 `json:"us_per_call"` // µs per wallet call
}

// statementStats resets pg_stat_statements in db before a step and reads
// it after. A server that does not preload the module gives no rows and a
// note that says so.
type statementStats struct {
	url  string
	note string
}

func startStatements(ctx context.Context, dbURL string) *statementStats {
	s := &statementStats{url: dbURL}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		s.note = "pg_stat_statements: " + err.Error()
		return s
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var loaded bool
	if err := conn.QueryRow(ctx, `SELECT 'pg_stat_statements' = ANY(string_to_array(current_setting('shared_preload_libraries'), ', '))`).
		Scan(&loaded); err != nil || !loaded {
		s.note = "pg_stat_statements is not preloaded by this server (scripts/postgres-up.sh sets it; restart Postgres to load it)"
		return s
	}
	if _, err := conn.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`); err != nil {
		s.note = "pg_stat_statements: " + err.Error()
		return s
	}
	if _, err := conn.Exec(ctx, `SELECT pg_stat_statements_reset()`); err != nil {
		s.note = "pg_stat_statements: " + err.Error()
	}
	return s
}

// read returns the statements of the step's database by total time, the
// costliest first (at most 25), per wallet call of calls.
func (s *statementStats) read(ctx context.Context, calls int64) ([]StatementCost, string) {
	if s.note != "" {
		return nil, s.note
	}
	conn, err := pgx.Connect(ctx, s.url)
	if err != nil {
		return nil, "pg_stat_statements: " + err.Error()
	}
	defer conn.Close(context.WithoutCancel(ctx))
	rows, err := conn.Query(ctx, `
SELECT regexp_replace(query, '\s+', ' ', 'g'), calls, total_exec_time, wal_bytes::bigint, shared_blks_dirtied, rows
  FROM pg_stat_statements
 WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
 ORDER BY total_exec_time DESC LIMIT 25`)
	if err != nil {
		return nil, "pg_stat_statements: " + err.Error()
	}
	var out []StatementCost
	var c StatementCost
	if _, err := pgx.ForEachRow(rows, []any{&c.Query, &c.Calls, &c.TotalMs, &c.WALBytes, &c.BlocksDirty, &c.RowsAffected}, func() error {
		if c.Calls > 0 {
			c.MeanMs = c.TotalMs / float64(c.Calls)
		}
		if calls > 0 {
			c.PerCall = float64(c.Calls) / float64(calls)
			c.MsPerCall = c.TotalMs / float64(calls)
		}
		out = append(out, c)
		return nil
	}); err != nil {
		return nil, "pg_stat_statements: " + err.Error()
	}
	return out, ""
}

// roleShares reads `go tool pprof -tags` of a CPU profile: each role
// label's share of the samples (the unlabelled rest is "other": the
// runtime's own goroutines, pgx's pool, the profiler).
func roleShares(ctx context.Context, binary, profile string) ([]RoleCPU, error) {
	out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-tags", binary, profile).Output()
	if err != nil {
		return nil, fmt.Errorf("go tool pprof -tags: %w", err)
	}
	roles := parseRoleTags(string(out))
	if roles == nil {
		return nil, fmt.Errorf("no role labels in the profile")
	}
	return roles, nil
}

var (
	// " role: Total 90ms of 100ms (90.00%)"
	tagHeader = regexp.MustCompile(`^\s*(\S+): Total ([0-9.]+)(ns|us|µs|ms|s|m|h)? of ([0-9.]+)(ns|us|µs|ms|s|m|h)?`)
	// "       50ms (50.00%): relay"
	tagLine = regexp.MustCompile(`^\s*([0-9.]+)(ns|us|µs|ms|s|m|h)?\s+\(\s*[0-9.]+%\):\s*(\S+)\s*$`)
)

// parseRoleTags reads the "role" block of pprof's -tags output.
func parseRoleTags(out string) []RoleCPU {
	var roles []RoleCPU
	in := false
	var labelled, total float64
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if h := tagHeader.FindStringSubmatch(sc.Text()); h != nil {
			in = h[1] == "role"
			if in {
				total = seconds(h[4], h[5])
			}
			continue
		}
		m := tagLine.FindStringSubmatch(sc.Text())
		if !in || m == nil || total <= 0 {
			continue
		}
		secs := seconds(m[1], m[2])
		labelled += secs
		roles = append(roles, RoleCPU{Role: m[3], Share: secs / total})
	}
	if len(roles) > 0 && total > labelled {
		roles = append(roles, RoleCPU{Role: "other", Share: (total - labelled) / total})
	}
	return roles
}

// seconds reads a pprof duration ("1.20s", "500ms"); 0 when it does not
// read.
func seconds(v, unit string) float64 {
	d, err := time.ParseDuration(v + unit)
	if err != nil {
		return 0
	}
	return d.Seconds()
}

// moderateStep runs the open loop at cfg.ModerateRate with the
// statements and the service's roles measured around it.
func moderateStep(ctx context.Context, cfg config, svc *service, dbURL string, run func() WalletStep, logf func(string, ...any)) WalletStep {
	logf("write: open loop at a moderate %.0f calls/s for %s", cfg.ModerateRate, cfg.Duration)
	stmts := startStatements(ctx, dbURL)
	var prof chan string
	if cfg.Profile && svc.pprof != "" {
		prof = make(chan string, 1)
		go func() { prof <- takeProfile(ctx, cfg, svc, "cpu-moderate") }()
	}
	step := run()
	step.Mode, step.TargetRate = "moderate", cfg.ModerateRate
	step.Statements, step.StatementsNote = stmts.read(ctx, step.OK)
	if prof != nil && <-prof != "" {
		roles, err := roleShares(ctx, cfg.Pitboss, cfg.Out+"/cpu-moderate.pprof")
		if err != nil {
			logf("write: the service's CPU by role: %v", err)
		}
		for i := range roles {
			roles[i].Cores = roles[i].Share * step.CPU.Service
			if step.CallsPerSec > 0 {
				roles[i].PerCall = roles[i].Cores / step.CallsPerSec * 1e6
			}
		}
		step.Roles = roles
	}
	service, _ := usPerCall(step, 0)
	logf("write: moderate %.0f: %.0f calls/s, p99 %.1f ms; system CPU %.2f ms a call (service %.0f µs); relay lag p99 %.0f ms, projection p99 %.0f ms; %.1f ops/batch",
		cfg.ModerateRate, step.CallsPerSec, step.Latency["all"].P99, step.systemMsPerCall(), service,
		step.Lag.Relay.P99ms, step.Lag.ProjectionBalances.P99ms, step.Ledger.OpsPerBatch)
	return step
}

// systemMsPerCall is the machine's CPU less the load generator's per
// wallet call, in ms (issue 38's "system CPU per call": service, its
// Postgres and Kafka, and whatever else the machine ran).
func (s WalletStep) systemMsPerCall() float64 {
	if s.CallsPerSec <= 0 {
		return 0
	}
	return (s.CPU.MachineBusy - s.CPU.LoadGenerator) / s.CallsPerSec * 1e3
}

// ownMsPerCall is the same from the processes measured: service, its
// Postgres backends, Postgres's shared processes and Kafka.
func (s WalletStep) ownMsPerCall() float64 {
	if s.CallsPerSec <= 0 {
		return 0
	}
	c := s.CPU
	return (c.Service + c.PostgresBench + c.PostgresOwn + c.Kafka) / s.CallsPerSec * 1e3
}

// moderateTables writes the moderate step's service CPU by role and its
// costliest statements.
func moderateTables(w func(string, ...any), s WalletStep) {
	if s.Mode != "moderate" {
		return
	}
	if len(s.Roles) > 0 {
		w("\n### The service's CPU by role at %s (its profile's labels)\n\n", stepName(s))
		w("| role | share | cores | µs per call |\n|---|---|---|---|\n")
		for _, r := range s.Roles {
			w("| %s | %.0f %% | %.3f | %.0f |\n", r.Role, 100*r.Share, r.Cores, r.PerCall)
		}
	}
	w("\n### Postgres statements at %s (pg_stat_statements, the costliest by time)\n\n", stepName(s))
	if s.StatementsNote != "" {
		w("%s.\n", s.StatementsNote)
		return
	}
	w("| statement | calls per wallet call | mean ms | ms per wallet call | WAL bytes | rows |\n|---|---|---|---|---|---|\n")
	for _, c := range s.Statements {
		q := c.Query
		if len(q) > 110 {
			q = q[:110] + "…"
		}
		w("| `%s` | %.2f | %.3f | %.3f | %d | %d |\n", strings.ReplaceAll(q, "|", "\\|"), c.PerCall, c.MeanMs, c.MsPerCall, c.WALBytes, c.RowsAffected)
	}
}
