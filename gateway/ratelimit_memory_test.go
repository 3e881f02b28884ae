package gateway_test

import (
	"testing"

	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/gateway/gatewaytest"
)

func TestMemoryRateStore(t *testing.T) {
	t.Parallel()
	gatewaytest.RunRateStore(t, func(*testing.T) gateway.RateStore { return gateway.NewMemoryRateStore() })
}
