package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pitboss/pitboss/domain"
)

// The request bodies of the handler packages, by shape (package wire
// cannot import them): the decoder is fuzzed into each kind of target the
// API has. The bodies themselves are fuzzed through their routes by
// FuzzRequestBodies (package api).
type (
	walletCall struct { // providerwallet
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
		Scopes    []string   `json:"scopes"`
		Label     string     `json:"label"`
		ExpiresAt *time.Time `json:"expires_at"`
	}
	rotateKeyRequest struct { // admin
		GracePeriodSeconds *int64     `json:"grace_period_seconds"`
		ExpiresAt          *time.Time `json:"expires_at"`
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

// FuzzDecodeJSON: the strict decoder never panics; it refuses with a 400
// in the error vocabulary, and what it accepts is one valid UTF-8 JSON
// value no deeper than the limit, with no U+0000 in a string.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"amount":10.50}`, `{"amount":"1e3"}`, `{"session_id":"a\u0000"}`,
		`{"a":1}`, `[]`, `null`, `{"session_id":1}`, `{"promo":"yes"}`, "\xff", `{"x":` + strings.Repeat("[", 20),
		`{"session_id":"s"} {}`, `{"session_id":"s","session_id":"t"}`, `{"transaction_id":"\\u0000"}`} {
		f.Add([]byte(s))
	}
	targets := []func() any{
		func() any { return &walletCall{} }, func() any { return &createTransactionRequest{} },
		func() any { return &launchRequest{} }, func() any { return &transferLaunchRequest{} },
		func() any { return &webhookRequest{} }, func() any { return &clientRequest{} },
		func() any { return &issueKeyRequest{} }, func() any { return &rotateKeyRequest{} },
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
			if hasNUL(b) {
				t.Fatalf("%T accepted a U+0000 in %q", v, b)
			}
		}
		if json.Valid(b) && depth(b) != refDepth(b) {
			t.Fatalf("depth(%q) = %d, want %d", b, depth(b), refDepth(b))
		}
	})
}
