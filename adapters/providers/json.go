package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/pitboss/pitboss/gateway"
)

// maxAnswerBytes bounds what we read of a provider's answer.
const maxAnswerBytes = 64 << 10

// jsonAdapter speaks the "json" kind: POST {endpoint}/session with a JSON
// body in the provider's field names, signed in X-Signature (lowercase hex
// HMAC-SHA256 of the body with the provider secret). A 2xx answer carries
// {"launchUrl": "..."}; a 4xx answer is the provider's refusal,
// {"errorCode": "...", "message": "..."}; anything else is a failure.
type jsonAdapter struct{}

// jsonSessionRequest is the provider's own request shape.
type jsonSessionRequest struct {
	Token         string `json:"token"`
	OperatorID    string `json:"operatorId"`
	PlayerID      string `json:"playerId"`
	GameCode      string `json:"gameCode"`
	Currency      string `json:"ccy"`
	Language      string `json:"lang,omitempty"`
	LobbyURL      string `json:"lobbyUrl,omitempty"`
	OperatorToken string `json:"operatorToken,omitempty"`
	ExpiresAt     string `json:"expiresAt"`
}

type jsonSessionAnswer struct {
	LaunchURL string `json:"launchUrl"`
	ErrorCode string `json:"errorCode"`
	Message   string `json:"message"`
}

func (jsonAdapter) launch(ctx context.Context, client *http.Client, endpoint string, route gateway.ProviderRoute, req gateway.LaunchRequest) (string, error) {
	body, err := json.Marshal(jsonSessionRequest{Token: req.SessionID, OperatorID: req.ClientID, PlayerID: req.PlayerID,
		GameCode: req.GameCode, Currency: req.Currency, Language: req.Language, LobbyURL: req.ReturnURL,
		OperatorToken: req.ClientSessionToken, ExpiresAt: req.ExpiresAt.UTC().Format(time.RFC3339)})
	if err != nil {
		return "", fmt.Errorf("encode launch request: %w", err)
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(endpoint, "/")+"/session", bytes.NewReader(body))
	if err != nil {
		return "", &failure{reason: "connection", err: err}
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	hr.Header.Set("X-Signature", gateway.Signature(route.Secret, body))
	status, raw, err := do(client, hr)
	if err != nil {
		return "", err
	}
	var a jsonSessionAnswer
	decodeErr := json.Unmarshal(raw, &a)
	switch {
	case status >= 200 && status < 300:
		if decodeErr != nil {
			return "", &failure{reason: "bad_response", err: fmt.Errorf("answer is not JSON: %w", decodeErr)}
		}
		return checkGameURL(a.LaunchURL)
	case status >= 400 && status < 500 && status != http.StatusTooManyRequests && status != http.StatusRequestTimeout:
		return "", &gateway.ProviderRejectedError{Provider: route.ProviderID, Status: status, Code: a.ErrorCode,
			Message: clip(a.Message)}
	}
	return "", &failure{reason: fmt.Sprintf("status_%d", status)}
}

// do sends hr and reads at most maxAnswerBytes of the answer.
func do(client *http.Client, hr *http.Request) (int, []byte, error) {
	return doUpTo(client, hr, maxAnswerBytes)
}

// doUpTo sends hr and reads at most limit bytes of the answer.
func doUpTo(client *http.Client, hr *http.Request, limit int64) (int, []byte, error) {
	resp, err := client.Do(hr)
	if err != nil {
		// Not the *url.Error itself: it quotes the URL, and a kind's URL
		// may carry a credential (evolution's casino token).
		var ue *url.Error
		if errors.As(err, &ue) {
			err = fmt.Errorf("%s: %w", ue.Op, ue.Err)
		}
		return 0, nil, &failure{reason: "connection", err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return 0, nil, &failure{reason: "connection", err: fmt.Errorf("read answer: %w", err)}
	}
	return resp.StatusCode, raw, nil
}

// checkGameURL accepts an absolute http(s) URL: anything else would send
// the player nowhere (or somewhere dangerous, such as javascript:).
func checkGameURL(s string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(s) > 2048 {
		return "", &failure{reason: "bad_response", err: fmt.Errorf("game URL %q is not an absolute http(s) URL", clip(s))}
	}
	return u.String(), nil
}

// clip shortens provider text for our answers and logs.
func clip(s string) string {
	s = strings.ToValidUTF8(s, "?")
	if r := []rune(s); len(r) > 200 {
		return string(r[:200]) + "..."
	}
	return s
}
