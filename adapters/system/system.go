// Package system adapts the machine: wall clock, waits on it, and id
// generation.
package system

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Clock is the wall clock.
type Clock struct{}

// Now returns the current time.
func (Clock) Now() time.Time { return time.Now() }

// IDs makes UUIDv7 ids: unique, and time ordered so indexes stay compact.
type IDs struct{}

// NewID returns a new UUIDv7 string.
func (IDs) NewID() string { return uuid.Must(uuid.NewV7()).String() }

// Sleep waits d on the wall clock and reports whether ctx is still alive:
// it returns false as soon as ctx ends, so a worker's backoff or poll pause
// never holds up its shutdown.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
