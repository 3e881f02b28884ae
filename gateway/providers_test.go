package gateway_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/gateway"
)

func TestProviderRouteValidate(t *testing.T) {
	t.Parallel()
	valid := func() gateway.ProviderRoute {
		return gateway.ProviderRoute{ProviderID: "acme", Kind: gateway.ProviderKindJSON,
			Endpoints: []string{"https://a.example/api", "http://b.example:8080"}, Balancing: gateway.BalancingPriority,
			Timeout: gateway.DefaultProviderTimeout, BreakerFailures: gateway.DefaultBreakerFailures,
			BreakerCooldown: gateway.DefaultBreakerCooldown}
	}
	tests := []struct {
		name   string
		change func(*gateway.ProviderRoute)
		errs   []string // substrings of the error, each problem reported; nil: valid
	}{
		{name: "valid", change: func(*gateway.ProviderRoute) {}},
		{name: "demo without endpoints", change: func(r *gateway.ProviderRoute) { r.Kind, r.Endpoints = gateway.ProviderKindDemo, nil }},
		{name: "round robin form-xml", change: func(r *gateway.ProviderRoute) {
			r.Kind, r.Balancing = gateway.ProviderKindFormXML, gateway.BalancingRoundRobin
		}},
		{name: "bounds", change: func(r *gateway.ProviderRoute) {
			r.Timeout, r.BreakerFailures, r.BreakerCooldown = gateway.MaxProviderTimeout, gateway.MaxBreakerFailures, gateway.MinBreakerCooldown
		}},
		{name: "unknown kind", change: func(r *gateway.ProviderRoute) { r.Kind = "soap" },
			errs: []string{`kind "soap" is not one of demo, json, form-xml`}},
		{name: "unknown balancing", change: func(r *gateway.ProviderRoute) { r.Balancing = "random" },
			errs: []string{`balancing "random" is not priority or round_robin`}},
		{name: "too many endpoints", change: func(r *gateway.ProviderRoute) {
			r.Endpoints = slices.Repeat([]string{"https://a.example"}, gateway.MaxProviderEndpoints+1)
		}, errs: []string{"9 endpoints; at most 8"}},
		{name: "outbound without endpoints", change: func(r *gateway.ProviderRoute) { r.Endpoints = nil },
			errs: []string{"a json provider needs at least one endpoint"}},
		{name: "bad endpoints", change: func(r *gateway.ProviderRoute) {
			r.Endpoints = []string{"https://ok.example", "ftp://a.example", "https://a.example?x=1", "https://u@a.example",
				"https://a.example#f", "https://"}
		}, errs: []string{"endpoint 2 is not", "endpoint 3 is not", "endpoint 4 is not", "endpoint 5 is not", "endpoint 6 is not"}},
		{name: "timeout too short", change: func(r *gateway.ProviderRoute) { r.Timeout = time.Millisecond },
			errs: []string{"timeout 1ms is outside 50ms..30s"}},
		{name: "breaker failures zero", change: func(r *gateway.ProviderRoute) { r.BreakerFailures = 0 },
			errs: []string{"breaker failures 0 is outside 1..100"}},
		{name: "cooldown too long", change: func(r *gateway.ProviderRoute) { r.BreakerCooldown = 2 * time.Hour },
			errs: []string{"breaker cooldown 2h0m0s is outside 100ms..1h0m0s"}},
		{name: "every problem reported", change: func(r *gateway.ProviderRoute) { r.Kind, r.Timeout = "soap", 0 },
			errs: []string{`kind "soap"`, "timeout 0s"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := valid()
			tc.change(&r)
			err := r.Validate()
			if tc.errs == nil {
				if err != nil {
					t.Fatalf("valid route refused: %v", err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), "provider acme routing: ") {
				t.Fatalf("error %v, want one about provider acme's routing", err)
			}
			for _, want := range tc.errs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}

func TestProviderRouteOutbound(t *testing.T) {
	t.Parallel()
	for _, k := range gateway.ProviderKinds {
		if got := (gateway.ProviderRoute{Kind: k}).Outbound(); got != (k != gateway.ProviderKindDemo) {
			t.Errorf("kind %s outbound %v", k, got)
		}
	}
}
