package gateway

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"time"
)

// The delivery queue: what the forwarder (adapters/forwarder) enqueues for
// every ledger event, and what the delivery worker (adapters/delivery)
// claims and sends. The store between them (adapters/postgres/deliverystore)
// implements DeliveryEnqueuer and DeliveryQueue.

// Outgoing is one ledger event ready to be enqueued for every endpoint of
// its client that takes it: the forwarded callback (when Callback is not
// nil and the client has a callback URL) and each webhook endpoint
// subscribed to Kind that existed when the event occurred.
type Outgoing struct {
	EventID       string
	EventType     string
	Kind          string
	ClientID      string
	StreamID      string
	StreamVersion int64
	Position      int64
	OccurredAt    time.Time
	// Callback is the forwarded callback's body; nil: not forwarded.
	Callback []byte
	// Webhook is the webhook body (the event in its envelope).
	Webhook []byte
}

// Targets of a delivery.
const (
	TargetCallback = "callback" // the client's forward callback URL
	TargetWebhook  = "webhook"  // one of the client's webhook endpoints
)

// CallbackEndpointID is the endpoint id of every client's forwarded
// callback (webhook endpoints have ids of their own).
const CallbackEndpointID = "callback"

// SigningSecretPrefix starts every signing secret, so one is recognised in
// a leak scan.
const SigningSecretPrefix = "whsec_"

// NewSigningSecret returns a new secret for signing deliveries (webhook
// endpoints and forwarded callbacks): "whsec_" and 32 random bytes in
// unpadded base64url.
func NewSigningSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand panics on a broken source)
	return SigningSecretPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// DeliveryEnqueuer stores deliveries.
type DeliveryEnqueuer interface {
	// EnqueueBatch inserts, in one transaction, a delivery for every
	// endpoint of each event's client that takes the event, once per
	// (event, endpoint), in the order of outs within each delivery queue.
	// It reports how many it added and, as of the transaction's start,
	// which (client, kind) pairs of outs have a target at all, so the
	// caller can skip the others' events for a while.
	EnqueueBatch(ctx context.Context, outs []Outgoing) (Enqueued, error)
}

// TargetKey is a client and a webhook kind.
type TargetKey struct{ ClientID, Kind string }

// Enqueued is what EnqueueBatch did.
type Enqueued struct {
	Added int // deliveries added
	// Targeted holds the (client, kind) pairs of the batch whose client
	// has a forward callback URL or an enabled webhook endpoint subscribed
	// to the kind (or "*"). Every other pair of the batch had neither as
	// of AsOf: a target registered later commits after AsOf.
	Targeted map[TargetKey]bool
	// AsOf is the database's clock when the transaction started, not later
	// than the snapshot Targeted was read in.
	AsOf time.Time
}

// DeliveryJob is a delivery a worker has claimed: the head of its queue,
// leased to the worker until its lease ends.
type DeliveryJob struct {
	ID       string
	ClientID string
	// Environment is the client's (sandbox or production; "" when the
	// client is gone) as of the claim: the sender allows inside targets
	// by it (PrivateTargets.Allows).
	Environment string
	Target      string
	EndpointID  string
	EventID     string
	EventType   string
	Kind        string
	Payload     []byte
	// Attempt numbers this attempt among all of the delivery's attempts
	// (1 = the first ever). It is also the lease token: Finish applies
	// only while the delivery's attempt counter still equals it.
	Attempt int
	// RoundAttempt numbers this attempt within the current round (a
	// re-send starts a new round); the schedule counts these.
	RoundAttempt   int
	RoundStartedAt time.Time
	// URL and Secret are the endpoint's as of the claim. Gone, when not
	// empty, says why the endpoint cannot be sent to (deleted, disabled,
	// no callback URL): the delivery is parked without a request.
	URL    string
	Secret string
	Gone   string
	// Fault, when not empty, is a failure on our side found at claim time
	// (a secret that does not open): the attempt fails without a request
	// and is retried on the schedule.
	Fault string
}

// IdempotencyKey is the delivery's Idempotency-Key header value.
func (j DeliveryJob) IdempotencyKey() string { return j.EventID + ":" + j.EndpointID }

// AttemptResult is what one attempt did. StatusCode is 0 when no response
// came (refused address, network error, timeout); Error is empty on
// success.
type AttemptResult struct {
	StartedAt  time.Time
	Latency    time.Duration
	StatusCode int
	Error      string
	Excerpt    string
}

// Succeeded reports whether the receiver acknowledged: any 2xx.
func (r AttemptResult) Succeeded() bool {
	return r.Error == "" && r.StatusCode >= 200 && r.StatusCode < 300
}

// DeliveryOutcome is how an attempt ends.
type DeliveryOutcome struct {
	Result AttemptResult
	URL    string
	// Succeeded, or else Park, or else retry after RetryAfter.
	Succeeded  bool
	Park       bool
	RetryAfter time.Duration
}

// DeliveryQueue is the delivery store as a worker sees it.
type DeliveryQueue interface {
	// Claim leases up to max due deliveries (heads of their queues) for
	// lease, counting an attempt on each.
	Claim(ctx context.Context, max int, lease time.Duration) ([]DeliveryJob, error)
	// Finish logs the attempt and moves the delivery on: succeeded, parked
	// or due again after RetryAfter; a finished head hands its queue to the
	// next delivery. A DeliveryJob whose lease was taken over does not move
	// the delivery (its attempt is still logged).
	Finish(ctx context.Context, job DeliveryJob, o DeliveryOutcome) error
}
