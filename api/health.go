package api

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
)

// ReadyCheck is one dependency /readyz checks: Check returns nil when the
// dependency answers. An Optional check is reported but does not make the
// process unready: the API serves without Kafka (the relay catches up
// later), so an API-only process must not leave the load balancer when
// Kafka is down.
type ReadyCheck struct {
	Name     string
	Check    func(ctx context.Context) error
	Optional bool
}

// DefaultReadyTimeout bounds every readiness check.
const DefaultReadyTimeout = 2 * time.Second

type checkView struct {
	OK         bool    `json:"ok"`
	Optional   bool    `json:"optional,omitempty"`
	DurationMS float64 `json:"duration_ms"`
	Error      string  `json:"error,omitempty"`
}

func (s *Server) registerHealthRoutes(e *echo.Echo) {
	// GET /healthz: the process is alive and serving HTTP; it checks
	// nothing else, so a restart is never triggered by a database outage.
	e.GET("/healthz", func(c echo.Context) error { return c.JSON(http.StatusOK, map[string]string{"status": "ok"}) })
	e.GET("/readyz", s.readyz)
	e.GET("/metrics", s.metricsHandler())
}

// GET /readyz: every check (Postgres ping, Kafka metadata) runs at once,
// each within Config.ReadyTimeout. 200 {"status":"ready","checks":{...}}
// when all pass ("degraded" when only optional ones fail), else 503 in the
// one error shape with details.checks and details.failed.
func (s *Server) readyz(c echo.Context) error {
	checks := make(map[string]checkView, len(s.deps.Ready))
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for _, rc := range s.deps.Ready {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(c.Request().Context(), s.cfg.ReadyTimeout)
			defer cancel()
			start := time.Now()
			err := rc.Check(ctx)
			v := checkView{OK: err == nil, Optional: rc.Optional, DurationMS: float64(time.Since(start).Microseconds()) / 1000}
			if err != nil {
				v.Error = err.Error()
			}
			mu.Lock()
			checks[rc.Name] = v
			mu.Unlock()
		}()
	}
	wg.Wait()
	var failed []string
	status := "ready"
	for name, v := range checks {
		switch {
		case v.OK:
		case v.Optional:
			status = "degraded"
		default:
			failed = append(failed, name)
		}
	}
	if len(failed) > 0 {
		slices.Sort(failed)
		return &wire.Error{Status: http.StatusServiceUnavailable, Code: wire.CodeUnavailable, Message: "not ready: a dependency does not answer",
			Details: map[string]any{"checks": checks, "failed": failed}}
	}
	return c.JSON(http.StatusOK, map[string]any{"status": status, "checks": checks})
}
