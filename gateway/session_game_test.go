package gateway_test

import (
	"context"
	"errors"
	"testing"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

type gameCatalog map[string]gateway.Game

func (c gameCatalog) Provider(context.Context, string) (gateway.Provider, error) {
	return gateway.Provider{}, domain.ErrNotFound
}

func (c gameCatalog) Game(_ context.Context, id string) (gateway.Game, error) {
	if id == "down" {
		return gateway.Game{}, errors.New("database down")
	}
	g, ok := c[id]
	if !ok {
		return gateway.Game{}, domain.ErrNotFound
	}
	return g, nil
}

func TestSessionGame(t *testing.T) {
	cat := gameCatalog{
		"slot":  {ID: "slot", ProviderID: "acme", Code: "acme_slot_96"},
		"table": {ID: "table", ProviderID: "acme", Code: "table"},
		"other": {ID: "other", ProviderID: "rival", Code: "other"},
	}
	sess := gateway.GameSession{ID: "s1", ProviderID: "acme", GameID: "slot"}
	tests := []struct {
		name, code, want string
		err              error
	}{
		{"no code: the session's game", "", "slot", nil},
		{"the session's game by our id", "slot", "slot", nil},
		{"the session's game by its provider code", "acme_slot_96", "slot", nil},
		{"another game of the provider", "table", "table", nil},
		{"a game of another provider", "other", "", gateway.ErrNotSessionsGame},
		{"a game the catalog lacks", "ghost", "", gateway.ErrNotSessionsGame},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := gateway.SessionGame(context.Background(), cat, sess, tt.code)
			if got != tt.want || !errors.Is(err, tt.err) || (tt.err == nil && err != nil) {
				t.Fatalf("SessionGame(%q) = %q, %v; want %q, %v", tt.code, got, err, tt.want, tt.err)
			}
		})
	}
	if _, err := gateway.SessionGame(context.Background(), cat, sess, "down"); err == nil || errors.Is(err, gateway.ErrNotSessionsGame) {
		t.Fatalf("a store failure: %v, want it passed on, not a refusal", err)
	}
}
