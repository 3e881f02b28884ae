package providersim

import (
	"maps"
	"slices"
	"testing"

	"github.com/pitboss/pitboss/gateway"
)

// TestEveryProtocolHasADialect: the simulator speaks every protocol of
// gateway's registry, and no other.
func TestEveryProtocolHasADialect(t *testing.T) {
	want := slices.Sorted(slices.Values(gateway.WalletProtocols))
	if got := slices.Sorted(maps.Keys(dialects)); !slices.Equal(got, want) {
		t.Fatalf("simulator dialects %v, registry %v", got, want)
	}
}
