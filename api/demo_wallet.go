package api

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/gateway"
)

// The demo game server is a provider like any other: it calls the provider
// wallet (/provider/v1/wallet/...) over real HTTP at Config.DemoWalletURL,
// signed with the demo provider's secret (X-Provider-Id, X-Signature =
// lowercase hex HMAC-SHA256 of the raw body). Nothing in it reaches into
// the ledger directly.

// demoHTTP makes the demo game's wallet calls. A wallet call is a Postgres
// commit; 10 s is far above its normal latency.
var demoHTTP = &http.Client{Timeout: 10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// demoWalletCall is the body of a wallet call, in the protocol's names.
type demoWalletCall struct {
	SessionID              string `json:"session_id"`
	TransactionID          string `json:"transaction_id,omitempty"`
	RoundID                string `json:"round_id,omitempty"`
	RoundClosed            bool   `json:"round_closed,omitempty"`
	Amount                 string `json:"amount,omitempty"`
	ReferenceTransactionID string `json:"reference_transaction_id,omitempty"`
}

// demoWalletAnswer is the wallet's answer; the balance keeps its exact
// text (json.Number, never a float).
type demoWalletAnswer struct {
	Status        string      `json:"status"`
	Balance       json.Number `json:"balance"`
	Currency      string      `json:"currency"`
	TransactionID string      `json:"transaction_id"`
	Replayed      bool        `json:"replayed"`
}

// demoWalletError is a wallet answer other than 200. Status and Code are
// the wallet's; Retryable is its details.retryable (or a transport
// failure).
type demoWalletError struct {
	Op        string
	Status    int
	Code      string
	Message   string
	Retryable bool
	Err       error
}

func (e *demoWalletError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("wallet %s: %v", e.Op, e.Err)
	}
	return fmt.Sprintf("wallet %s: %d %s: %s", e.Op, e.Status, e.Code, e.Message)
}

func (e *demoWalletError) Unwrap() error { return e.Err }

// apiError shows a wallet refusal to the player with the wallet's own
// status and code (INSUFFICIENT_FUNDS, SESSION_EXPIRED, ...); a wallet we
// could not reach, or that failed, is 503.
func (e *demoWalletError) apiError() *Error {
	if e.Err != nil || e.Status >= 500 || e.Code == "" {
		return &Error{Status: http.StatusServiceUnavailable, Code: CodeUnavailable,
			Message: "the wallet is not answering; try again", Err: e}
	}
	return &Error{Status: e.Status, Code: e.Code, Message: e.Message, Err: e}
}

// demoWallet calls the wallet as provider providerID.
func (s *Server) demoWallet(ctx context.Context, op string, prov gateway.Provider, call demoWalletCall) (demoWalletAnswer, error) {
	body, err := json.Marshal(call)
	if err != nil {
		return demoWalletAnswer{}, fmt.Errorf("encode wallet %s: %w", op, err)
	}
	u := strings.TrimRight(s.cfg.DemoWalletURL, "/") + "/provider/v1/wallet/" + op
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return demoWalletAnswer{}, &demoWalletError{Op: op, Err: err}
	}
	m := hmac.New(sha256.New, []byte(prov.Secret))
	m.Write(body)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(headerProviderID, prov.ID)
	req.Header.Set(headerSignature, hex.EncodeToString(m.Sum(nil)))
	if rid := requestIDFrom(ctx); rid != "" {
		req.Header.Set(requestIDHeader, rid)
	}
	resp, err := demoHTTP.Do(req)
	if err != nil {
		return demoWalletAnswer{}, &demoWalletError{Op: op, Retryable: true, Err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxBodyBytes))
	if err != nil {
		return demoWalletAnswer{}, &demoWalletError{Op: op, Retryable: true, Err: fmt.Errorf("read answer: %w", err)}
	}
	if resp.StatusCode != http.StatusOK {
		var eb struct {
			Error struct {
				Code    string         `json:"code"`
				Message string         `json:"message"`
				Details map[string]any `json:"details"`
			} `json:"error"`
		}
		_ = json.Unmarshal(raw, &eb)
		retry, _ := eb.Error.Details["retryable"].(bool)
		return demoWalletAnswer{}, &demoWalletError{Op: op, Status: resp.StatusCode, Code: eb.Error.Code,
			Message: eb.Error.Message, Retryable: retry || resp.StatusCode >= 500}
	}
	var a demoWalletAnswer
	if err := json.Unmarshal(raw, &a); err != nil || a.Status != "OK" || a.Balance == "" {
		return demoWalletAnswer{}, &demoWalletError{Op: op, Retryable: true,
			Err: fmt.Errorf("unexpected answer %.200q", raw)}
	}
	return a, nil
}

// demoWalletRetried repeats an idempotent wallet call (same transaction
// id) while the wallet says a retry may succeed, a bounded number of
// times: what a provider does so a result it owes the player is credited.
func (s *Server) demoWalletRetried(ctx context.Context, op string, prov gateway.Provider, call demoWalletCall) (demoWalletAnswer, error) {
	var err error
	for attempt := range 4 {
		var a demoWalletAnswer
		if a, err = s.demoWallet(ctx, op, prov, call); err == nil {
			return a, nil
		}
		var we *demoWalletError
		if !errors.As(err, &we) || !we.Retryable {
			return demoWalletAnswer{}, err
		}
		t := time.NewTimer(time.Duration(100<<attempt) * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return demoWalletAnswer{}, err
		case <-t.C:
		}
	}
	return demoWalletAnswer{}, err
}

// requestIDFrom is the request id the request-id middleware put in ctx.
func requestIDFrom(ctx context.Context) string {
	return commands.MetaFrom(ctx).RequestID
}
