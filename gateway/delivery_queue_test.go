package gateway_test

import (
	"strings"
	"testing"

	"github.com/pitboss/pitboss/gateway"
)

func TestNewSigningSecret(t *testing.T) {
	t.Parallel()
	a, b := gateway.NewSigningSecret(), gateway.NewSigningSecret()
	if a == b || !strings.HasPrefix(a, gateway.SigningSecretPrefix) || len(a) != len(gateway.SigningSecretPrefix)+43 {
		t.Fatalf("secrets %q %q", a, b)
	}
}

func TestAttemptResultSucceeded(t *testing.T) {
	t.Parallel()
	tests := []struct {
		r    gateway.AttemptResult
		want bool
	}{
		{gateway.AttemptResult{StatusCode: 200}, true},
		{gateway.AttemptResult{StatusCode: 204}, true},
		{gateway.AttemptResult{StatusCode: 299}, true},
		{gateway.AttemptResult{StatusCode: 199}, false},
		{gateway.AttemptResult{StatusCode: 300}, false},
		{gateway.AttemptResult{StatusCode: 500, Error: "HTTP 500"}, false},
		{gateway.AttemptResult{Error: "timeout"}, false},
		{gateway.AttemptResult{StatusCode: 200, Error: "body read"}, false},
	}
	for _, tc := range tests {
		if got := tc.r.Succeeded(); got != tc.want {
			t.Errorf("%+v: succeeded %v, want %v", tc.r, got, tc.want)
		}
	}
}

func TestDeliveryJobIdempotencyKey(t *testing.T) {
	t.Parallel()
	j := gateway.DeliveryJob{EventID: "ev-1", EndpointID: gateway.CallbackEndpointID}
	if got := j.IdempotencyKey(); got != "ev-1:callback" {
		t.Fatalf("idempotency key %q", got)
	}
}
