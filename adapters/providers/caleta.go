package providers

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/pitboss/pitboss/gateway"
)

// caletaAdapter speaks the "caleta" kind: the Games API of the Caleta
// Gaming System API, Operator's Guide 1.5. POST {endpoint}/api/game/url
// with the document's game_url_body as JSON, the raw body signed by us:
// X-Auth-Signature is the standard base64 of its RSASSA-PKCS1-v1_5
// SHA-256 signature with our launch private key (the provider holds the
// public half). A 200 answer is {"url": "..."}; a 4xx answer (but 408/429)
// is a refusal, {"error": "..."} (the document's 404); anything else is
// the endpoint's failure. See docs/protocols/caleta.md#launch. It also
// asks for a round's detail page, POST {endpoint}/api/game/round, signed
// the same way (docs/protocols/caleta.md#round-details).
type caletaAdapter struct {
	keys sync.Map // PEM text -> *rsa.PrivateKey: parsing checks the key, which is slow
}

// caletaGameURLRequest is the document's game_url_body. Every field the
// document requires is always sent; deposit_url and the deprecated game_id
// are not.
type caletaGameURLRequest struct {
	OperatorID   string `json:"operator_id"`
	SubPartnerID string `json:"sub_partner_id"`
	Token        string `json:"token"`
	User         string `json:"user"`
	GameCode     string `json:"game_code"`
	Currency     string `json:"currency"`
	Country      string `json:"country"`
	Lang         string `json:"lang"`
	LobbyURL     string `json:"lobby_url"`
}

type caletaGameURLAnswer struct {
	URL   string `json:"url"`
	Error string `json:"error"`
}

// CaletaSignature is the X-Auth-Signature of body: base64 of the RSA-SHA256
// (PKCS #1 v1.5) signature with key. Exported for tests and provider-side
// tools.
func CaletaSignature(key *rsa.PrivateKey, body []byte) (string, error) {
	sum := sha256.Sum256(body)
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		return "", fmt.Errorf("sign launch request: %w", err)
	}
	return base64.StdEncoding.EncodeToString(sig), nil
}

func (a *caletaAdapter) key(pemText string) (*rsa.PrivateKey, error) {
	if k, ok := a.keys.Load(pemText); ok {
		return k.(*rsa.PrivateKey), nil
	}
	k, err := gateway.ParseRSAPrivateKey(pemText)
	if err != nil {
		return nil, err
	}
	a.keys.Store(pemText, k)
	return k, nil
}

func (a *caletaAdapter) launch(ctx context.Context, client *http.Client, endpoint string, route gateway.ProviderRoute, req gateway.LaunchRequest) (string, error) {
	status, raw, err := a.post(ctx, client, endpoint, "/api/game/url", route, caletaGameURLRequest{
		OperatorID: route.LaunchOperatorID, SubPartnerID: req.ClientID, Token: req.SessionID, User: req.PlayerID,
		GameCode: req.GameCode, Currency: req.Currency, Country: req.CountryOr(route.LaunchCountry),
		Lang: twoLetterLanguage(req.Language), LobbyURL: req.ReturnURL})
	if err != nil {
		return "", err
	}
	var ans caletaGameURLAnswer
	decodeErr := json.Unmarshal(raw, &ans)
	switch {
	case status >= 200 && status < 300:
		if decodeErr != nil {
			return "", &failure{reason: "bad_response", err: fmt.Errorf("answer is not JSON: %w", decodeErr)}
		}
		return checkGameURL(ans.URL)
	case refusalStatus(status):
		return "", &gateway.ProviderRejectedError{Provider: route.ProviderID, Status: status, Message: clip(ans.Error)}
	}
	return "", &failure{reason: fmt.Sprintf("status_%d", status)}
}

// caletaGameRoundRequest is the document's game_round_body: operator_id
// is the only field it requires; the round, its player and one of its
// transactions are what name the round.
type caletaGameRoundRequest struct {
	OperatorID      string `json:"operator_id"`
	TransactionUUID string `json:"transaction_uuid,omitempty"`
	User            string `json:"user,omitempty"`
	Round           string `json:"round"`
}

