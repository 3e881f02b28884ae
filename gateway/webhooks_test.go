package gateway_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

var unknownKindTail = "; kinds are " + strings.Join(gateway.WebhookKinds, ", ") + ` or "*"`

func TestCheckWebhookKinds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		kinds []string
		want  []string
		msg   string
		kind  string // details.kind
	}{
		{name: "one", kinds: []string{gateway.KindBet}, want: []string{"bet"}},
		{name: "all", kinds: []string{"*"}, want: []string{"*"}},
		{name: "duplicates dropped, order kept", kinds: []string{"win", "bet", "win", "*", "*"}, want: []string{"win", "bet", "*"}},
		{name: "every kind", kinds: gateway.WebhookKinds, want: gateway.WebhookKinds},
		{name: "none", kinds: nil, msg: `kinds must list at least one event kind (or "*")`},
		{name: "empty", kinds: []string{}, msg: `kinds must list at least one event kind (or "*")`},
		{name: "unknown", kinds: []string{"bet", "jackpot"}, msg: "unknown event kind jackpot" + unknownKindTail, kind: "jackpot"},
		{name: "unknown long", kinds: []string{strings.Repeat("k", 60)},
			msg: "unknown event kind " + strings.Repeat("k", 40) + "…" + unknownKindTail, kind: strings.Repeat("k", 40) + "…"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := gateway.CheckWebhookKinds(tc.kinds)
			if fe := wantFieldError(t, err, "kinds", tc.msg); fe != nil {
				if tc.kind != "" && fe.Details["kind"] != tc.kind {
					t.Fatalf("details %v, want kind %q", fe.Details, tc.kind)
				}
				if tc.kind == "" && fe.Details != nil {
					t.Fatalf("details %v, want none", fe.Details)
				}
				return
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("kinds %v, want %v", got, tc.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestNewWebhookEndpoint(t *testing.T) {
	t.Parallel()
	url := "https://hooks.example.com/in"
	tests := []struct {
		name         string
		given        gateway.WebhookChange
		allowPrivate bool
		want         gateway.WebhookEndpoint
		field, msg   string
	}{
		{name: "defaults", given: gateway.WebhookChange{URL: &url, Kinds: []string{"bet", "bet", "win"}},
			want: gateway.WebhookEndpoint{ClientID: "acme", URL: url, Kinds: []string{"bet", "win"}, Enabled: true}},
		{name: "every field", given: gateway.WebhookChange{URL: &url, Kinds: []string{"*"}, Description: ptr("BI"), Enabled: ptr(false)},
			want: gateway.WebhookEndpoint{ClientID: "acme", URL: url, Kinds: []string{"*"}, Description: "BI"}},
		{name: "private allowed", given: gateway.WebhookChange{URL: ptr("http://127.0.0.1:9/in"), Kinds: []string{"*"}},
			allowPrivate: true,
			want:         gateway.WebhookEndpoint{ClientID: "acme", URL: "http://127.0.0.1:9/in", Kinds: []string{"*"}, Enabled: true}},
		{name: "no url", given: gateway.WebhookChange{Kinds: []string{"*"}}, field: "url", msg: "url is required"},
		{name: "empty url", given: gateway.WebhookChange{URL: ptr(""), Kinds: []string{"*"}}, field: "url", msg: "url is required"},
		{name: "private url", given: gateway.WebhookChange{URL: ptr("http://10.0.0.1/in"), Kinds: []string{"*"}}, field: "url",
			msg: "url points at a non-public address (10.0.0.1: private); callbacks go to public addresses only"},
		{name: "url checked before kinds", given: gateway.WebhookChange{URL: ptr("ftp://x")}, field: "url",
			msg: "url must be an absolute http or https URL"},
		{name: "no kinds", given: gateway.WebhookChange{URL: &url}, field: "kinds",
			msg: `kinds must list at least one event kind (or "*")`},
		{name: "description 256 characters", given: gateway.WebhookChange{URL: &url, Kinds: []string{"*"},
			Description: ptr(strings.Repeat("ü", 256))},
			want: gateway.WebhookEndpoint{ClientID: "acme", URL: url, Kinds: []string{"*"}, Description: strings.Repeat("ü", 256),
				Enabled: true}},
		{name: "description too long", given: gateway.WebhookChange{URL: &url, Kinds: []string{"*"},
			Description: ptr(strings.Repeat("ü", 257))}, field: "description", msg: "description must be at most 256 characters (it has 257)"},
		{name: "description not UTF-8", given: gateway.WebhookChange{URL: &url, Kinds: []string{"*"}, Description: ptr("\xff")},
			field: "description", msg: "description must be valid UTF-8"},
		{name: "description with a line feed", given: gateway.WebhookChange{URL: &url, Kinds: []string{"*"}, Description: ptr("ops\nteam")},
			field: "description", msg: "description " + controlMsg + " (U+000A at character 4)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := gateway.NewWebhookEndpoint("acme", tc.given, tc.allowPrivate)
			if wantFieldError(t, err, tc.field, tc.msg) != nil {
				return
			}
			if got.ClientID != tc.want.ClientID || got.URL != tc.want.URL || !slices.Equal(got.Kinds, tc.want.Kinds) ||
				got.Description != tc.want.Description || got.Enabled != tc.want.Enabled {
				t.Fatalf("endpoint %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestCheckWebhookChange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		given      gateway.WebhookChange
		want       gateway.WebhookChange
		field, msg string
	}{
		{name: "nothing", given: gateway.WebhookChange{}, want: gateway.WebhookChange{}},
		{name: "enabled only", given: gateway.WebhookChange{Enabled: ptr(false)}, want: gateway.WebhookChange{Enabled: ptr(false)}},
		{name: "kinds deduplicated", given: gateway.WebhookChange{Kinds: []string{"win", "win"}},
			want: gateway.WebhookChange{Kinds: []string{"win"}}},
		{name: "url", given: gateway.WebhookChange{URL: ptr("https://example.com/b")},
			want: gateway.WebhookChange{URL: ptr("https://example.com/b")}},
		{name: "empty url", given: gateway.WebhookChange{URL: ptr("")}, field: "url", msg: "url is required"},
		{name: "empty kinds", given: gateway.WebhookChange{Kinds: []string{}}, field: "kinds",
			msg: `kinds must list at least one event kind (or "*")`},
		{name: "unknown kind", given: gateway.WebhookChange{Kinds: []string{"jackpot"}}, field: "kinds",
			msg: "unknown event kind jackpot" + unknownKindTail},
		{name: "long description", given: gateway.WebhookChange{Description: ptr(strings.Repeat("d", 257))},
			field: "description", msg: "description must be at most 256 characters (it has 257)"},
		{name: "description with a C1 control", given: gateway.WebhookChange{Description: ptr("ops\u0085")},
			field: "description", msg: "description " + controlMsg + " (U+0085 at character 4)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := gateway.CheckWebhookChange(tc.given, false)
			if wantFieldError(t, err, tc.field, tc.msg) != nil {
				return
			}
			if !equalPtr(got.URL, tc.want.URL) || !slices.Equal(got.Kinds, tc.want.Kinds) || (got.Kinds == nil) != (tc.want.Kinds == nil) ||
				!equalPtr(got.Description, tc.want.Description) || !equalPtr(got.Enabled, tc.want.Enabled) {
				t.Fatalf("change %+v, want %+v", got, tc.want)
			}
		})
	}
}

func equalPtr[T comparable](a, b *T) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func TestKindOfEvent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		event domain.EventType
		kind  string
	}{
		{domain.EventGameLaunched, gateway.KindGameLaunched},
		{domain.EventBetPlaced, gateway.KindBet},
		{domain.EventWinCredited, gateway.KindWin},
		{domain.EventBetRolledBack, gateway.KindRollback},
		{domain.EventWinReversed, gateway.KindRollback},
		{domain.EventRollbackRecorded, gateway.KindRollback},
		{domain.EventDeposited, gateway.KindDeposit},
		{domain.EventWithdrawn, gateway.KindWithdrawal},
		{domain.EventTransferred, gateway.KindTransfer},
		{domain.EventAdjusted, gateway.KindAdjustment},
		{domain.EventBalanceSynced, gateway.KindBalanceSync},
		{domain.EventRoundClosed, gateway.KindRoundClosed},
	}
	for _, tc := range tests {
		if k, ok := gateway.KindOfEvent(tc.event); !ok || k != tc.kind {
			t.Errorf("KindOfEvent(%s) = %q, %v; want %q", tc.event, k, ok, tc.kind)
		}
		if !slices.Contains(gateway.WebhookKinds, tc.kind) {
			t.Errorf("kind %q of %s is not in WebhookKinds", tc.kind, tc.event)
		}
	}
	if k, ok := gateway.KindOfEvent("wallet.something_new.v1"); ok {
		t.Errorf("an unknown event type has kind %q", k)
	}
}
