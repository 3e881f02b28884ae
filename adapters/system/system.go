// Package system adapts the machine: wall clock and id generation.
package system

import (
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
