package gateway_test

import (
	"bytes"
	"crypto/sha256"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/gateway"
)

func TestCheckScopes(t *testing.T) {
	t.Parallel()
	all := strings.Join(gateway.AllScopes, ", ")
	tests := []struct {
		name   string
		scopes []string
		want   []string
		err    string
	}{
		{name: "one", scopes: []string{gateway.ScopeLaunch}, want: []string{gateway.ScopeLaunch}},
		{name: "duplicates dropped, order kept", scopes: []string{"wallet:read", "launch", "wallet:read"},
			want: []string{"wallet:read", "launch"}},
		{name: "every scope", scopes: gateway.AllScopes, want: gateway.AllScopes},
		{name: "none", scopes: nil, err: "scopes must list at least one scope: " + all},
		{name: "empty", scopes: []string{}, err: "scopes must list at least one scope: " + all},
		{name: "unknown", scopes: []string{"launch", "everything"}, err: `unknown scope "everything"; scopes are ` + all},
		{name: "unknown and long", scopes: []string{strings.Repeat("x", 41)},
			err: `unknown scope "` + strings.Repeat("x", 40) + `…"; scopes are ` + all},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := gateway.CheckScopes(tc.scopes)
			if fe := wantFieldError(t, err, "scopes", tc.err); fe != nil {
				if !slices.Equal(fe.Details["scopes"].([]string), gateway.AllScopes) {
					t.Fatalf("details %v, want the scopes listed", fe.Details)
				}
				return
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("scopes %v, want %v", got, tc.want)
			}
		})
	}
}

func TestKeyRules(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	past, future := now.Add(-time.Second), now.Add(time.Second)
	tests := []struct {
		name  string
		err   error
		field string
		msg   string
	}{
		{"label empty", gateway.CheckKeyLabel(""), "", ""},
		{"label 100 characters", gateway.CheckKeyLabel(strings.Repeat("é", 100)), "", ""},
		{"label 101 characters", gateway.CheckKeyLabel(strings.Repeat("é", 101)), "label", "label must be at most 100 characters (it has 101)"},
		{"label not UTF-8", gateway.CheckKeyLabel("\xff"), "label", "label must be valid UTF-8"},
		{"label with a line feed", gateway.CheckKeyLabel("ci\nprod"), "label", "label " + controlMsg + " (U+000A at character 3)"},
		{"label with a carriage return", gateway.CheckKeyLabel("ci\r"), "label", "label " + controlMsg + " (U+000D at character 3)"},
		{"label with an escape sequence", gateway.CheckKeyLabel("\x1b]0;x\x07"), "label", "label " + controlMsg + " (U+001B at character 1)"},
		{"label with a line separator", gateway.CheckKeyLabel("ci\u2028"), "label", "label " + controlMsg + " (U+2028 at character 3)"},
		{"no expiry", gateway.CheckExpiry(nil, now), "", ""},
		{"expiry ahead", gateway.CheckExpiry(&future, now), "", ""},
		{"expiry now", gateway.CheckExpiry(&now, now), "expires_at", "expires_at must be in the future"},
		{"expiry past", gateway.CheckExpiry(&past, now), "expires_at", "expires_at must be in the future"},
		{"grace zero", gateway.CheckGrace(0), "", ""},
		{"grace max", gateway.CheckGrace(gateway.MaxRotationGrace), "", ""},
		{"grace negative", gateway.CheckGrace(-time.Nanosecond), "grace_period_seconds",
			"grace_period_seconds must be from 0 to 2592000 (30 days)"},
		{"grace too long", gateway.CheckGrace(gateway.MaxRotationGrace + time.Second), "grace_period_seconds",
			"grace_period_seconds must be from 0 to 2592000 (30 days)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantFieldError(t, tc.err, tc.field, tc.msg)
		})
	}
}

func TestHashKey(t *testing.T) {
	t.Parallel()
	want := sha256.Sum256([]byte("pb_test_abc.secret"))
	if got := gateway.HashKey("pb_test_abc.secret"); !bytes.Equal(got, want[:]) {
		t.Fatalf("HashKey = %x, want SHA-256 %x", got, want)
	}
}

func TestAPIKeyState(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	past, future := now.Add(-time.Second), now.Add(time.Second)
	tests := []struct {
		name string
		key  gateway.APIKey
		want string
	}{
		{"no expiry", gateway.APIKey{}, gateway.KeyActive},
		{"expires later", gateway.APIKey{ExpiresAt: &future}, gateway.KeyActive},
		{"expires now", gateway.APIKey{ExpiresAt: &now}, gateway.KeyExpired},
		{"expired", gateway.APIKey{ExpiresAt: &past}, gateway.KeyExpired},
		{"revoked", gateway.APIKey{RevokedAt: &past}, gateway.KeyRevoked},
		{"revoked and expired", gateway.APIKey{RevokedAt: &future, ExpiresAt: &past}, gateway.KeyRevoked},
	}
	for _, tc := range tests {
		if got := tc.key.State(now); got != tc.want {
			t.Errorf("%s: state %q, want %q", tc.name, got, tc.want)
		}
	}
}
