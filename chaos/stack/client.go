package stack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/pitboss/pitboss/gateway"
)

// NewHTTPClient is a keep-alive client for conns concurrent callers.
func NewHTTPClient(conns int, timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{
		MaxIdleConns: conns * 2, MaxIdleConnsPerHost: conns * 2, IdleConnTimeout: 30 * time.Second,
		DisableCompression: true,
	}}
}

// Reply is one HTTP answer.
type Reply struct {
	Status int
	Body   []byte
	Header http.Header
}

// ErrorBody is the service's one error shape.
type ErrorBody struct {
	Success bool `json:"success"`
	Error   struct {
		Code      string         `json:"code"`
		Message   string         `json:"message"`
		RequestID string         `json:"request_id"`
		Details   map[string]any `json:"details"`
	} `json:"error"`
}

// Code is the error code of an error answer, "" otherwise.
func (r Reply) Code() string {
	var e ErrorBody
	if json.Unmarshal(r.Body, &e) != nil {
		return ""
	}
	return e.Error.Code
}

// Definitive reports whether an answer settles a call: a provider (or an
// operator) retries the same request after a network error, a 5xx or a
// 429, and stops at anything else.
func (r Reply) Definitive() bool {
	return r.Status != 0 && r.Status < 500 && r.Status != http.StatusTooManyRequests
}

// Retry is how a caller retries a call until it gets a definitive answer.
type Retry struct {
	First, Max time.Duration
	// GiveUp bounds the whole call; 0: until ctx ends.
	GiveUp time.Duration
}

// DefaultRetry is what the suite's provider does: 50 ms doubling to 1 s.
var DefaultRetry = Retry{First: 50 * time.Millisecond, Max: time.Second}

// Outcome is a call retried until definitive.
type Outcome struct {
	Reply
	Attempts int
	// Err is the last transport error when no definitive answer came.
	Err                error
	Started, Finished  time.Time
	LastAttemptLatency time.Duration
}

// Definitive is true when a definitive answer came.
func (o Outcome) Definitive() bool { return o.Err == nil && o.Reply.Definitive() }

// untilDefinitive sends with send until a definitive answer, ctx's end or
// r.GiveUp.
func untilDefinitive(ctx context.Context, r Retry, send func(context.Context) (Reply, error)) Outcome {
	o := Outcome{Started: time.Now()}
	if r.GiveUp > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.GiveUp)
		defer cancel()
	}
	wait := r.First
	for {
		o.Attempts++
		t := time.Now()
		rep, err := send(ctx)
		o.LastAttemptLatency = time.Since(t)
		o.Reply, o.Err = rep, err
		if err == nil && rep.Definitive() {
			o.Finished = time.Now()
			return o
		}
		if o.Err == nil {
			o.Err = fmt.Errorf("HTTP %d %s", rep.Status, rep.Code())
		}
		select {
		case <-ctx.Done():
			o.Finished = time.Now()
			o.Err = errors.Join(o.Err, ctx.Err())
			return o
		case <-time.After(wait):
		}
		wait = min(wait*2, r.Max)
	}
}

func do(ctx context.Context, c *http.Client, req *http.Request) (Reply, error) {
	resp, err := c.Do(req.WithContext(ctx))
	if err != nil {
		return Reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return Reply{}, err
	}
	return Reply{Status: resp.StatusCode, Body: b, Header: resp.Header}, nil
}

// API is an operator calling /api/v1 with a bearer key.
type API struct {
	Base, Key string
	HTTP      *http.Client
}

// Do sends one request; body is marshalled unless it is []byte.
func (a *API) Do(ctx context.Context, method, path string, body any) (Reply, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return Reply{}, err
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, a.Base+path, rd)
	if err != nil {
		return Reply{}, err
	}
	req.Header.Set("Authorization", "Bearer "+a.Key)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return do(ctx, a.HTTP, req)
}

// Call is Do retried until a definitive answer.
func (a *API) Call(ctx context.Context, r Retry, method, path string, body any) Outcome {
	return untilDefinitive(ctx, r, func(ctx context.Context) (Reply, error) { return a.Do(ctx, method, path, body) })
}

// Deposit credits a player's wallet (idempotent by txID) and fails unless
// the answer is 200.
func (a *API) Deposit(ctx context.Context, txID, player, amount, currency string) error {
	o := a.Call(ctx, Retry{First: 50 * time.Millisecond, Max: time.Second, GiveUp: 2 * time.Minute}, http.MethodPost,
		"/api/v1/transactions", map[string]string{"type": "deposit", "transaction_id": txID, "player_id": player,
			"amount": amount, "currency": currency})
	if o.Err != nil || o.Status != http.StatusOK {
		return fmt.Errorf("deposit %s: %v %d %s", txID, o.Err, o.Status, o.Body)
	}
	return nil
}

