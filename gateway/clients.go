package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Environments a client (and so each of its keys) belongs to.
const (
	EnvironmentSandbox    = "sandbox"
	EnvironmentProduction = "production"
)

// Key management errors (api/wire maps them to HTTP answers).
var (
	// ErrKeyNotActive: a revoked or expired key cannot be rotated.
	ErrKeyNotActive = errors.New("the API key is revoked or expired")
	// ErrKeyAlreadyRotated: a key is rotated once; rotate its replacement
	// instead. A retried rotation therefore never mints a second new key.
	ErrKeyAlreadyRotated = errors.New("the API key was already rotated")
)

// ClientExistsError is returned when a client is created with an id that
// exists with different settings. Creating it again with the same settings
// is not an error (the existing client is returned).
type ClientExistsError struct {
	ID       string
	Field    string
	Existing string
	Given    string
}

func (e *ClientExistsError) Error() string {
	return fmt.Sprintf("client %s already exists with a different %s (existing %q, given %q)", e.ID, e.Field, e.Existing, e.Given)
}

// Client is an operator of the gateway as the admin API sees it.
type Client struct {
	ID          string
	Name        string
	Environment string // sandbox or production
	Plan        string // plan tier: which rate limit applies to its keys
	CreatedAt   time.Time
}

// ClientChange is a partial update of a client; nil fields stay.
type ClientChange struct {
	Name *string
	Plan *string
}

// APIKey describes a key without its secret, which is never stored.
type APIKey struct {
	ID          string
	ClientID    string
	Prefix      string // the key's text up to its secret: "pb_test_<id>"
	Label       string
	Environment string
	Scopes      []string
	CreatedAt   time.Time
	ExpiresAt   *time.Time
	RevokedAt   *time.Time
	// LastUsedAt is approximate: written when usage is flushed.
	LastUsedAt *time.Time
	// ReplacedBy is the key a rotation issued in this one's place.
	ReplacedBy string
}

// Key states, as listed.
const (
	KeyActive  = "active"
	KeyExpired = "expired"
	KeyRevoked = "revoked"
)

// State is the key's state at now.
func (k APIKey) State(now time.Time) string {
	switch {
	case k.RevokedAt != nil:
		return KeyRevoked
	case k.ExpiresAt != nil && !k.ExpiresAt.After(now):
		return KeyExpired
	}
	return KeyActive
}

// KeySpec asks for a new key.
type KeySpec struct {
	ClientID  string
	Scopes    []string
	Label     string
	ExpiresAt *time.Time // nil: never
}

// IssuedKey is a new key: Secret is the whole key, shown this once.
type IssuedKey struct {
	APIKey
	Secret string
}

// RotateSpec asks to replace a key. The old key stays valid for Grace
// (its expiry moves to now+Grace unless it was due earlier); the new key
// has the old one's scopes and label, and expires at ExpiresAt (nil:
// never).
type RotateSpec struct {
	ClientID  string
	KeyID     string
	Grace     time.Duration
	ExpiresAt *time.Time
}

// Rotation grace periods.
const (
	DefaultRotationGrace = 24 * time.Hour
	MaxRotationGrace     = 30 * 24 * time.Hour
)

// AdminClients stores clients and their keys. An unknown client or key (or
// a key of another client) is domain.ErrNotFound.
type AdminClients interface {
	// AddClient creates c. An existing id with the same name, environment
	// and plan returns the existing client with created false; with a
	// different one it is a *ClientExistsError.
	AddClient(ctx context.Context, c Client) (Client, bool, error)
	// ListClients returns one page (from 1) ordered by id, and the total.
	ListClients(ctx context.Context, page, perPage int) ([]Client, int64, error)
	GetClient(ctx context.Context, id string) (Client, error)
	UpdateClient(ctx context.Context, id string, ch ClientChange) (Client, error)

	IssueAPIKey(ctx context.Context, spec KeySpec) (IssuedKey, error)
	// ListAPIKeys returns every key of the client, newest first.
	ListAPIKeys(ctx context.Context, clientID string) ([]APIKey, error)
	GetAPIKey(ctx context.Context, clientID, keyID string) (APIKey, error)
	// RotateAPIKey issues the replacement of an active key that was not
	// rotated before (else ErrKeyNotActive or ErrKeyAlreadyRotated) and
	// returns it with the old key as it now is.
	RotateAPIKey(ctx context.Context, spec RotateSpec) (IssuedKey, APIKey, error)
	// RevokeAPIKey revokes the key at once; revoking a revoked key
	// returns it unchanged.
	RevokeAPIKey(ctx context.Context, clientID, keyID string) (APIKey, error)
}

// AdminLaunch is the signed-launch settings store as the admin API uses
// it (adapters/postgres/gatewaystore.LaunchClients).
type AdminLaunch interface {
	LaunchClients
	SetLaunchSettings(ctx context.Context, clientID string, ls LaunchSettings) error
	// IssueClientSecret makes a new client secret and returns it, shown
	// once; the previous secret stops working.
	IssueClientSecret(ctx context.Context, clientID string) (string, error)
}

// AdminCallbacks sets a client's forwarded-callback address
// (adapters/postgres/deliverystore.Deliveries).
type AdminCallbacks interface {
	ForwardCallback(ctx context.Context, clientID string) (ForwardCallback, error)
	SetForwardCallbackURL(ctx context.Context, clientID, url string) error
}

// maxClientNameLength bounds a client's display name, in characters.
const maxClientNameLength = 200

// CheckClientName accepts a name that is not blank, of at most 200
// characters, on one line without control characters (checkText).
func CheckClientName(name string) error {
	if strings.TrimSpace(name) == "" {
		return fieldError("name", "name is required")
	}
	return checkText("name", name, maxClientNameLength)
}

// CheckEnvironment accepts sandbox or production.
func CheckEnvironment(env string) error {
	if env != EnvironmentSandbox && env != EnvironmentProduction {
		return fieldError("environment", "environment must be sandbox or production")
	}
	return nil
}
