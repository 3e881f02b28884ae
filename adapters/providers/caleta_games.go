package providers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/pitboss/pitboss/gateway"
)

// maxGameListBytes bounds Caleta's game list answer: a few thousand games
// of a few hundred bytes each fit many times over.
const maxGameListBytes = 16 << 20

// caletaGameListRequest is the document's game_list_body.
type caletaGameListRequest struct {
	OperatorID string `json:"operator_id"`
}

// caletaGame is the fields of the document's Game the sync reads; the
// images, product, platforms and the deprecated game_id are not kept.
type caletaGame struct {
	Name             string   `json:"name"`
	GameCode         string   `json:"game_code"`
	Enabled          bool     `json:"enabled"`
	Category         string   `json:"category"`
	BlockedCountries []string `json:"blocked_countries"`
}

// listGames asks Caleta's Games API for the games available to us: POST
// {endpoint}/api/game/list, body game_list_body {operator_id}, signed as
// the launch is. A 2xx is a JSON array of Game; a 4xx but 408 and 429
// ({"error"}, the document's 404 for an unknown operator) is Caleta's
// refusal; anything else, an answer that is not such an array or one over
// maxGameListBytes, is the endpoint's failure.
func (a *caletaAdapter) listGames(ctx context.Context, client *http.Client, endpoint string, route gateway.ProviderRoute) ([]gateway.ProviderGame, error) {
	hr, err := a.request(ctx, endpoint, "/api/game/list", route, caletaGameListRequest{OperatorID: route.LaunchOperatorID})
	if err != nil {
		return nil, err
	}
	status, raw, err := doUpTo(client, hr, maxGameListBytes+1)
	if err != nil {
		return nil, err
	}
	switch {
	case status >= 200 && status < 300:
	case refusalStatus(status):
		var ans caletaGameURLAnswer
		_ = json.Unmarshal(raw, &ans)
		return nil, &gateway.ProviderRejectedError{Provider: route.ProviderID, Status: status, Message: clip(ans.Error)}
	default:
		return nil, &failure{reason: fmt.Sprintf("status_%d", status)}
	}
	if len(raw) > maxGameListBytes {
		return nil, &failure{reason: "bad_response", err: fmt.Errorf("the game list is larger than %d MiB", maxGameListBytes>>20)}
	}
	var games []caletaGame
	if err := json.Unmarshal(raw, &games); err != nil {
		return nil, &failure{reason: "bad_response", err: fmt.Errorf("the game list is not a JSON array of games: %w", err)}
	}
	out := make([]gateway.ProviderGame, len(games))
	for i, g := range games {
		out[i] = gateway.ProviderGame{Code: g.GameCode, Name: g.Name, Category: caletaCategory(g.Category), Enabled: g.Enabled,
			BlockedCountries: g.BlockedCountries}
	}
	return out, nil
}

// caletaCategories maps the document's category names (its enum) to our
// categories (docs/providers-and-games.md#catalog-sync).
var caletaCategories = map[string]string{
	"Video Slots": "slots", "Jackpot Slots": "slots",
	"Live Baccarat": "live", "Live Blackjack": "live", "Live Dealer": "live", "Live Dice": "live", "Live Games": "live",
	"Live Keno": "live", "Live Lottery": "live", "Live Roulette": "live",
	"Baccarat": "table", "Blackjack": "table", "Roulette": "table", "Table Games": "table", "Wheel of Fortune": "table",
	"Poker": "poker", "Video Poker": "poker", "Bet On Poker": "poker",
	"Bingo": "bingo", "Video Bingo": "bingo",
	"Lottery":       "lottery",
	"Scratch Cards": "scratch",
	"Casual Games":  "casual", "Multiplayer": "casual",
	"Fixed Odds": "instant",
	"Sportsbook": "sports", "Virtual Sports": "sports", "Player Props": "sports",
	"Unknown": "other",
}

// caletaCategory is our category of a Caleta category name: the table's,
// else (a name the document does not list yet) the name in lower case
// with its runs of other characters as one hyphen, at most 64 characters;
// "other" for none.
func caletaCategory(name string) string {
	name = strings.TrimSpace(name)
	if c, ok := caletaCategories[name]; ok {
		return c
	}
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			continue
		}
		dash = true
	}
	s := b.String()
	if len(s) > 64 {
		s = strings.TrimRight(s[:64], "-")
	}
	if s == "" {
		return "other"
	}
	return s
}
