package gateway_test

import (
	"strings"
	"testing"

	"github.com/pitboss/pitboss/gateway"
)

func TestRevealReason(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, reason, msg string
	}{
		{"none", "", ""},
		{"one line", "support call — ticket #42", ""},
		{"200 characters", strings.Repeat("é", 200), ""},
		{"201 characters", strings.Repeat("é", 201), "reason must be at most 200 characters (it has 201)"},
		{"a line break", "a\nb", "reason " + controlMsg + " (U+000A at character 2)"},
		{"an escape", "\x1b[2J", "reason " + controlMsg + " (U+001B at character 1)"},
		{"not UTF-8", "a\xff", "reason must be valid UTF-8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantFieldError(t, gateway.CheckRevealReason(tc.reason), "reason", tc.msg)
		})
	}
}

func TestCleanText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		max      int
		want     string
	}{
		{"plain", "Mozilla/5.0 (X11; Linux x86_64)", 256, "Mozilla/5.0 (X11; Linux x86_64)"},
		{"empty", "", 256, ""},
		{"control characters", "curl\x1b[2J\x00/8\u2028x", 256, "curl\uFFFD[2J\uFFFD/8\uFFFDx"},
		{"invalid UTF-8", "a\xff\xfeb", 256, "a\uFFFDb"},
		{"cut by characters, not bytes", strings.Repeat("ä", 300), 256, strings.Repeat("ä", 256)},
		{"exactly max", "abc", 3, "abc"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := gateway.CleanText(tc.in, tc.max); got != tc.want {
				t.Fatalf("CleanText(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
			}
		})
	}
}
