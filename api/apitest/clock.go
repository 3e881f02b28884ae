package apitest

import (
	"sync"
	"time"
)

// Clock is a clock a test moves. Its zero value follows real time; Set
// stops it at a moment and Advance moves it on from there, so a test
// decides what the server (and, when Options.LedgerClock is this clock,
// the ledger) takes for now.
type Clock struct {
	mu      sync.Mutex
	stopped bool
	at      time.Time
}

// StoppedAt is a clock that reads t until a test moves it.
func StoppedAt(t time.Time) *Clock { return &Clock{stopped: true, at: t} }

// Now is real time, or the moment the clock was stopped at.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return c.at
	}
	return time.Now()
}

// Set stops the clock at t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped, c.at = true, t
}

// Advance moves the clock on by d; a clock that followed real time stops
// at now plus d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.stopped {
		c.stopped, c.at = true, time.Now()
	}
	c.at = c.at.Add(d)
}
