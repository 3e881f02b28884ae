package delivery

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Defaults of Schedule: the published retry schedule (docs/callbacks-and-webhooks.md).
const (
	DefaultRetryBase   = 10 * time.Second
	DefaultRetryFactor = 3
	DefaultRetryCap    = 6 * time.Hour
	DefaultMaxAttempts = 15
	DefaultMaxAge      = 24 * time.Hour
)

// Schedule says when a failed delivery is tried again and when it is
// parked. The n-th retry (after the n-th failed attempt) waits a random
// time in [0, Ceiling(n)] — exponential backoff with full jitter, so
// receivers that come back after an outage are not hit by every sender at
// the same instant. Ceiling(n) = min(Cap, Base·Factor^(n-1)).
//
// A delivery is parked after MaxAttempts attempts, or when the next try
// would start more than MaxAge after the first attempt of its round (the
// round restarts on a re-send), whichever comes first.
type Schedule struct {
	Base        time.Duration
	Factor      int
	Cap         time.Duration
	MaxAttempts int
	MaxAge      time.Duration
	// Rand returns a uniform random int64 in [0, n]; math/rand/v2 when nil.
	// Tests set it to make the jitter deterministic.
	Rand func(n int64) int64
}

func (s *Schedule) setDefaults() {
	if s.Base == 0 {
		s.Base = DefaultRetryBase
	}
	if s.Factor == 0 {
		s.Factor = DefaultRetryFactor
	}
	if s.Cap == 0 {
		s.Cap = DefaultRetryCap
	}
	if s.MaxAttempts == 0 {
		s.MaxAttempts = DefaultMaxAttempts
	}
	if s.MaxAge == 0 {
		s.MaxAge = DefaultMaxAge
	}
}

func uniform(n int64) int64 { return rand.Int64N(n + 1) }

// Validate reports every invalid field at once.
func (s Schedule) Validate() error {
	var errs []error
	if s.Base <= 0 || s.Cap < s.Base {
		errs = append(errs, fmt.Errorf("retry base %v and cap %v: want 0 < base <= cap", s.Base, s.Cap))
	}
	if s.Factor < 1 {
		errs = append(errs, fmt.Errorf("retry factor %d < 1", s.Factor))
	}
	if s.MaxAttempts < 1 {
		errs = append(errs, fmt.Errorf("max attempts %d < 1", s.MaxAttempts))
	}
	if s.MaxAge <= 0 {
		errs = append(errs, errors.New("max age must be positive"))
	}
	return errors.Join(errs...)
}

// Ceiling is the longest wait after the n-th failed attempt (n >= 1).
func (s Schedule) Ceiling(n int) time.Duration {
	d := s.Base
	for i := 1; i < n; i++ {
		if d >= s.Cap/time.Duration(s.Factor) {
			return s.Cap
		}
		d *= time.Duration(s.Factor)
	}
	return min(d, s.Cap)
}

// Next decides what follows the n-th failed attempt of a round that started
// at roundStart: park, or retry after the returned delay.
func (s Schedule) Next(n int, roundStart, now time.Time) (delay time.Duration, park bool) {
	if n >= s.MaxAttempts {
		return 0, true
	}
	rnd := s.Rand
	if rnd == nil {
		rnd = uniform
	}
	delay = time.Duration(rnd(int64(s.Ceiling(n))))
	if now.Add(delay).Sub(roundStart) > s.MaxAge {
		return 0, true
	}
	return delay, false
}
