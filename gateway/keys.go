package gateway

import (
	"crypto/sha256"
	"slices"
	"strconv"
	"strings"
	"time"
)

// maxKeyLabelLength bounds a key's label, in characters.
const maxKeyLabelLength = 100

// HashKey is how API keys are stored: SHA-256 of the whole key. Keys carry
// 190 bits of randomness, so a fast hash is enough and lookups stay O(1).
func HashKey(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

// CheckScopes validates a key's scopes: at least one, each known;
// duplicates are dropped, the order kept.
func CheckScopes(scopes []string) ([]string, error) {
	if len(scopes) == 0 {
		return nil, &FieldError{Field: "scopes",
			Message: "scopes must list at least one scope: " + strings.Join(AllScopes, ", "),
			Details: map[string]any{"scopes": AllScopes}}
	}
	out := make([]string, 0, len(scopes))
	for _, sc := range scopes {
		if !slices.Contains(AllScopes, sc) {
			return nil, &FieldError{Field: "scopes",
				Message: "unknown scope " + strconv.Quote(ClipValue(sc)) + "; scopes are " + strings.Join(AllScopes, ", "),
				Details: map[string]any{"scopes": AllScopes}}
		}
		if !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	return out, nil
}

// CheckKeyLabel accepts a label of at most 100 characters, on one line
// without control characters (checkText); it may be empty.
func CheckKeyLabel(label string) error {
	return checkText("label", label, maxKeyLabelLength)
}

// CheckExpiry accepts no expiry or one after now.
func CheckExpiry(expiresAt *time.Time, now time.Time) error {
	if expiresAt != nil && !expiresAt.After(now) {
		return fieldError("expires_at", "expires_at must be in the future")
	}
	return nil
}

// CheckGrace accepts a rotation grace period from 0 to MaxRotationGrace.
func CheckGrace(d time.Duration) error {
	if d < 0 || d > MaxRotationGrace {
		return fieldError("grace_period_seconds", "grace_period_seconds must be from 0 to 2592000 (30 days)")
	}
	return nil
}
