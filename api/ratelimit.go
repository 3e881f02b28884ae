package api

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
)

// Rate limit headers. X-RateLimit-Remaining and X-RateLimit-Reset are the
// spec's; X-RateLimit-Limit is added so a client can see its tier.
const (
	HeaderRateLimit     = "X-RateLimit-Limit"
	HeaderRateRemaining = "X-RateLimit-Remaining"
	HeaderRateReset     = "X-RateLimit-Reset"
)

// rateLimitMiddleware counts the request against its key's window, sets
// the limit headers on whatever the response turns out to be, and answers
// 429 once the window is used up. When the shared store fails the process's
// own window decides: limits degrade to per-process, they never fail the
// request.
func (s *Server) rateLimitMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := s.takeRate(c); err != nil {
			return err
		}
		return next(c)
	}
}

// takeRate counts the request against the window of its key (the
// request's principal), sets the limit headers, and is a 429 once the
// window is used up: the rule of every request a key makes, on /api/v1
// and the signed launch alike.
func (s *Server) takeRate(c echo.Context) error {
	p := wire.Principal(c)
	tier := s.cfg.RateLimits.Tier(p.Plan)
	now := s.now()
	d, err := s.rates.Take(c.Request().Context(), p.KeyID, tier, now)
	if err != nil {
		s.log.WarnContext(c.Request().Context(), "rate limit store failed; counting in this process",
			"error", err, "request_id", wire.RequestID(c))
		s.metrics.ObserveRateStoreError()
		d, _ = s.localRates.Take(c.Request().Context(), p.KeyID, tier, now)
	}
	h := c.Response().Header()
	h.Set(HeaderRateLimit, strconv.Itoa(d.Limit))
	h.Set(HeaderRateRemaining, strconv.Itoa(d.Remaining))
	h.Set(HeaderRateReset, strconv.FormatInt(ceilUnix(d.ResetAt), 10))
	if d.Allowed {
		return nil
	}
	s.metrics.ObserveRateLimited(tier.Name)
	retry := int64(math.Ceil(d.ResetAt.Sub(now).Seconds()))
	if retry < 1 {
		retry = 1
	}
	return &wire.Error{Status: http.StatusTooManyRequests, Code: wire.CodeRateLimited,
		Message: fmt.Sprintf("rate limit of %d requests per %s exceeded for this API key; retry after %d s",
			tier.Limit, tier.Window, retry),
		Details: map[string]any{"retry_after_seconds": retry, "limit": tier.Limit,
			"window_seconds": int64(tier.Window / time.Second), "tier": tier.Name}}
}

// ceilUnix is t in epoch seconds, rounded up: at that second the window has
// certainly ended.
func ceilUnix(t time.Time) int64 {
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return s
}
