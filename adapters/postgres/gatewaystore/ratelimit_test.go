package gatewaystore_test

import (
	"testing"

	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/gateway/gatewaytest"
)

func TestRateWindows(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	gatewaytest.RunRateStore(t, func(*testing.T) gateway.RateStore { return gatewaystore.NewRateWindows(pool) })
}
