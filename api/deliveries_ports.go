package api

import (
	"context"
	"errors"
	"time"

	"github.com/pitboss/pitboss/domain"
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

// Webhook event kinds: what an endpoint subscribes to. Part of the
// contract: add kinds, never rename one.
const (
	KindGameLaunched = "game.launched"
	KindBet          = "bet"
	KindWin          = "win"
	KindRollback     = "rollback"
	KindDeposit      = "deposit"
	KindWithdrawal   = "withdrawal"
	KindTransfer     = "transfer"
	KindAdjustment   = "adjustment"
	KindBalanceSync  = "balance_sync"
	// KindAll subscribes an endpoint to every kind, present and future.
	KindAll = "*"
)

// WebhookKinds lists every kind an endpoint may subscribe to (besides "*").
var WebhookKinds = []string{KindGameLaunched, KindBet, KindWin, KindRollback, KindDeposit, KindWithdrawal,
	KindTransfer, KindAdjustment, KindBalanceSync}

// eventKinds maps every ledger event type to its webhook kind.
var eventKinds = map[domain.EventType]string{
	domain.EventGameLaunched:     KindGameLaunched,
	domain.EventBetPlaced:        KindBet,
	domain.EventWinCredited:      KindWin,
	domain.EventBetRolledBack:    KindRollback,
	domain.EventWinReversed:      KindRollback,
	domain.EventRollbackRecorded: KindRollback,
	domain.EventDeposited:        KindDeposit,
	domain.EventWithdrawn:        KindWithdrawal,
	domain.EventTransferred:      KindTransfer,
	domain.EventAdjusted:         KindAdjustment,
	domain.EventBalanceSynced:    KindBalanceSync,
}

// KindOfEvent returns the webhook kind of a ledger event type; false for a
// type this build does not know.
func KindOfEvent(t domain.EventType) (string, bool) {
	k, ok := eventKinds[t]
	return k, ok
}

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

// WebhookEndpoint is a client's webhook endpoint. Its signing secret is
// shown only when it is created or rotated.
type WebhookEndpoint struct {
	ID          string
	ClientID    string
	URL         string
	Kinds       []string
	Description string
	Enabled     bool
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// WebhookChange is a partial update; nil fields stay as they are.
type WebhookChange struct {
	URL         *string
	Kinds       []string // nil: unchanged
	Description *string
	Enabled     *bool
}

// ForwardCallback is a client's forwarded-callback setting as the client
// sees it.
type ForwardCallback struct {
	URL             string // empty: no callbacks are forwarded
	SecretCreatedAt *time.Time
}

// MaxWebhooksPerClient bounds a client's endpoints.
const MaxWebhooksPerClient = 20

// Webhooks stores a client's webhook endpoints and signing secrets. An
// unknown or deleted id, or another client's, is domain.ErrNotFound.
type Webhooks interface {
	// CreateWebhook stores e (ID, timestamps set by the store) and returns
	// it with its new signing secret.
	CreateWebhook(ctx context.Context, e WebhookEndpoint) (WebhookEndpoint, string, error)
	ListWebhooks(ctx context.Context, clientID string) ([]WebhookEndpoint, error)
	Webhook(ctx context.Context, clientID, id string) (WebhookEndpoint, error)
	UpdateWebhook(ctx context.Context, clientID, id string, ch WebhookChange) (WebhookEndpoint, error)
	// DeleteWebhook removes an endpoint; its pending deliveries are parked.
	DeleteWebhook(ctx context.Context, clientID, id string) error
	// RotateWebhookSecret replaces the endpoint's secret and returns the
	// new one; the old one stops working at once.
	RotateWebhookSecret(ctx context.Context, clientID, id string) (string, error)
	ForwardCallback(ctx context.Context, clientID string) (ForwardCallback, error)
	// RotateCallbackSecret creates or replaces the key forwarded callbacks
	// are signed with and returns it.
	RotateCallbackSecret(ctx context.Context, clientID string) (string, error)
}
