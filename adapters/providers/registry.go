// Package providers launches games at game providers. The Registry picks
// the adapter of a provider's kind (demo, json, form-xml, caleta,
// evolution, redtiger), which turns our
// launch request into the provider's own format and its answer back into a
// game address; it tries the provider's endpoints in turn (failover), bounds
// each call with the provider's timeout, and keeps a circuit breaker per
// endpoint (github.com/sony/gobreaker/v2). A kind whose provider has a
// round-detail call (caleta) also asks it for the address of its own page
// of a round, through the same endpoints and breakers (rounds.go). See
// docs/providers-and-games.md.
package providers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/pitboss/pitboss/gateway"
)

// Config configures a Registry.
type Config struct {
	// PublicURL is where players reach Pitboss: the built-in demo game's
	// page is served there.
	PublicURL string
	// HTTPClient makes the outbound launch calls. The default follows no
	// redirects; per-call timeouts come from each provider's settings.
	HTTPClient *http.Client
	// NotConfiguredRetryAfter is the Retry-After of a launch through a
	// provider whose settings are unusable. Default one minute.
	NotConfiguredRetryAfter time.Duration
	Logger                  *slog.Logger
	// Now is the breakers' clock: an open breaker half-opens once its
	// cooldown has passed on it. Default time.Now.
	Now func() time.Time
}

func (c *Config) setDefaults() {
	if c.HTTPClient == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 16
		c.HTTPClient = &http.Client{Transport: t,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if c.NotConfiguredRetryAfter == 0 {
		c.NotConfiguredRetryAfter = time.Minute
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Validate reports every problem of the configuration.
func (c Config) Validate() error {
	var errs []error
	u, err := url.Parse(c.PublicURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("public URL %q is not an absolute http(s) URL", c.PublicURL))
	}
	if c.NotConfiguredRetryAfter < 0 {
		errs = append(errs, errors.New("NotConfiguredRetryAfter must not be negative"))
	}
	return errors.Join(errs...)
}

// adapter speaks one kind of provider launch protocol against one
// endpoint. It returns the game address; a refusal by the provider is an
// *gateway.ProviderRejectedError, any other error is the endpoint's failure.
type adapter interface {
	launch(ctx context.Context, client *http.Client, endpoint string, route gateway.ProviderRoute, req gateway.LaunchRequest) (string, error)
}

// Registry launches games through the adapter of each provider's kind. It
// is safe for concurrent use; breakers live as long as the Registry.
type Registry struct {
	cfg      Config
	log      *slog.Logger
	demo     demoAdapter
	adapters map[string]adapter

	mu       sync.Mutex
	breakers map[string]*endpointBreaker // provider id + "\n" + endpoint
	turns    map[string]*atomic.Uint64   // round-robin position per provider
}

var _ gateway.Launcher = (*Registry)(nil)

// NewRegistryWithConfig returns a registry with the built-in adapters.
func NewRegistryWithConfig(cfg Config) (*Registry, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("provider registry: %w", err)
	}
	return &Registry{
		cfg: cfg, log: cfg.Logger, demo: demoAdapter{publicURL: cfg.PublicURL},
		adapters: map[string]adapter{gateway.ProviderKindJSON: jsonAdapter{}, gateway.ProviderKindFormXML: formXMLAdapter{},
			gateway.ProviderKindCaleta: &caletaAdapter{}, gateway.ProviderKindEvolution: evolutionAdapter{},
			gateway.ProviderKindRedTiger: redTigerAdapter{}},
		breakers: map[string]*endpointBreaker{}, turns: map[string]*atomic.Uint64{},
	}, nil
}

// Launch asks the provider for the game address, trying its endpoints in
// turn. Endpoints whose breaker is open are skipped without a call.
func (r *Registry) Launch(ctx context.Context, route gateway.ProviderRoute, req gateway.LaunchRequest) (string, error) {
	if err := r.usable(route); err != nil {
		return "", err
	}
	if !route.Outbound() {
		return r.demo.gameURL(req), nil
	}
	ad := r.adapters[route.Kind]
	return r.failover(ctx, route, "launch", func(ctx context.Context, endpoint string) (string, error) {
		return ad.launch(ctx, r.cfg.HTTPClient, endpoint, route, req)
	})
}

// failover makes one call (what: "launch", "round detail") at the route's
// endpoints in turn until one serves it: every call to a provider goes
// through the same endpoints, timeouts and per-endpoint breakers, so an
// endpoint that fails launches is skipped for round details too.
// Endpoints whose breaker is open are skipped without a call; a refusal
// ends the turn (the endpoint is healthy, and another would refuse too).
func (r *Registry) failover(ctx context.Context, route gateway.ProviderRoute, what string,
	call func(ctx context.Context, endpoint string) (string, error)) (string, error) {
	var failures []gateway.EndpointFailure
	for _, i := range r.order(route) {
		endpoint := route.Endpoints[i]
		b := r.breaker(route, i)
		out, err := b.execute(func() (string, error) { return r.call(ctx, endpoint, route, call) })
		if err == nil {
			return out, nil
		}
		var rejected *gateway.ProviderRejectedError
		if errors.As(err, &rejected) {
			return "", err
		}
		if cerr := ctx.Err(); cerr != nil {
			return "", fmt.Errorf("%s at provider %s: %w", what, route.ProviderID, cerr)
		}
		reason := reasonOf(err)
		failures = append(failures, gateway.EndpointFailure{Endpoint: i + 1, Reason: reason})
		if reason != "breaker_open" {
			r.log.WarnContext(ctx, "provider endpoint failed", "provider", route.ProviderID, "call", what,
				"endpoint", i+1, "reason", reason, "error", err)
		}
	}
	return "", &gateway.ProviderUnavailableError{Provider: route.ProviderID, RetryAfter: r.retryAfter(route),
		Endpoints: failures}
}

// call makes one call bounded by the route's timeout to one endpoint. The
// request's own context ending (the client went away) is excluded from
// the breaker's counts.
func (r *Registry) call(ctx context.Context, endpoint string, route gateway.ProviderRoute,
	call func(ctx context.Context, endpoint string) (string, error)) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, route.Timeout)
	defer cancel()
	out, err := call(cctx, endpoint)
	switch {
	case err == nil:
		return out, nil
	case ctx.Err() != nil:
		return "", &callerGone{err: ctx.Err()}
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return "", &failure{reason: "timeout", err: err}
	}
	return "", err
}

