package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/pitboss/pitboss/gateway"
)

// evolutionAdapter speaks the "evolution" kind: Evolution's user
// authentication, POST {endpoint}/ua/v1/{casino key}/{casino token} with
// the player, its session and the game's table as JSON. The answer's
// "entry" is the game's address, relative to the endpoint (or absolute).
// An answer {"errors": [{"code": "G.n", "message"}]} is a refusal, except
// Evolution's system errors (G.0, G.4..G.7: "should be retried"), which
// are the endpoint's failure like a 5xx. See
// docs/protocols/evolution.md#launch.
type evolutionAdapter struct{}

type evolutionUARequest struct {
	UUID   string            `json:"uuid"`
	Player evolutionUAPlayer `json:"player"`
	Config evolutionUAConfig `json:"config"`
}

type evolutionUAPlayer struct {
	ID       string             `json:"id"`
	Update   bool               `json:"update"`
	Country  string             `json:"country"`
	Language string             `json:"language"`
	Currency string             `json:"currency"`
	Session  evolutionUASession `json:"session"`
}

// evolutionUASession: the launch API does not carry the player's IP
// address, so none is sent (docs/protocols/evolution.md#launch).
type evolutionUASession struct {
	ID string `json:"id"`
}

type evolutionUAConfig struct {
	Game    evolutionUAGame    `json:"game"`
	Channel evolutionUAChannel `json:"channel"`
	URLs    evolutionUAURLs    `json:"urls"`
}

type evolutionUAGame struct {
	Table struct {
		ID string `json:"id"`
	} `json:"table"`
}

type evolutionUAChannel struct {
	Wrapped bool `json:"wrapped"`
}

type evolutionUAURLs struct {
	Lobby string `json:"lobby,omitempty"`
}

type evolutionUAAnswer struct {
	Entry  string `json:"entry"`
	Errors []struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"errors"`
}

// evolutionSystemErrors are the user-authentication codes Evolution
// describes as system errors to be retried.
var evolutionSystemErrors = []string{"G.0", "G.4", "G.5", "G.6", "G.7"}

func (evolutionAdapter) launch(ctx context.Context, client *http.Client, endpoint string, route gateway.ProviderRoute, req gateway.LaunchRequest) (string, error) {
	ua := evolutionUARequest{UUID: uuid.NewString(),
		Player: evolutionUAPlayer{ID: req.PlayerID, Update: true, Country: req.CountryOr(route.LaunchCountry),
			Language: twoLetterLanguage(req.Language), Currency: req.Currency,
			Session: evolutionUASession{ID: req.SessionID}},
		Config: evolutionUAConfig{URLs: evolutionUAURLs{Lobby: req.ReturnURL}}}
	ua.Config.Game.Table.ID = req.GameCode
	body, err := json.Marshal(ua)
	if err != nil {
		return "", fmt.Errorf("encode launch request: %w", err)
	}
	base := strings.TrimRight(endpoint, "/")
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/ua/v1/"+url.PathEscape(route.LaunchOperatorID)+"/"+
		url.PathEscape(route.LaunchSecret), bytes.NewReader(body))
	if err != nil {
		return "", &failure{reason: "connection", err: fmt.Errorf("build the user authentication request: %w", err)}
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	status, raw, err := do(client, hr)
	if err != nil {
		return "", err
	}
	var ans evolutionUAAnswer
	decodeErr := json.Unmarshal(raw, &ans)
	if decodeErr == nil && len(ans.Errors) > 0 && status < 500 && (status < 300 || refusalStatus(status)) {
		e := ans.Errors[0]
		if slices.Contains(evolutionSystemErrors, e.Code) {
			return "", &failure{reason: fmt.Sprintf("status_%d", status),
				err: fmt.Errorf("evolution system error %s: %s", clip(e.Code), clip(e.Message))}
		}
		return "", &gateway.ProviderRejectedError{Provider: route.ProviderID, Status: status, Code: clip(e.Code),
			Message: clip(e.Message)}
	}
	switch {
	case status >= 200 && status < 300:
		if decodeErr != nil {
			return "", &failure{reason: "bad_response", err: fmt.Errorf("answer is not JSON: %w", decodeErr)}
		}
		if strings.HasPrefix(ans.Entry, "/") && !strings.HasPrefix(ans.Entry, "//") {
			return checkGameURL(base + ans.Entry)
		}
		return checkGameURL(ans.Entry)
	case refusalStatus(status):
		return "", &gateway.ProviderRejectedError{Provider: route.ProviderID, Status: status, Message: "refusal without errors"}
	}
	return "", &failure{reason: fmt.Sprintf("status_%d", status)}
}
