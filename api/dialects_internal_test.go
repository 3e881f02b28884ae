package api

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pitboss/pitboss/gateway"
)

// TestDialectsAreTheRegistry: a wallet protocol is registered once by name
// (gateway's registry); its server dialect is one line keyed by that name
// (and its simulator dialect: providersim's TestEveryProtocolHasADialect),
// so a protocol cannot be half added.
func TestDialectsAreTheRegistry(t *testing.T) {
	want := slices.Sorted(slices.Values(gateway.WalletProtocols))
	if got := slices.Sorted(maps.Keys(dialects)); !slices.Equal(got, want) {
		t.Errorf("server dialects %v, registry %v", got, want)
	}
	for _, name := range gateway.WalletProtocols {
		p, ok := gateway.WalletProtocolOf(name)
		if !ok || p.Doc == "" {
			t.Errorf("protocol %s: %+v has no docs page", name, p)
			continue
		}
		if _, err := os.Stat(filepath.Join("..", p.Doc)); err != nil {
			t.Errorf("protocol %s: its docs page: %v", name, err)
		}
	}
}
