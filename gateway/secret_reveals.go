package gateway

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pitboss/pitboss/domain"
)

// The tokens area (docs/keys-and-admin.md#tokens-area): an API key is
// stored as a hash and can never be shown again, but the client secret of
// the signed launch is sealed, not hashed (both sides must hold it to sign),
// so the admin API can show it on demand. Every such showing is recorded.

// ErrNoClientSecret: the client has no signed-launch secret to reveal
// (none was issued).
var ErrNoClientSecret = errors.New("no client secret is issued for this client")

// SecretReveal is one showing of a client's secret, as the reveal trail
// keeps it.
type SecretReveal struct {
	ID       int64
	ClientID string
	// RevealedAt is when the secret was shown (the API's clock).
	RevealedAt time.Time
	// Actor names the credential that asked: "admin-token:" and a short
	// fingerprint of the admin token. It tells tokens apart, not people:
	// there is one admin token.
	Actor string
	// RemoteAddr is the requester's address as the server judged it
	// (trusted proxies considered); empty when unknown.
	RemoteAddr string
	// UserAgent is the requester's User-Agent, cleaned (CleanText).
	UserAgent string
	// Reason is the free text the admin gave (CheckRevealReason); may be
	// empty.
	Reason string
}

// ClientSecretReveals shows client secrets and keeps the trail of every
// showing (adapters/postgres/gatewaystore.LaunchClients). An unknown
// client is domain.ErrNotFound.
type ClientSecretReveals interface {
	// RevealClientSecret records r (its ID is assigned) and returns the
	// client's secret with the record, in one transaction: the secret is
	// returned only when its record is committed, and nothing is recorded
	// when it is not returned. A client without a secret is
	// ErrNoClientSecret. Revealing never changes the secret.
	RevealClientSecret(ctx context.Context, r SecretReveal) (string, SecretReveal, error)
	// ClientSecretReveals returns one page (from 1) of the client's
	// trail, newest first, and the total.
	ClientSecretReveals(ctx context.Context, clientID string, page, perPage int) ([]SecretReveal, int64, error)
}

// MaxRevealReasonLength bounds the reason of a reveal, in characters.
const MaxRevealReasonLength = 200

// MaxRecordedUserAgentLength bounds the User-Agent a reveal records, in
// characters.
const MaxRecordedUserAgentLength = 256

// CheckRevealReason accepts a reason of at most MaxRevealReasonLength
// characters on one line without control characters (checkText); it may
// be empty.
func CheckRevealReason(reason string) error {
	return checkText("reason", reason, MaxRevealReasonLength)
}

// CleanText makes text a request carried in a header fit for a record
// that consoles, logs and terminals show: invalid UTF-8, control
// characters and line breaks become U+FFFD, and the text is cut to max
// characters. Headers are not refused for their content (a browser's
// User-Agent is not the admin's to choose), so they are cleaned instead.
func CleanText(v string, max int) string {
	var b strings.Builder
	n := 0
	for _, r := range strings.ToValidUTF8(v, string(utf8.RuneError)) {
		if n == max {
			break
		}
		if domain.IsControlOrBreak(r) {
			r = utf8.RuneError
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}
