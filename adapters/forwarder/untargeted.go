package forwarder

import (
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/pitboss/pitboss/gateway"
)

// untargeted remembers the (client, kind) pairs the store last said have
// no target (no forward callback URL, no enabled webhook endpoint
// subscribed to the kind or "*"), and when it said so. Only that negative
// answer is kept: a pair with a target, or one not asked about, always goes
// to the store, so no event of a client with a target is ever skipped
// because of this cache.
//
// The skip rule: an event of a remembered pair is skipped when it occurred
// before the answer's time plus ttl, and the answer is younger than ttl.
// The answer's time (gateway.Enqueued.AsOf) is not later than the snapshot
// it was read in, so a target registered after it commits later; every
// event that occurs ttl or more after the registration commits is enqueued.
// Events of the ttl before may be skipped, as before the registration.
type untargeted struct {
	ttl  time.Duration
	seen *expirable.LRU[gateway.TargetKey, time.Time]
}

// maxUntargeted bounds the pairs kept (the least recently answered go
// first, which only costs them a trip to the store).
const maxUntargeted = 100_000

func newUntargeted(ttl time.Duration) *untargeted {
	return &untargeted{ttl: ttl, seen: expirable.NewLRU[gateway.TargetKey, time.Time](maxUntargeted, nil, ttl)}
}

// skips reports whether o is skipped.
func (u *untargeted) skips(o *gateway.Outgoing) bool {
	if u.ttl <= 0 {
		return false
	}
	asOf, ok := u.seen.Peek(gateway.TargetKey{ClientID: o.ClientID, Kind: o.Kind})
	return ok && o.OccurredAt.Before(asOf.Add(u.ttl))
}

// learn records the store's answer about the pairs of sent.
func (u *untargeted) learn(sent []gateway.Outgoing, r gateway.Enqueued) {
	if u.ttl <= 0 {
		return
	}
	for i := range sent {
		k := gateway.TargetKey{ClientID: sent[i].ClientID, Kind: sent[i].Kind}
		if r.Targeted[k] {
			u.seen.Remove(k)
			continue
		}
		// An older answer never replaces a younger one: both are true,
		// the younger skips more.
		if prev, ok := u.seen.Peek(k); !ok || prev.Before(r.AsOf) {
			u.seen.Add(k, r.AsOf)
		}
	}
}