// caletaGameRoundAnswer is a 200's {"url"} or the document's 405
// {"code": "100", "message": "Invalid Round"} (code text or a number; the
// document's example has it as text). error is read too: the 404 of the
// other Games API calls.
type caletaGameRoundAnswer struct {
	URL     string          `json:"url"`
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
	Error   string          `json:"error"`
}

// roundDetail asks Caleta's Games API for the address of a round's detail
// page: POST {endpoint}/api/game/round, signed as the launch is. A 2xx is
// {"url"}; a 4xx but 408 and 429 (the document's 405 "Invalid Round") is
// Caleta's refusal; anything else is the endpoint's failure.
func (a *caletaAdapter) roundDetail(ctx context.Context, client *http.Client, endpoint string, route gateway.ProviderRoute,
	req gateway.RoundDetailRequest) (string, error) {
	status, raw, err := a.post(ctx, client, endpoint, "/api/game/round", route, caletaGameRoundRequest{
		OperatorID: route.LaunchOperatorID, TransactionUUID: req.TransactionID, User: req.PlayerID, Round: req.RoundID})
	if err != nil {
		return "", err
	}
	var ans caletaGameRoundAnswer
	decodeErr := json.Unmarshal(raw, &ans)
	switch {
	case status >= 200 && status < 300:
		if decodeErr != nil {
			return "", &failure{reason: "bad_response", err: fmt.Errorf("answer is not JSON: %w", decodeErr)}
		}
		return checkGameURL(ans.URL)
	case refusalStatus(status):
		msg := ans.Message
		if msg == "" {
			msg = ans.Error
		}
		return "", &gateway.ProviderRejectedError{Provider: route.ProviderID, Status: status,
			Code: clip(jsonText(ans.Code)), Message: clip(msg)}
	}
	return "", &failure{reason: fmt.Sprintf("status_%d", status)}
}

// post sends body as JSON to {endpoint}{path}, signed in X-Auth-Signature
// with our launch private key (every Games API call is), and returns the
// answer's status and bytes.
func (a *caletaAdapter) post(ctx context.Context, client *http.Client, endpoint, path string, route gateway.ProviderRoute,
	body any) (int, []byte, error) {
	hr, err := a.request(ctx, endpoint, path, route, body)
	if err != nil {
		return 0, nil, err
	}
	return do(client, hr)
}

// request is post's signed request.
func (a *caletaAdapter) request(ctx context.Context, endpoint, path string, route gateway.ProviderRoute, body any) (*http.Request, error) {
	key, err := a.key(route.LaunchSecret)
	if err != nil { // CheckLaunchReady refused this before; kept for safety
		return nil, fmt.Errorf("caleta launch key of provider %s: %w", route.ProviderID, err)
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode %s request: %w", path, err)
	}
	sig, err := CaletaSignature(key, raw)
	if err != nil {
		return nil, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(endpoint, "/")+path, bytes.NewReader(raw))
	if err != nil {
		return nil, &failure{reason: "connection", err: err}
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	hr.Header.Set("X-Auth-Signature", sig)
	return hr, nil
}

// jsonText is a JSON string's text, or any other JSON value as written
// ("" for none).
func jsonText(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(v))
}

// refusalStatus: a 4xx other than 408 and 429 is the provider's answer
// about this launch, not a sign of an unhealthy endpoint.
func refusalStatus(status int) bool {
	return status >= 400 && status < 500 && status != http.StatusTooManyRequests && status != http.StatusRequestTimeout
}

// twoLetterLanguage is the ISO 639-1 code of a language tag (pt-BR -> pt),
// "en" when none was given: Caleta's and Evolution's launches take two
// letters.
func twoLetterLanguage(tag string) string {
	primary, _, _ := strings.Cut(strings.ReplaceAll(tag, "_", "-"), "-")
	if len(primary) != 2 {
		return "en"
	}
	return strings.ToLower(primary)
}
