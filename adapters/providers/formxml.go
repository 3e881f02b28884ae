package providers

import (
	"context"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/pitboss/pitboss/gateway"
)

// formXMLAdapter speaks the "form-xml" kind: POST {endpoint}/launch with an
// application/x-www-form-urlencoded body whose hash field is the lowercase
// hex HMAC-SHA256, keyed with the provider secret, of the other fields
// sorted by name and joined as name=value&name=value (values not encoded).
// The answer is XML: <launchResponse><result>OK</result><gameUrl>...
// </gameUrl></launchResponse>, or result ERROR with errorCode and
// errorMessage (a refusal, whatever the HTTP status). A 5xx or anything
// unreadable is a failure.
type formXMLAdapter struct{}

type formXMLAnswer struct {
	XMLName      xml.Name `xml:"launchResponse"`
	Result       string   `xml:"result"`
	GameURL      string   `xml:"gameUrl"`
	ErrorCode    string   `xml:"errorCode"`
	ErrorMessage string   `xml:"errorMessage"`
}

// FormXMLHash is the form-xml kind's signature of form (its hash field
// excluded). Exported so provider-side code and tests can check it.
func FormXMLHash(secret string, form url.Values) string {
	names := make([]string, 0, len(form))
	for k := range form {
		if k != "hash" {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = k + "=" + form.Get(k)
	}
	return gateway.Signature(secret, []byte(strings.Join(parts, "&")))
}

func (formXMLAdapter) launch(ctx context.Context, client *http.Client, endpoint string, route gateway.ProviderRoute, req gateway.LaunchRequest) (string, error) {
	form := url.Values{
		"session":  {req.SessionID},
		"operator": {req.ClientID},
		"user":     {req.PlayerID},
		"game":     {req.GameCode},
		"currency": {req.Currency},
		"expires":  {fmt.Sprint(req.ExpiresAt.UTC().Unix())},
	}
	for k, v := range map[string]string{"language": req.Language, "exit_url": req.ReturnURL,
		"external_token": req.ClientSessionToken} {
		if v != "" {
			form.Set(k, v)
		}
	}
	form.Set("hash", FormXMLHash(route.Secret, form))
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(endpoint, "/")+"/launch",
		strings.NewReader(form.Encode()))
	if err != nil {
		return "", &failure{reason: "connection", err: err}
	}
	hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	hr.Header.Set("Accept", "application/xml, text/xml")
	status, raw, err := do(client, hr)
	if err != nil {
		return "", err
	}
	if status >= 500 || status == http.StatusTooManyRequests || status == http.StatusRequestTimeout ||
		(status >= 300 && status < 400) {
		return "", &failure{reason: fmt.Sprintf("status_%d", status)}
	}
	var a formXMLAnswer
	if err := xml.Unmarshal(raw, &a); err != nil {
		if status >= 400 {
			return "", &gateway.ProviderRejectedError{Provider: route.ProviderID, Status: status, Message: "unreadable refusal"}
		}
		return "", &failure{reason: "bad_response", err: fmt.Errorf("answer is not the expected XML: %w", err)}
	}
	if status < 300 && strings.EqualFold(a.Result, "OK") {
		return checkGameURL(a.GameURL)
	}
	if status < 300 && !strings.EqualFold(a.Result, "ERROR") {
		return "", &failure{reason: "bad_response", err: fmt.Errorf("result %q is neither OK nor ERROR", clip(a.Result))}
	}
	return "", &gateway.ProviderRejectedError{Provider: route.ProviderID, Status: status, Code: clip(a.ErrorCode),
		Message: clip(a.ErrorMessage)}
}
