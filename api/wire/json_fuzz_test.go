package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pitboss/pitboss/domain"
)

// The request bodies of the handler packages, by shape (package wire
// cannot import them): the decoder is fuzzed into each kind of target the
// API has. The bodies themselves are fuzzed through their routes by
// FuzzRequestBodies (package api).
type (
	walletCall struct { // api/dialect/pitboss
		SessionID              string            `json:"session_id"`
		PlayerID               string            `json:"player_id"`
		ExternalTxID           string            `json:"transaction_id"`
		RoundID                string            `json:"round_id"`
		RoundClosed            bool              `json:"round_closed"`
		GameID                 string            `json:"game_id"`
		Amount                 domain.AmountText `json:"amount"`
		Currency               string            `json:"currency"`
		ReferenceTransactionID string            `json:"reference_transaction_id"`
		Promo                  bool              `json:"promo"`
	}
	createTransactionRequest struct { // api
		Type         string            `json:"type"`
		ExternalTxID string            `json:"transaction_id"`
		PlayerID     string            `json:"player_id"`
		Amount       domain.AmountText `json:"amount"`
		Currency     string            `json:"currency"`
		Direction    string            `json:"direction"`
		Reason       string            `json:"reason"`
	}
	launchRequest struct { // api
		Provider     string `json:"provider"`
		GameID       string `json:"game_id"`
		PlayerID     string `json:"player_id"`
		Currency     string `json:"currency"`
		SessionToken string `json:"session_token"`
		Language     string `json:"language"`
	}
	transferLaunchRequest struct { // api
		launchRequest
		Amount     domain.AmountText `json:"amount"`
		TransferID string            `json:"transfer_id"`
	}
	webhookRequest struct { // deliveries
		URL         *string  `json:"url"`
		Kinds       []string `json:"kinds"`
		Description *string  `json:"description"`
		Enabled     *bool    `json:"enabled"`
	}
	clientRequest struct { // admin
		ID          string `json:"id"`
		Name        string `json:"name"`
		Environment string `json:"environment"`
		Plan        string `json:"plan"`
	}
	issueKeyRequest struct { // admin
		Scopes    []string `json:"scopes"`
		Label     string   `json:"label"`
		ExpiresAt *Time    `json:"expires_at"`
	}
	clientPatch struct { // admin: PATCH /admin/v1/clients/{id}
		Name               *string         `json:"name"`
		RequireSignature   json.RawMessage `json:"require_signature"`
		IPAllowList        *[]string       `json:"ip_allow_list"`
		AllowedReturnHosts *[]string       `json:"allowed_return_hosts"`
	}
	// nestedRequest has the shapes no request has yet: nested objects,
	// objects in an array, a map.
	nestedRequest struct {
		Kind  string `json:"kind"`
		Inner *struct {
			A int `json:"a"`
			B int `json:"b"`
		} `json:"inner"`
		Items []struct {
			A int `json:"a"`
		} `json:"items"`
		Labels map[string]string `json:"labels"`
		Raw    json.RawMessage   `json:"raw"`
	}
	rotateKeyRequest struct { // admin
		GracePeriodSeconds *int64 `json:"grace_period_seconds"`
		ExpiresAt          *Time  `json:"expires_at"`
	}
)

// refDepth is the nesting depth of valid JSON, from the decoder's tokens.
func refDepth(b []byte) int {
	dec := json.NewDecoder(bytes.NewReader(b))
	d, most := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return most
		}
		if delim, ok := tok.(json.Delim); ok {
			if delim == '{' || delim == '[' {
				d++
				most = max(most, d)
			} else {
				d--
			}
		}
	}
}

// refHasNUL reports whether a string (a key or a value) of the JSON text
// b contains U+0000, from the decoder's tokens.
func refHasNUL(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if s, ok := tok.(string); ok && strings.ContainsRune(s, 0) {
			return true
		}
	}
}

// refFoldedKeys reports whether an object of the JSON text b has two keys
// that strings.EqualFold holds for, from the decoder's tokens (which
// unescape them).
func refFoldedKeys(b []byte) bool {
	type frame struct {
		object, wantKey bool
		keys            []string
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1].object {
				stack[len(stack)-1].wantKey = true
			}
			continue
		}
		if top != nil && top.object && top.wantKey {
			k := tok.(string)
			for _, earlier := range top.keys {
				if strings.EqualFold(earlier, k) {
					return true
				}
			}
			top.keys = append(top.keys, k)
			top.wantKey = false
			continue
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, &frame{object: d == '{', wantKey: d == '{'})
			continue
		}
		if top != nil && top.object {
			top.wantKey = true
		}
	}
}

