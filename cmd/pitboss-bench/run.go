package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Report is everything one run measured; results.json holds it as is.
type Report struct {
	Started  time.Time    `json:"started"`
	Finished time.Time    `json:"finished"`
	Machine  Machine      `json:"machine"`
	Config   config       `json:"config"`
	Write    *WriteReport `json:"write,omitempty"`
	Read     *ReadReport  `json:"read,omitempty"`
	Targets  []Target     `json:"targets"`
	Errors   []string     `json:"errors,omitempty"`
}

// Machine describes where the run happened. The load average matters: the
// benchmark shares the machine with whatever else runs on it.
type Machine struct {
	Cores     int     `json:"cores"`
	CPUModel  string  `json:"cpu_model"`
	MemoryGB  float64 `json:"memory_gb"`
	Kernel    string  `json:"kernel"`
	Go        string  `json:"go"`
	Postgres  string  `json:"postgres"`
	LoadStart string  `json:"load_average_start"`
	LoadEnd   string  `json:"load_average_end"`
}

func runAll(ctx context.Context, cfg config) error {
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return err
	}
	logPath := filepath.Join(cfg.Out, "bench.log")
	lf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer lf.Close()
	logf := func(format string, args ...any) {
		line := fmt.Sprintf("%s [load %s] %s", time.Now().UTC().Format("15:04:05"), loadAvg(), fmt.Sprintf(format, args...))
		fmt.Fprintln(os.Stderr, line)
		fmt.Fprintln(lf, line)
	}
	ts := filepath.Base(cfg.Out)
	rep := Report{Started: time.Now().UTC(), Config: cfg, Machine: machine(ctx, cfg.ServerDB)}
	logf("pitboss-bench: %d cores, %s; report in %s (quick: %v)", rep.Machine.Cores, rep.Machine.CPUModel, cfg.Out, cfg.Quick)
	if cfg.Write {
		w, err := runWrite(ctx, cfg, ts, logf)
		if err != nil {
			logf("write benchmark: %v", err)
			rep.Errors = append(rep.Errors, "write: "+err.Error())
		}
		rep.Write = w
	}
	if cfg.Read && ctx.Err() == nil {
		r, err := runRead(ctx, cfg, logf)
		if err != nil {
			logf("read benchmark: %v", err)
			rep.Errors = append(rep.Errors, "read: "+err.Error())
		}
		rep.Read = r
	}
	rep.Finished = time.Now().UTC()
	rep.Machine.LoadEnd = loadAvg()
	rep.Targets = evaluate(rep)
	if err := writeReport(cfg.Out, rep); err != nil {
		return err
	}
	md, _ := os.ReadFile(filepath.Join(cfg.Out, "report.md"))
	fmt.Println(string(md))
	logf("report: %s", filepath.Join(cfg.Out, "report.md"))
	if len(rep.Errors) > 0 {
		return fmt.Errorf("%d part(s) failed: %s", len(rep.Errors), strings.Join(rep.Errors, "; "))
	}
	return nil
}

func machine(ctx context.Context, serverURL string) Machine {
	m := Machine{Cores: runtime.NumCPU(), Go: runtime.Version(), LoadStart: loadAvg()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "MemTotal:"); ok {
				kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
				m.MemoryGB = kb / 1024 / 1024
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if conn, err := pgx.Connect(cctx, serverURL); err == nil {
		_ = conn.QueryRow(cctx, `SHOW server_version`).Scan(&m.Postgres)
		conn.Close(cctx)
	}
	return m
}

func writeReport(dir string, rep Report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), b, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte(markdown(rep)), 0o644); err != nil {
		return err
	}
	for name, svg := range charts(rep) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(svg), 0o644); err != nil {
			return err
		}
	}
	return nil
}
