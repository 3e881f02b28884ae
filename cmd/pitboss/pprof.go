package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	rpprof "runtime/pprof"
	"time"

	"golang.org/x/sync/errgroup"
)

// pprofAddr is PITBOSS_PPROF_ADDR: where serve exposes Go's profiler
// (/debug/pprof/...). Empty, the default, exposes nothing. It is a separate
// listener, never the API's, so profiles are reachable only where the
// operator binds them (loopback, for `make bench`).
func pprofAddr() string { return os.Getenv("PITBOSS_PPROF_ADDR") }

// startPprof serves the profiler on addr until ctx ends.
func startPprof(ctx context.Context, g *errgroup.Group, addr string, log *slog.Logger) error {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("PITBOSS_PPROF_ADDR: listen on %s: %w", addr, err)
	}
	// A CPU profile runs as long as asked (?seconds=N): no write timeout.
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	log.Warn("profiler enabled", "addr", ln.Addr().String())
	g.Go(func() error {
		err := hs.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	})
	g.Go(func() error {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
		return nil
	})
	return nil
}

// startCPUProfile writes a CPU profile to path until stop is called; an
// empty path profiles nothing.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := rpprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		rpprof.StopCPUProfile()
		f.Close()
	}, nil
}
