package gateway_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/gateway"
)

func TestParseRateTiers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    string // tiers joined by spaces, or "" when an error is expected
		errText string
	}{
		{in: gateway.DefaultRateTiers, want: "sandbox:100/1m0s standard:1000/1m0s enterprise:10000/1m0s"},
		{in: " Gold:5/1h , tiny:1/1s,", want: "gold:5/1h0m0s tiny:1/1s"},
		{in: "", errText: "no rate tier"},
		{in: "gold", errText: "not name:limit/window"},
		{in: "gold:5", errText: "not name:limit/window"},
		{in: ":5/1s", errText: "not name:limit/window"},
		{in: "gold:0/1s", errText: "positive integer"},
		{in: "gold:x/1s", errText: "positive integer"},
		{in: "gold:5/500ms", errText: "at least 1s"},
		{in: "gold:5/soon", errText: "at least 1s"},
		{in: "gold:5/1s,GOLD:6/1s", errText: "listed twice"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			tiers, err := gateway.ParseRateTiers(tc.in)
			if tc.errText != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errText) {
					t.Fatalf("error %v, want one saying %q", err, tc.errText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, x := range tiers {
				got = append(got, x.String())
			}
			if strings.Join(got, " ") != tc.want {
				t.Fatalf("tiers %v, want %s", got, tc.want)
			}
		})
	}
}

func TestRateLimitsValidate(t *testing.T) {
	t.Parallel()
	tiers, err := gateway.ParseRateTiers("gold:5/1h")
	if err != nil {
		t.Fatal(err)
	}
	if err := (gateway.RateLimits{Tiers: tiers}).Validate(); err != nil {
		t.Fatalf("a single tier is its own default: %v", err)
	}
	if err := (gateway.RateLimits{Tiers: tiers, DefaultTier: "silver"}).Validate(); err == nil {
		t.Fatal("a default tier that is not configured was accepted")
	}
}

func TestRateLimitsTierAndCheckPlan(t *testing.T) {
	t.Parallel()
	tiers, err := gateway.ParseRateTiers("sandbox:100/60s,standard:1000/60s")
	if err != nil {
		t.Fatal(err)
	}
	r := gateway.RateLimits{Tiers: tiers}
	r.SetDefaults()
	if r.DefaultTier != "standard" {
		t.Fatalf("default tier %q, want standard (DefaultRateTier is configured)", r.DefaultTier)
	}
	tests := []struct {
		plan     string
		tier     string // the tier that applies
		fieldErr string // CheckPlan's message; "" when accepted
	}{
		{plan: "sandbox", tier: "sandbox"},
		{plan: "standard", tier: "standard"},
		{plan: "gold", tier: "standard", fieldErr: `plan "gold" is not a configured tier; tiers are sandbox, standard`},
		{plan: "", tier: "standard", fieldErr: `plan "" is not a configured tier; tiers are sandbox, standard`},
		{plan: strings.Repeat("p", 50), tier: "standard",
			fieldErr: `plan "` + strings.Repeat("p", 40) + `…" is not a configured tier; tiers are sandbox, standard`},
	}
	for _, tc := range tests {
		t.Run(tc.plan, func(t *testing.T) {
			if got := r.Tier(tc.plan).Name; got != tc.tier {
				t.Fatalf("tier %q, want %q", got, tc.tier)
			}
			wantFieldError(t, r.CheckPlan(tc.plan), "plan", tc.fieldErr)
			if tc.fieldErr != "" {
				var fe *gateway.FieldError
				_ = errors.As(r.CheckPlan(tc.plan), &fe)
				if got := fe.Details["tiers"]; !slices.Equal(got.([]string), []string{"sandbox", "standard"}) {
					t.Fatalf("details.tiers %v", got)
				}
			}
		})
	}
}

func TestRateTiersWithoutStandard(t *testing.T) {
	t.Parallel()
	tiers, err := gateway.ParseRateTiers("gold:5/1h,silver:1/1s")
	if err != nil {
		t.Fatal(err)
	}
	r := gateway.RateLimits{Tiers: tiers}
	r.SetDefaults()
	if r.DefaultTier != "gold" {
		t.Fatalf("default tier %q, want the first tier when standard is not configured", r.DefaultTier)
	}
	var empty gateway.RateLimits
	empty.SetDefaults()
	if strings.Join(empty.Names(), ",") != "sandbox,standard,enterprise" || empty.DefaultTier != "standard" {
		t.Fatalf("defaults %v / %q", empty.Names(), empty.DefaultTier)
	}
}

func TestRateTierDecide(t *testing.T) {
	t.Parallel()
	reset := time.Date(2026, 3, 14, 15, 10, 0, 0, time.UTC)
	tier := gateway.RateTier{Name: "t", Limit: 3, Window: time.Minute}
	tests := []struct {
		count     int
		allowed   bool
		remaining int
	}{
		{1, true, 2}, {3, true, 0}, {4, false, 0}, {100, false, 0},
	}
	for _, tc := range tests {
		d := tier.Decide(tc.count, reset)
		if d.Allowed != tc.allowed || d.Remaining != tc.remaining || d.Limit != 3 || !d.ResetAt.Equal(reset) {
			t.Errorf("count %d: %+v, want allowed %v remaining %d", tc.count, d, tc.allowed, tc.remaining)
		}
	}
}
