package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Rate limits: every /api/v1 request of an authenticated key is counted in
// a fixed window of its client's plan tier; see docs/keys-and-admin.md.

// DefaultRateTiers is the default of PITBOSS_RATE_TIERS: requests per window
// per API key, by plan tier.
const DefaultRateTiers = "sandbox:100/60s,standard:1000/60s,enterprise:10000/60s"

// DefaultRateTier is the tier of a client whose plan names no configured
// tier (clients are created on "standard" unless told otherwise).
const DefaultRateTier = "standard"

// RateTier is a plan tier's limit: at most Limit requests per Window per
// API key.
type RateTier struct {
	Name   string
	Limit  int
	Window time.Duration
}

func (t RateTier) String() string { return fmt.Sprintf("%s:%d/%s", t.Name, t.Limit, t.Window) }

// Decide turns a window's count (this request included) into a decision:
// every RateStore answers the same way for the same count.
func (t RateTier) Decide(count int, resetAt time.Time) RateDecision {
	return RateDecision{Allowed: count <= t.Limit, Limit: t.Limit, Remaining: max(0, t.Limit-count), ResetAt: resetAt}
}

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

// SetDefaults fills in DefaultRateTiers when no tier is given, and the
// default tier: DefaultRateTier when configured, else the first tier.
func (r *RateLimits) SetDefaults() {
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
	c.SetDefaults()
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

// CheckPlan accepts a plan that names a configured tier.
func (r RateLimits) CheckPlan(plan string) error {
	if !r.Has(plan) {
		return &FieldError{Field: "plan",
			Message: "plan " + strconv.Quote(ClipValue(plan)) + " is not a configured tier; tiers are " +
				strings.Join(r.Names(), ", "),
			Details: map[string]any{"tiers": r.Names()}}
	}
	return nil
}

// Tier is the tier of plan, or the default tier.
func (r RateLimits) Tier(plan string) RateTier {
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
// itself included, is at most the tier's Limit. gateway/gatewaytest.RunRateStore
// is the contract every implementation runs.
type RateStore interface {
	Take(ctx context.Context, key string, tier RateTier, now time.Time) (RateDecision, error)
}
