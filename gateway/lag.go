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
	// BehindEvents is how many events are after Position.
	BehindEvents int64
	// LastPublishedAt is occurred_at of the last published event; nil
	// when nothing was published.
	LastPublishedAt *time.Time
	// OldestUnpublishedAt is occurred_at of the first event after the
	// checkpoint; nil when the relay has caught up.
	OldestUnpublishedAt *time.Time
}

// ProjectionLag is one projection's watermark.
type ProjectionLag struct {
	Name     string
	Position int64
	// BehindEvents is how many events are after Position.
	BehindEvents      int64
	OldestUnappliedAt *time.Time
}

// LagSource reads the lags (adapters/postgres/gatewaystore).
type LagSource interface {
	Lag(ctx context.Context) (Lag, error)
}

// ClientLagSource reads the lags as one client is shown them
// (adapters/postgres/gatewaystore): every position is the client's own
// (its last event at or below the platform's), and the counts and waits
// are of its own events only, so that no client learns another's volume.
type ClientLagSource interface {
	ClientLag(ctx context.Context, clientID string) (Lag, error)
}
