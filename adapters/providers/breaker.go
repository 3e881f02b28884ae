package providers

import (
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/pitboss/pitboss/gateway"
)

// endpointBreaker is the circuit breaker of one provider endpoint.
// gobreaker counts the failures and admits the one probe of a half-open
// breaker; the cooldown is kept here, on the registry's clock (Config.Now),
// because gobreaker reads the system clock, which a test cannot move.
// gobreaker's own open state lasts a nanosecond, so by the time the
// cooldown has passed on our clock gobreaker is half-open. Keeping the
// cooldown here also tells a 503 when to retry, which gobreaker does not.
type endpointBreaker struct {
	cb       *gobreaker.CircuitBreaker[string]
	failures int
	cooldown time.Duration
	now      func() time.Time

	mu        sync.Mutex
	openUntil time.Time
}

// openFor reports whether the breaker is open and for how much longer.
func (b *endpointBreaker) openFor() (time.Duration, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	left := b.openUntil.Sub(b.now())
	return max(left, 0), left > 0
}

// execute calls fn through the breaker: not at all while it is open. The
// check is made again once gobreaker has let the call in, so a call racing
// the one that opened the breaker is not taken for the half-open probe;
// that refusal is excluded from the counts.
func (b *endpointBreaker) execute(fn func() (string, error)) (string, error) {
	if _, open := b.openFor(); open {
		return "", gobreaker.ErrOpenState
	}
	return b.cb.Execute(func() (string, error) {
		if _, open := b.openFor(); open {
			return "", gobreaker.ErrOpenState
		}
		return fn()
	})
}

// breaker returns the breaker of the route's i-th endpoint, replacing it
// when the provider's breaker settings changed.
func (r *Registry) breaker(route gateway.ProviderRoute, i int) *endpointBreaker {
	key := route.ProviderID + "\n" + route.Endpoints[i]
	r.mu.Lock()
	defer r.mu.Unlock()
	if b, ok := r.breakers[key]; ok && b.failures == route.BreakerFailures && b.cooldown == route.BreakerCooldown {
		return b
	}
	b := &endpointBreaker{failures: route.BreakerFailures, cooldown: route.BreakerCooldown, now: r.cfg.Now}
	name := route.ProviderID + " endpoint " + strconv.Itoa(i+1)
	log := r.log
	b.cb = gobreaker.NewCircuitBreaker[string](gobreaker.Settings{
		Name:        name,
		MaxRequests: 1,               // one probe while half-open
		Timeout:     time.Nanosecond, // the cooldown is b.openUntil
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= uint32(b.failures) },
		// A refusal comes from a healthy endpoint.
		IsSuccessful: func(err error) bool {
			var rejected *gateway.ProviderRejectedError
			return err == nil || errors.As(err, &rejected)
		},
		// The launch request ending says nothing about the endpoint, nor
		// does a call execute refused while the breaker is open.
		IsExcluded: func(err error) bool {
			var gone *callerGone
			return errors.As(err, &gone) || errors.Is(err, gobreaker.ErrOpenState)
		},
		// Called with gobreaker's lock held: touch only b.mu here.
		OnStateChange: func(name string, from, to gobreaker.State) {
			if to == gobreaker.StateOpen {
				b.mu.Lock()
				b.openUntil = b.now().Add(b.cooldown)
				b.mu.Unlock()
			}
			log.Warn("provider endpoint breaker", "breaker", name, "from", from.String(), "to", to.String())
		},
	})
	r.breakers[key] = b
	return b
}
