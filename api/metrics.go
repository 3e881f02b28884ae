package api

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// Metrics is what the HTTP layer reports to the process's metrics
// registry, and the registry's exposition it serves at GET /metrics
// (adapters/metrics implements it with Prometheus; docs/operations.md
// lists the series).
type Metrics interface {
	// ObserveRequest counts one answered request by method, route
	// template, status, error code ("" for none) and duration.
	ObserveRequest(method, route string, status int, code string, took time.Duration)
	// ObserveRateLimited counts one request refused with 429 in tier.
	ObserveRateLimited(tier string)
	// ObserveRateStoreError counts one failure of the shared rate-limit
	// store.
	ObserveRateStoreError()
	// Handler serves the exposition; it logs what it cannot gather to
	// logger.
	Handler(logger *slog.Logger) http.Handler
}

// noMetrics counts nothing and serves an empty exposition: a server built
// without a registry (tests) still answers GET /metrics as documented.
type noMetrics struct{}

func (noMetrics) ObserveRequest(string, string, int, string, time.Duration) {}
func (noMetrics) ObserveRateLimited(string)                                 {}
func (noMetrics) ObserveRateStoreError()                                    {}
func (noMetrics) Handler(*slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	})
}

// metricsMiddleware counts and times every request by its route template
// (never the raw path: ids in paths would make a series per id).
func (s *Server) metricsMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		route := c.Path()
		if route == "" || route == "/*" {
			route = "unmatched"
		}
		status := responseStatus(c, err)
		code := ""
		if status >= 400 && err != nil {
			e, _ := classify(err)
			code = e.Code
		}
		s.metrics.ObserveRequest(c.Request().Method, route, status, code, time.Since(start))
		return err
	}
}

// GET /metrics
func (s *Server) metricsHandler() echo.HandlerFunc {
	return echo.WrapHandler(s.metrics.Handler(s.log))
}
