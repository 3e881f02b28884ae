package demogame

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/gateway"
)

// The demo game server is a provider like any other: it calls the provider
// wallet (/provider/v1/wallet/...) over real HTTP at Config.WalletURL,
// signed with the demo provider's secret by the v2 scheme (X-Provider-Id,
// X-Signature = t=<unix seconds>,v2=<hex HMAC-SHA256 of
// "<t>.POST.<path>.<raw body>">, gateway.SignProviderCall), each attempt
// at its own time. Nothing in it reaches into the ledger directly.

// The wallet protocol's signature headers (docs/provider-wallet.md).
const (
	headerProviderID = "X-Provider-Id"
	headerSignature  = "X-Signature"
)

// maxAnswerBytes bounds the read of a wallet answer (the server's own
// request body bound).
const maxAnswerBytes = 64 << 10

// walletHTTP makes the demo game's wallet calls. A wallet call is a
// Postgres commit; 10 s is far above its normal latency.
var walletHTTP = &http.Client{Timeout: 10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// walletCall is the body of a wallet call, in the protocol's names.
type walletCall struct {
	SessionID              string `json:"session_id"`
	TransactionID          string `json:"transaction_id,omitempty"`
	RoundID                string `json:"round_id,omitempty"`
	RoundClosed            bool   `json:"round_closed,omitempty"`
	Amount                 string `json:"amount,omitempty"`
	ReferenceTransactionID string `json:"reference_transaction_id,omitempty"`
}

// walletAnswer is the wallet's answer; the balance keeps its exact
// text (json.Number, never a float).
type walletAnswer struct {
	Status        string      `json:"status"`
	Balance       json.Number `json:"balance"`
	Currency      string      `json:"currency"`
	TransactionID string      `json:"transaction_id"`
	Replayed      bool        `json:"replayed"`
}

// walletError is a wallet answer other than 200. Status and Code are
// the wallet's; Retryable is its details.retryable (or a transport
// failure).
type walletError struct {
	Op        string
	Status    int
	Code      string
	Message   string
	Retryable bool
	Err       error
}

func (e *walletError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("wallet %s: %v", e.Op, e.Err)
	}
	return fmt.Sprintf("wallet %s: %d %s: %s", e.Op, e.Status, e.Code, e.Message)
}

func (e *walletError) Unwrap() error { return e.Err }

// wallet calls the wallet as provider prov, under the request id rid of
// the player's request.
func (g *Game) wallet(ctx context.Context, rid, op string, prov gateway.Provider, call walletCall) (walletAnswer, error) {
	body, err := json.Marshal(call)
	if err != nil {
		return walletAnswer{}, fmt.Errorf("encode wallet %s: %w", op, err)
	}
	u := strings.TrimRight(g.cfg.WalletURL, "/") + "/provider/v1/wallet/" + op
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return walletAnswer{}, &walletError{Op: op, Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(headerProviderID, prov.ID)
	req.Header.Set(headerSignature, gateway.SignProviderCall(prov.Secret, g.cfg.Now(),
		gateway.ProviderCall{Method: req.Method, Path: req.URL.EscapedPath(), Body: body}))
	if rid != "" {
		req.Header.Set(echo.HeaderXRequestID, rid)
	}
	resp, err := walletHTTP.Do(req)
	if err != nil {
		return walletAnswer{}, &walletError{Op: op, Retryable: true, Err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if err != nil {
		return walletAnswer{}, &walletError{Op: op, Retryable: true, Err: fmt.Errorf("read answer: %w", err)}
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
		return walletAnswer{}, &walletError{Op: op, Status: resp.StatusCode, Code: eb.Error.Code,
			Message: eb.Error.Message, Retryable: retry || resp.StatusCode >= 500}
	}
	var a walletAnswer
	if err := json.Unmarshal(raw, &a); err != nil || a.Status != "OK" || a.Balance == "" {
		return walletAnswer{}, &walletError{Op: op, Retryable: true,
			Err: fmt.Errorf("unexpected answer %.200q", raw)}
	}
	return a, nil
}

// walletRetried repeats an idempotent wallet call (same transaction
// id) while the wallet says a retry may succeed, a bounded number of
// times: what a provider does so a result it owes the player is credited.
func (g *Game) walletRetried(ctx context.Context, rid, op string, prov gateway.Provider, call walletCall) (walletAnswer, error) {
	var err error
	for attempt := range 4 {
		var a walletAnswer
		if a, err = g.wallet(ctx, rid, op, prov, call); err == nil {
			return a, nil
		}
		var we *walletError
		if !errors.As(err, &we) || !we.Retryable {
			return walletAnswer{}, err
		}
		t := time.NewTimer(time.Duration(100<<attempt) * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return walletAnswer{}, err
		case <-t.C:
		}
	}
	return walletAnswer{}, err
}
