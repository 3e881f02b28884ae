package gateway

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/pitboss/pitboss/domain"
)

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
	// KindRoundClosed is the ledger closing a stale round
	// (wallet.round_closed.v1): no money moves.
	KindRoundClosed = "round_closed"
	// KindReward is a free-bet reward's grant, cancellation or expiry
	// (promo.reward_*.v1, docs/promotions.md): no money moves.
	KindReward = "reward"
	// KindAll subscribes an endpoint to every kind, present and future.
	KindAll = "*"
)

// WebhookKinds lists every kind an endpoint may subscribe to (besides "*").
var WebhookKinds = []string{KindGameLaunched, KindBet, KindWin, KindRollback, KindDeposit, KindWithdrawal,
	KindTransfer, KindAdjustment, KindBalanceSync, KindRoundClosed, KindReward}

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
	domain.EventRoundClosed:      KindRoundClosed,
	domain.EventRewardGranted:    KindReward,
	domain.EventRewardCancelled:  KindReward,
	domain.EventRewardExpired:    KindReward,
}

// KindOfEvent returns the webhook kind of a ledger event type; false for a
// type this build does not know.
func KindOfEvent(t domain.EventType) (string, bool) {
	k, ok := eventKinds[t]
	return k, ok
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

// WebhookChange is a partial update; nil fields stay as they are. It is
// also the shape of a create request's fields, as NewWebhookEndpoint takes
// them (nil: not given).
type WebhookChange struct {
	URL         *string
	Kinds       []string // nil: unchanged
	Description *string
	Enabled     *bool
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

// maxWebhookDescriptionLength bounds an endpoint's description, in
// characters.
const maxWebhookDescriptionLength = 256

// NewWebhookEndpoint checks the fields of a new endpoint of clientID as a
// request gives them (nil: absent): url and kinds are required, enabled
// defaults to true. allowPrivate is CheckCallbackURL's. The client API and
// the admin API create endpoints through this one rule.
func NewWebhookEndpoint(clientID string, f WebhookChange, allowPrivate bool) (WebhookEndpoint, error) {
	if f.URL == nil {
		return WebhookEndpoint{}, fieldError("url", "url is required")
	}
	if err := CheckCallbackURL("url", *f.URL, allowPrivate); err != nil {
		return WebhookEndpoint{}, err
	}
	kinds, err := CheckWebhookKinds(f.Kinds)
	if err != nil {
		return WebhookEndpoint{}, err
	}
	if err := checkWebhookDescription(f.Description); err != nil {
		return WebhookEndpoint{}, err
	}
	e := WebhookEndpoint{ClientID: clientID, URL: *f.URL, Kinds: kinds, Enabled: true}
	if f.Description != nil {
		e.Description = *f.Description
	}
	if f.Enabled != nil {
		e.Enabled = *f.Enabled
	}
	return e, nil
}

// CheckWebhookChange checks the fields a partial update gives and returns
// the change to store (kinds without duplicates). The client API and the
// admin API update endpoints through this one rule.
func CheckWebhookChange(ch WebhookChange, allowPrivate bool) (WebhookChange, error) {
	if ch.URL != nil {
		if err := CheckCallbackURL("url", *ch.URL, allowPrivate); err != nil {
			return ch, err
		}
	}
	if ch.Kinds != nil {
		kinds, err := CheckWebhookKinds(ch.Kinds)
		if err != nil {
			return ch, err
		}
		ch.Kinds = kinds
	}
	if err := checkWebhookDescription(ch.Description); err != nil {
		return ch, err
	}
	return ch, nil
}

// CheckWebhookKinds validates a subscription: known kinds or "*", at least
// one; duplicates are dropped, the order kept.
func CheckWebhookKinds(kinds []string) ([]string, error) {
	if len(kinds) == 0 {
		return nil, fieldError("kinds", `kinds must list at least one event kind (or "*")`)
	}
	var out []string
	for _, k := range kinds {
		if k != KindAll && !slices.Contains(WebhookKinds, k) {
			return nil, &FieldError{Field: "kinds",
				Message: "unknown event kind " + ClipValue(k) + "; kinds are " + strings.Join(WebhookKinds, ", ") + ` or "*"`,
				Details: map[string]any{"kind": ClipValue(k)}}
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out, nil
}

// checkWebhookDescription accepts no description or one of at most 256
// characters on one line without control characters (checkText).
func checkWebhookDescription(d *string) error {
	if d == nil {
		return nil
	}
	return checkText("description", *d, maxWebhookDescriptionLength)
}
