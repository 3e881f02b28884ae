package api

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
)

// Rate limits: every /api/v1 request of an authenticated key is counted in
// a fixed window of its client's plan tier; see docs/keys-and-admin.md.

// DefaultRateTiers is the default of PITBOSS_RATE_TIERS: requests per window
// per API key, by plan tier.
const DefaultRateTiers = "sandbox:100/60s,standard:1000/60s,enterprise:10000/60s"

// DefaultRateTier is the tier of a client whose plan names no configured
// tier (clients are created on "standard" unless told otherwise).
const DefaultRateTier = "standard"

// Rate limit headers. X-RateLimit-Remaining and X-RateLimit-Reset are the
// spec's; X-RateLimit-Limit is added so a client can see its tier.
const (
	HeaderRateLimit     = "X-RateLimit-Limit"
	HeaderRateRemaining = "X-RateLimit-Remaining"
	HeaderRateReset     = "X-RateLimit-Reset"
)

// RateTier is a plan tier's limit: at most Limit requests per Window per
// API key.
type RateTier struct {
	Name   string
	Limit  int
	Window time.Duration
}

func (t RateTier) String() string { return fmt.Sprintf("%s:%d/%s", t.Name, t.Limit, t.Window) }

// ParseRateTiers reads "name:limit/window,..." such as
// "sandbox:100/60s,standard:1000/1m". Names are lower-cased.
func ParseRateTiers(s string) ([]RateTier, error) {
	var (
		tiers []RateTier
		errs  []error
	)
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, rest, ok1 := strings.Cut(part, ":")
		limit, window, ok2 := strings.Cut(rest, "/")
		name = strings.ToLower(strings.TrimSpace(name))
		n, err := strconv.Atoi(strings.TrimSpace(limit))
		w, werr := time.ParseDuration(strings.TrimSpace(window))
		switch {
		case !ok1 || !ok2 || name == "":
			errs = append(errs, fmt.Errorf("rate tier %q is not name:limit/window", part))
		case err != nil || n < 1:
			errs = append(errs, fmt.Errorf("rate tier %q: limit must be a positive integer", part))
		case werr != nil || w < time.Second:
			errs = append(errs, fmt.Errorf("rate tier %q: window must be a duration of at least 1s, such as 60s", part))
		case slices.ContainsFunc(tiers, func(t RateTier) bool { return t.Name == name }):
			errs = append(errs, fmt.Errorf("rate tier %q is listed twice", name))
		default:
			tiers = append(tiers, RateTier{Name: name, Limit: n, Window: w})
		}
	}
	if len(tiers) == 0 && len(errs) == 0 {
		errs = append(errs, errors.New("no rate tier given"))
	}
	return tiers, errors.Join(errs...)
}

// RateLimits is the plan tiers and the tier of unknown plans.
type RateLimits struct {
	Tiers []RateTier
	// DefaultTier applies to a client whose plan is not in Tiers.
	DefaultTier string
}

func (r *RateLimits) setDefaults() {
	if len(r.Tiers) == 0 {
		r.Tiers, _ = ParseRateTiers(DefaultRateTiers)
	}
	if r.DefaultTier == "" {
		r.DefaultTier = DefaultRateTier
		if _, ok := r.find(r.DefaultTier); !ok {
			r.DefaultTier = r.Tiers[0].Name
		}
	}
}

// Validate reports a default tier that is not configured.
func (r RateLimits) Validate() error {
	c := r
	c.setDefaults()
	if _, ok := c.find(c.DefaultTier); !ok {
		return fmt.Errorf("default rate tier %q is not among the tiers (%s)", c.DefaultTier, strings.Join(c.Names(), ", "))
	}
	return nil
}

func (r RateLimits) find(name string) (RateTier, bool) {
	i := slices.IndexFunc(r.Tiers, func(t RateTier) bool { return t.Name == name })
	if i < 0 {
		return RateTier{}, false
	}
	return r.Tiers[i], true
}

// Names lists the configured tiers.
func (r RateLimits) Names() []string {
	out := make([]string, len(r.Tiers))
	for i, t := range r.Tiers {
		out[i] = t.Name
	}
	return out
}

// Has reports whether plan names a configured tier.
func (r RateLimits) Has(plan string) bool {
	_, ok := r.find(plan)
	return ok
}

// tier is the tier of plan, or the default tier.
func (r RateLimits) tier(plan string) RateTier {
	if t, ok := r.find(plan); ok {
		return t
	}
	t, _ := r.find(r.DefaultTier)
	return t
}

// RateDecision is a key's window after a request was counted in it.
type RateDecision struct {
	Allowed   bool
	Limit     int
	Remaining int
	ResetAt   time.Time // when the window ends and the count starts again
}

// RateStore counts requests per key in fixed windows. A key's window
// starts at its first request after the previous window ended and lasts
// the tier's Window; a request is allowed while the window's count,
// itself included, is at most the tier's Limit.
type RateStore interface {
	Take(ctx context.Context, key string, tier RateTier, now time.Time) (RateDecision, error)
}

// decide turns a window's count into a decision.
func decide(count int, tier RateTier, resetAt time.Time) RateDecision {
	return RateDecision{Allowed: count <= tier.Limit, Limit: tier.Limit, Remaining: max(0, tier.Limit-count), ResetAt: resetAt}
}

// rateLimitMiddleware counts the request against its key's window, sets
// the limit headers on whatever the response turns out to be, and answers
// 429 once the window is used up. When the shared store fails the process's
// own window decides: limits degrade to per-process, they never fail the
// request.
func (s *Server) rateLimitMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		p := principal(c)
		tier := s.cfg.RateLimits.tier(p.Plan)
		now := s.now()
		d, err := s.rates.Take(c.Request().Context(), p.KeyID, tier, now)
		if err != nil {
			s.log.WarnContext(c.Request().Context(), "rate limit store failed; counting in this process",
				"error", err, "request_id", requestID(c))
			s.metrics.ObserveRateStoreError()
			d, _ = s.localRates.Take(c.Request().Context(), p.KeyID, tier, now)
		}
		h := c.Response().Header()
		h.Set(HeaderRateLimit, strconv.Itoa(d.Limit))
		h.Set(HeaderRateRemaining, strconv.Itoa(d.Remaining))
		h.Set(HeaderRateReset, strconv.FormatInt(ceilUnix(d.ResetAt), 10))
		if d.Allowed {
			return next(c)
		}
		s.metrics.ObserveRateLimited(tier.Name)
		retry := int64(math.Ceil(d.ResetAt.Sub(now).Seconds()))
		if retry < 1 {
			retry = 1
		}
		return &Error{Status: http.StatusTooManyRequests, Code: CodeRateLimited,
			Message: fmt.Sprintf("rate limit of %d requests per %s exceeded for this API key; retry after %d s",
				tier.Limit, tier.Window, retry),
			Details: map[string]any{"retry_after_seconds": retry, "limit": tier.Limit,
				"window_seconds": int64(tier.Window / time.Second), "tier": tier.Name}}
	}
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