// refFieldNames is the JSON names of the fields of the struct v points to,
// as encoding/json writes them (no target has an omitempty field).
func refFieldNames(t *testing.T, v any) map[string]json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var names map[string]json.RawMessage
	if err := json.Unmarshal(b, &names); err != nil {
		t.Fatal(err)
	}
	return names
}

// FuzzDecodeJSON: the strict decoder never panics; it refuses with a 400
// in the error vocabulary, and what it accepts is one valid UTF-8 JSON
// value no deeper than the limit, with no U+0000 in a string, no two keys
// of one object equal under case folding (a duplicate is one such pair)
// and only the exact names of the destination's fields at its top level.
// On any valid JSON text, the one scan of the body agrees with the
// decoder's tokens on depth, U+0000 and case-folded keys.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"amount":10.50}`, `{"amount":"1e3"}`, `{"session_id":"a\u0000"}`,
		`{"a":1}`, `[]`, `null`, `{"session_id":1}`, `{"promo":"yes"}`, "\xff", `{"x":` + strings.Repeat("[", 20),
		`{"session_id":"s"} {}`, `{"session_id":"s","session_id":"t"}`, `{"transaction_id":"\\u0000"}`,
		`{"amount":"1","Amount":"2"}`, `{"\u0061mount":"1","amount":"2"}`, `{"\u212aind":"x"}`, `{"ſession_id":"s"}`,
		`{"kinds":["a","b"],"url":"u"}`, `{"items":[{"a":1},{"a":2,"A":3}]}`, `{"labels":{"\ud800":"1","\udfff":"2"}}`,
		`{"require_signature":{"a":[1,{"b":2,"b":3}]}}`, `{"inner":{"a":1,"b":2},"raw":{"a":{"a":1}}}`} {
		f.Add([]byte(s))
	}
	targets := []func() any{
		func() any { return &walletCall{} }, func() any { return &createTransactionRequest{} },
		func() any { return &launchRequest{} }, func() any { return &transferLaunchRequest{} },
		func() any { return &webhookRequest{} }, func() any { return &clientRequest{} },
		func() any { return &issueKeyRequest{} }, func() any { return &rotateKeyRequest{} },
		func() any { return &clientPatch{} }, func() any { return &nestedRequest{} },
		func() any { // the demo game's POST /demo/spin body (package demogame)
			return &struct {
				Session string            `json:"session"`
				Stake   domain.AmountText `json:"stake"`
			}{}
		},
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, newV := range targets {
			v := newV()
			err := DecodeJSON(b, v)
			if err != nil {
				var ae *Error
				if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest ||
					(ae.Code != CodeInvalidJSON && ae.Code != CodeInvalidRequest) {
					t.Fatalf("%T from %q: %v (%+v)", v, b, err, ae)
				}
				continue
			}
			if !utf8.Valid(b) || !json.Valid(bytes.TrimSpace(b)) || refDepth(b) > maxJSONDepth {
				t.Fatalf("%T accepted %q", v, b)
			}
			if refHasNUL(b) {
				t.Fatalf("%T accepted a U+0000 in %q", v, b)
			}
			if refFoldedKeys(b) {
				t.Fatalf("%T accepted keys equal under case folding in %q", v, b)
			}
			var top map[string]json.RawMessage
			if err := json.Unmarshal(b, &top); err != nil {
				t.Fatalf("%T accepted %q: %v", v, b, err)
			}
			names := refFieldNames(t, v)
			for k := range top {
				if _, ok := names[k]; !ok {
					t.Fatalf("%T accepted the key %q, which is not a field's exact name, in %q", v, k, b)
				}
			}
		}
		if json.Valid(b) {
			var s bodyScan
			s.scan(b, nil)
			deep := refDepth(b) > maxJSONDepth
			if s.deep != deep || s.invalid || (!deep && (s.trailing || s.nul != refHasNUL(b) ||
				(s.keyErr != nil) != refFoldedKeys(b))) {
				t.Fatalf("scan of %q: deep %v invalid %v trailing %v nul %v key %v; reference depth %d, nul %v, folded keys %v",
					b, s.deep, s.invalid, s.trailing, s.nul, s.keyErr, refDepth(b), refHasNUL(b), refFoldedKeys(b))
			}
		}
	})
}
