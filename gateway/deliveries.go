package gateway

import (
	"context"
	"errors"
	"time"
)

// Delivery states (the status filter of GET /api/v1/deliveries).
const (
	DeliveryQueued    = "queued"    // waiting behind an earlier delivery of the same stream to the same endpoint
	DeliveryPending   = "pending"   // the head of its queue: due at next_attempt_at (first try or retry)
	DeliverySucceeded = "succeeded" // a 2xx came back
	DeliveryParked    = "parked"    // gave up: dead letter, may be re-sent
)

// DeliveryStates lists every state.
var DeliveryStates = []string{DeliveryQueued, DeliveryPending, DeliverySucceeded, DeliveryParked}

// ErrDeliveryInProgress is returned when a delivery that is still queued or
// pending is asked to be re-sent: it will be sent anyway.
var ErrDeliveryInProgress = errors.New("delivery is still queued or pending")

// DeliveryAttempt is one entry of the delivery log.
type DeliveryAttempt struct {
	Attempt    int
	URL        string
	StartedAt  time.Time
	Latency    time.Duration
	StatusCode int // 0: no HTTP response
	Error      string
	Excerpt    string // at most 1 KiB of the response body
}

// Delivery is one event to one endpoint, with its attempts.
type Delivery struct {
	ID             string
	ClientID       string
	Target         string // "callback" or "webhook"
	EndpointID     string // "callback" or the webhook endpoint's id
	EventID        string
	EventType      string
	Kind           string
	StreamID       string
	StreamVersion  int64
	State          string
	Attempts       int
	NextAttemptAt  *time.Time // queued and pending only
	LastAttemptAt  *time.Time
	LastStatusCode int
	LastError      string
	DeliveredAt    *time.Time
	ParkedAt       *time.Time
	CreatedAt      time.Time
	Payload        []byte
	Log            []DeliveryAttempt
}

// DeliveryFilter selects deliveries of one client.
type DeliveryFilter struct {
	State      string // empty: every state
	EndpointID string
	EventID    string
	Page       int // from 1
	PerPage    int
}

// Deliveries reads a client's delivery log and re-sends deliveries. An
// unknown id, or another client's, is domain.ErrNotFound.
type Deliveries interface {
	// ListDeliveries returns one page, newest first, with the total.
	ListDeliveries(ctx context.Context, clientID string, f DeliveryFilter) ([]Delivery, int64, error)
	Delivery(ctx context.Context, clientID, id string) (Delivery, error)
	// ResendDelivery puts a parked or succeeded delivery back in its queue
	// with a new round of attempts; a queued or pending one is
	// ErrDeliveryInProgress.
	ResendDelivery(ctx context.Context, clientID, id string) (Delivery, error)
}

// ForwardCallback is a client's forwarded-callback setting as the client
// sees it.
type ForwardCallback struct {
	URL             string // empty: no callbacks are forwarded
	SecretCreatedAt *time.Time
}
