package providers

import (
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/pitboss/pitboss/gateway"
)

// endpointBreaker is the circuit breaker of one provider endpoint. It
// remembers when it opened, which gobreaker does not tell, so a 503 can say
// when to retry.
type endpointBreaker struct {
	cb       *gobreaker.CircuitBreaker[string]
	failures int
	cooldown time.Duration

	mu        sync.Mutex
	openUntil time.Time
}

// openFor reports whether the breaker is open and for how much longer.
func (b *endpointBreaker) openFor() (time.Duration, bool) {
	if b.cb.State() != gobreaker.StateOpen { // may move it to half-open
		return 0, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return max(time.Until(b.openUntil), 0), true
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
	b := &endpointBreaker{failures: route.BreakerFailures, cooldown: route.BreakerCooldown}
	name := route.ProviderID + " endpoint " + strconv.Itoa(i+1)
	log := r.log
	b.cb = gobreaker.NewCircuitBreaker[string](gobreaker.Settings{
		Name:        name,
		MaxRequests: 1, // one probe while half-open
		Timeout:     route.BreakerCooldown,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= uint32(b.failures) },
		// A refusal comes from a healthy endpoint.
		IsSuccessful: func(err error) bool {
			var rejected *gateway.ProviderRejectedError
			return err == nil || errors.As(err, &rejected)
		},
		// The launch request ending says nothing about the endpoint.
		IsExcluded: func(err error) bool {
			var gone *callerGone
			return errors.As(err, &gone)
		},
		// Called with gobreaker's lock held: touch only b.mu here.
		OnStateChange: func(name string, from, to gobreaker.State) {
			if to == gobreaker.StateOpen {
				b.mu.Lock()
				b.openUntil = time.Now().Add(b.cooldown)
				b.mu.Unlock()
			}
			log.Warn("provider endpoint breaker", "breaker", name, "from", from.String(), "to", to.String())
		},
	})
	r.breakers[key] = b
	return b
}
