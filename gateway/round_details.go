package gateway

import (
	"context"
	"errors"
)

// RoundDetailRequest names one round at its provider, for the provider's
// own page of it (GET /api/v1/rounds/{round_id}, docs/read-models.md).
type RoundDetailRequest struct {
	// ClientID is the client whose round it is (Caleta's sub-partner).
	ClientID string
	// PlayerID is the round's player: the user the provider knows.
	PlayerID string
	// RoundID is the provider's round id.
	RoundID string
	// TransactionID is one of the round's transactions as the provider
	// named it (its first bet's, else its first transaction's); empty
	// when the history holds none.
	TransactionID string
}

// ErrRoundDetailUnsupported says a provider's launch kind has no call for
// the address of a round's detail page: only Caleta's Games API has one
// (POST /api/game/round).
var ErrRoundDetailUnsupported = errors.New("the provider's protocol has no round-detail call")

// RoundDetails asks providers for their own page of one round: an address
// an operator's support can open, kept by the provider.
type RoundDetails interface {
	// RoundDetailURL returns the address of the provider's page of req's
	// round, through the provider's endpoints, failover and circuit
	// breakers like a launch. A kind without such a call is
	// ErrRoundDetailUnsupported; a provider that cannot be reached is a
	// *ProviderUnavailableError; one that answered with a refusal (Caleta's
	// "Invalid Round") is a *ProviderRejectedError.
	RoundDetailURL(ctx context.Context, p ProviderRoute, req RoundDetailRequest) (string, error)
}