// Ready is nil when some endpoint of the provider may be called now.
func (r *Registry) Ready(route gateway.ProviderRoute) error {
	if err := r.usable(route); err != nil {
		return err
	}
	if !route.Outbound() {
		return nil
	}
	h := r.Health(route)
	if h.Available > 0 {
		return nil
	}
	failures := make([]gateway.EndpointFailure, len(route.Endpoints))
	for i := range failures {
		failures[i] = gateway.EndpointFailure{Endpoint: i + 1, Reason: "breaker_open"}
	}
	return &gateway.ProviderUnavailableError{Provider: route.ProviderID, RetryAfter: h.RetryAfter, Endpoints: failures}
}

// Health summarises the breakers of the provider's endpoints. A demo
// provider is always available.
func (r *Registry) Health(route gateway.ProviderRoute) gateway.ProviderHealth {
	if route.Validate() != nil || gateway.CheckLaunchReady(route) != nil {
		return gateway.ProviderHealth{Status: gateway.ProviderUnavailable, Endpoints: len(route.Endpoints)}
	}
	if !route.Outbound() {
		return gateway.ProviderHealth{Status: gateway.ProviderAvailable}
	}
	h := gateway.ProviderHealth{Endpoints: len(route.Endpoints)}
	for i := range route.Endpoints {
		if _, open := r.breaker(route, i).openFor(); !open {
			h.Available++
		}
	}
	switch h.Available {
	case h.Endpoints:
		h.Status = gateway.ProviderAvailable
	case 0:
		h.Status = gateway.ProviderUnavailable
		h.RetryAfter = r.retryAfter(route)
	default:
		h.Status = gateway.ProviderDegraded
	}
	return h
}

// usable checks the provider's settings; unusable ones are a 503 that
// names the reason, and an error in our log.
func (r *Registry) usable(route gateway.ProviderRoute) error {
	err := route.Validate()
	if err == nil {
		err = gateway.CheckLaunchReady(route)
	}
	if err != nil {
		r.log.Error("provider is not configured for launches", "provider", route.ProviderID, "error", err)
		return &gateway.ProviderUnavailableError{Provider: route.ProviderID, RetryAfter: r.cfg.NotConfiguredRetryAfter,
			Reason: "not_configured"}
	}
	return nil
}

// order is the sequence of endpoint indexes a launch tries.
func (r *Registry) order(route gateway.ProviderRoute) []int {
	n := len(route.Endpoints)
	start := 0
	if route.Balancing == gateway.BalancingRoundRobin && n > 1 {
		r.mu.Lock()
		turn, ok := r.turns[route.ProviderID]
		if !ok {
			turn = new(atomic.Uint64)
			r.turns[route.ProviderID] = turn
		}
		r.mu.Unlock()
		start = int((turn.Add(1) - 1) % uint64(n))
	}
	out := make([]int, n)
	for i := range out {
		out[i] = (start + i) % n
	}
	return out
}

// retryAfter is the time until the soonest open breaker among the
// provider's endpoints half-opens; zero when one is not open.
func (r *Registry) retryAfter(route gateway.ProviderRoute) time.Duration {
	var soonest time.Duration
	for i := range route.Endpoints {
		left, open := r.breaker(route, i).openFor()
		if !open {
			return 0
		}
		if i == 0 || left < soonest {
			soonest = left
		}
	}
	return soonest
}

// failure is an endpoint's failure to serve a launch; it counts against
// the endpoint's breaker.
type failure struct {
	reason string
	err    error
}

func (f *failure) Error() string {
	if f.err == nil {
		return f.reason
	}
	return f.reason + ": " + f.err.Error()
}

func (f *failure) Unwrap() error { return f.err }

// callerGone is a call cut short because the request that made it (a
// launch, a round's details) itself ended.
type callerGone struct{ err error }

func (e *callerGone) Error() string { return "request ended: " + e.err.Error() }
func (e *callerGone) Unwrap() error { return e.err }

func reasonOf(err error) string {
	var f *failure
	switch {
	case errors.Is(err, gobreaker.ErrOpenState):
		return "breaker_open"
	case errors.Is(err, gobreaker.ErrTooManyRequests):
		return "busy"
	case errors.As(err, &f):
		return f.reason
	}
	return "connection"
}
