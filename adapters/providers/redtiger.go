package providers

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/pitboss/pitboss/gateway"
)

// redTigerAdapter speaks the "redtiger" kind: Red Tiger opens a game at an
// address the operator builds, {endpoint}/{game code}?token=...&currency=
// ...&userId=...&casino=...&lobbyUrl=...&playMode=real; the game server
// then authenticates the token through the wallet's /auth. No call is
// made here, so an endpoint never fails: the balancing picks which of the
// provider's launch hosts the player is sent to, and its breaker stays
// closed. See docs/protocols/redtiger.md#launch.
type redTigerAdapter struct{}

func (redTigerAdapter) launch(_ context.Context, _ *http.Client, endpoint string, route gateway.ProviderRoute, req gateway.LaunchRequest) (string, error) {
	q := url.Values{"token": {req.SessionID}, "currency": {req.Currency}, "userId": {req.PlayerID},
		"playMode": {"real"}}
	if route.LaunchOperatorID != "" {
		q.Set("casino", route.LaunchOperatorID)
	}
	if req.ReturnURL != "" {
		q.Set("lobbyUrl", req.ReturnURL)
	}
	return checkGameURL(strings.TrimRight(endpoint, "/") + "/" + url.PathEscape(req.GameCode) + "?" + q.Encode())
}
