package operatorsim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/operatorsim"
)

const (
	apiToken = "pam-api-token-for-tests"
	secret   = "tbb-shared-password-for-tests"
)

// startSim starts a simulator on a loopback port; it is closed with the
// test.
func startSim(t *testing.T, cfg operatorsim.Config) (*operatorsim.Sim, string) {
	t.Helper()
	if cfg.Protocol == "" {
		cfg.Protocol = operatorsim.ProtocolValkyriePAM
	}
	if cfg.APIToken == "" {
		cfg.APIToken = apiToken
	}
	if cfg.Secret == "" {
		cfg.Secret = secret
	}
	sim, err := operatorsim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base, err := sim.Start(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := sim.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return sim, base
}

// answer is a call's HTTP status and JSON body.
type answer struct {
	status int
	body   map[string]any
	raw    string
	err    error // transport: timeout, reset, EOF
}

// code is PAM's error code ("" when OK).
func (a answer) code() string {
	if e, ok := a.body["error"].(map[string]any); ok {
		s, _ := e["code"].(string)
		return s
	}
	return ""
}

// path digs a value out of the body: "transactionResult.balance.cashAmount".
func (a answer) path(p string) any {
	var v any = a.body
	for _, k := range strings.Split(p, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// num is a JSON number at p as its exact text.
func (a answer) num(p string) string {
	n, ok := a.path(p).(json.Number)
	if !ok {
		return fmt.Sprintf("<%v>", a.path(p))
	}
	return n.String()
}

var client = &http.Client{Timeout: 10 * time.Second}

func do(t *testing.T, c *http.Client, req *http.Request) answer {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{status: resp.StatusCode, err: err}
	}
	a := answer{status: resp.StatusCode, raw: string(b)}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&a.body); err != nil {
		t.Fatalf("%s %s: answer %d is not JSON: %q", req.Method, req.URL.Path, resp.StatusCode, b)
	}
	return a
}

// pam is a PAM client of one player session.
type pam struct {
	t        *testing.T
	base     string
	player   string
	token    string
	provider string
	http     *http.Client
}

func newPAM(t *testing.T, base, player, token string) *pam {
	return &pam{t: t, base: base, player: player, token: token, provider: "acme", http: client}
}

func (p *pam) request(method, path string, query url.Values, body any) *http.Request {
	p.t.Helper()
	if query == nil {
		query = url.Values{}
	}
	if _, ok := query["provider"]; !ok {
		query.Set("provider", p.provider)
	}
	var rd io.Reader
	if raw, ok := body.(rawBody); ok {
		rd = strings.NewReader(string(raw))
	} else if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			p.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, p.base+path+"?"+query.Encode(), rd)
	if err != nil {
		p.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+apiToken)
	req.Header.Set("X-Player-Token", p.token)
	req.Header.Set("X-Correlation-ID", "test-correlation")
	req.Header.Set("Content-Type", "application/json")
	return req
}

func (p *pam) balance() answer {
	return do(p.t, p.http, p.request(http.MethodGet, "/players/"+p.player+"/balance", nil, nil))
}

// rawBody is sent as it is, not encoded.
type rawBody string

// tx is an addTransaction body; amounts are raw JSON numbers.
type tx struct {
	Currency            string          `json:"currency"`
	Provider            string          `json:"provider"`
	TransactionType     string          `json:"transactionType"`
	CashAmount          json.RawMessage `json:"cashAmount"`
	BonusAmount         json.RawMessage `json:"bonusAmount"`
	PromoAmount         json.RawMessage `json:"promoAmount"`
	TransactionDateTime string          `json:"transactionDateTime"`
	ProviderTxID        string          `json:"providerTransactionId"`
	ProviderBetRef      string          `json:"providerBetRef,omitempty"`
	ProviderGameID      string          `json:"providerGameId,omitempty"`
	ProviderRoundID     string          `json:"providerRoundId,omitempty"`
	IsGameOver          bool            `json:"isGameOver"`
}

func newTx(typ, id, round, cash string) tx {
	return tx{Currency: "EUR", Provider: "acme", TransactionType: typ, CashAmount: json.RawMessage(cash),
		BonusAmount: json.RawMessage("0"), PromoAmount: json.RawMessage("0"),
		TransactionDateTime: "2026-05-01T12:00:00Z", ProviderTxID: id, ProviderGameID: "slot", ProviderRoundID: round}
}

func (p *pam) add(body any) answer {
	return do(p.t, p.http, p.request(http.MethodPost, "/players/"+p.player+"/transactions", nil, body))
}

// tbb signs and posts TBB wallet calls.
type tbb struct {
	t    *testing.T
	base string
	http *http.Client
}

func (c tbb) post(body string, sign func([]byte) string) answer {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.base+"/operator/wallet", strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if sign == nil {
		sign = func(b []byte) string { return gateway.Signature(secret, b) }
	}
	if s := sign([]byte(body)); s != "" {
		req.Header.Set("X-REQUEST-SIGN", s)
	}
	hc := c.http
	if hc == nil {
		hc = client
	}
	return do(c.t, hc, req)
}

// tbbMoney is a bet's, win's, refund's or rollback-win's body.
func tbbMoney(action, player, cur string, amount any, transfer map[string]any) string {
	b, _ := json.Marshal(map[string]any{"action": action, "player_id": player, "currency_code": cur,
		"is_mobile": false, "amount": amount, "payload": map[string]any{"reference": "Monkey",
			"session_token": "c9cbb3d5-439f-acf6-9415ea68b20a", "provider_transfer_data": transfer}})
	return string(b)
}

func tbbBalance(player, cur string) string {
	b, _ := json.Marshal(map[string]any{"action": "balance", "player_id": player, "currency_code": cur,
		"is_mobile": false, "reference": "Monkey", "session_token": "c9cbb3d5-439f-acf6-9415ea68b20a"})
	return string(b)
}

// eventually polls cond until it holds or a generous deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// cash is the player's cash balance as decimal text.
func cash(t *testing.T, sim *operatorsim.Sim, player, cur string) string {
	t.Helper()
	m, err := sim.Balance(player, cur)
	if err != nil {
		t.Fatal(err)
	}
	return m.String()
}
