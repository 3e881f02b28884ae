package gateway

import (
	"context"
	"time"
)

// Lag is how far the Kafka relay and the projections are behind the event
// store's head.
type Lag struct {
	// Head is the event store's last position.
	Head        int64
	Relays      []RelayLag
	Projections []ProjectionLag
}

// RelayLag is one relay's checkpoint.
type RelayLag struct {
	Name     string
	Position int64
	// LastPublishedAt is occurred_at of the last published event; nil
	// when nothing was published.
	LastPublishedAt *time.Time
	// OldestUnpublishedAt is occurred_at of the first event after the
	// checkpoint; nil when the relay has caught up.
	OldestUnpublishedAt *time.Time
}

// ProjectionLag is one projection's watermark.
type ProjectionLag struct {
	Name              string
	Position          int64
	OldestUnappliedAt *time.Time
}

// LagSource reads the lags (adapters/postgres/gatewaystore).
type LagSource interface {
	Lag(ctx context.Context) (Lag, error)
}