// Launch opens a game session for a player and returns its id.
func (a *API) Launch(ctx context.Context, provider, game, player, currency string) (string, error) {
	return a.launch(ctx, provider, game, player, currency, "")
}

// launch is Launch with the launch's session_token when token is set (a
// seamless client's: LaunchSeamless).
func (a *API) launch(ctx context.Context, provider, game, player, currency, token string) (string, error) {
	body := map[string]string{"provider": provider, "game_id": game, "player_id": player, "currency": currency}
	if token != "" {
		body["session_token"] = token
	}
	o := a.Call(ctx, Retry{First: 50 * time.Millisecond, Max: time.Second, GiveUp: 2 * time.Minute}, http.MethodPost,
		"/api/v1/game/launch", body)
	if o.Err != nil || o.Status != http.StatusOK {
		return "", fmt.Errorf("launch for %s: %v %d %s", player, o.Err, o.Status, o.Body)
	}
	var v struct {
		Data struct {
			SessionID string `json:"session_id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(o.Body, &v); err != nil || v.Data.SessionID == "" {
		return "", fmt.Errorf("launch answer without session_id: %s", o.Body)
	}
	return v.Data.SessionID, nil
}

// RotateCallbackSecret makes a new forwarded-callback signing secret and
// returns it.
func (a *API) RotateCallbackSecret(ctx context.Context) (string, error) {
	o := a.Call(ctx, Retry{First: 50 * time.Millisecond, Max: time.Second, GiveUp: time.Minute}, http.MethodPost,
		"/api/v1/forward-callback/rotate-secret", []byte("{}"))
	if o.Err != nil || o.Status != http.StatusOK {
		return "", fmt.Errorf("rotate callback secret: %v %d %s", o.Err, o.Status, o.Body)
	}
	var v struct {
		Data struct {
			Secret string `json:"secret"`
		} `json:"data"`
	}
	if err := json.Unmarshal(o.Body, &v); err != nil || v.Data.Secret == "" {
		return "", fmt.Errorf("rotate answer without secret: %s", o.Body)
	}
	return v.Data.Secret, nil
}

// Provider is a game provider calling the wallet protocol: each attempt is
// signed by the v2 scheme at its own time (gateway.SignProviderCall), keyed
// with the provider secret, so a retry carries a fresh t over the same
// body.
type Provider struct {
	Base, ID, Secret string
	HTTP             *http.Client
	// Alt is a second api process (the cluster form): after an attempt
	// that got no HTTP answer the next goes to the other one, as a load
	// balancer in front of both would do.
	Alt string
}

// Send makes one attempt of op (balance, bet, win, rollback).
func (p *Provider) Send(ctx context.Context, op string, body []byte) (Reply, error) {
	return p.sendTo(ctx, p.Base, op, body)
}

func (p *Provider) sendTo(ctx context.Context, base, op string, body []byte) (Reply, error) {
	req, err := http.NewRequest(http.MethodPost, base+"/provider/v1/wallet/"+op, bytes.NewReader(body))
	if err != nil {
		return Reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Provider-Id", p.ID)
	req.Header.Set("X-Signature", gateway.SignProviderCall(p.Secret, time.Now(),
		gateway.ProviderCall{Method: req.Method, Path: req.URL.EscapedPath(), Body: body}))
	return do(ctx, p.HTTP, req)
}

// Call sends op until a definitive answer: the same body, hence the same
// transaction_id, every time, as a provider must.
func (p *Provider) Call(ctx context.Context, r Retry, op string, body []byte) Outcome {
	failed := 0
	return untilDefinitive(ctx, r, func(ctx context.Context) (Reply, error) {
		base := p.Base
		if p.Alt != "" && failed%2 == 1 {
			base = p.Alt
		}
		rep, err := p.sendTo(ctx, base, op, body)
		if err != nil {
			failed++
		}
		return rep, err
	})
}

// WalletAnswer is the provider wallet's 200 body.
type WalletAnswer struct {
	Status        string      `json:"status"`
	Balance       json.Number `json:"balance"`
	Currency      string      `json:"currency"`
	TransactionID string      `json:"transaction_id"`
	ExternalID    string      `json:"external_transaction_id"`
	Replayed      bool        `json:"replayed"`
}

// WalletBalances reads an answer of GET /api/v1/wallet/balance: each
// currency's balance as the exact text the API sent.
func WalletBalances(b []byte) (map[string]string, error) {
	var v struct {
		Data struct {
			Balances []struct {
				Currency string      `json:"currency"`
				Balance  json.Number `json:"balance"`
			} `json:"balances"`
		} `json:"data"`
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	bals := make(map[string]string, len(v.Data.Balances))
	for _, x := range v.Data.Balances {
		bals[x.Currency] = x.Balance.String()
	}
	return bals, nil
}

// DecodeWallet reads a 200 wallet answer, keeping the balance's text.
func DecodeWallet(b []byte) (WalletAnswer, error) {
	var a WalletAnswer
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	err := d.Decode(&a)
	return a, err
}
