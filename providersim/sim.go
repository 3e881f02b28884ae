// Package providersim is the provider simulator, Pitboss's conformance kit
// (`pitboss provider-sim`, docs/provider-onboarding.md): it plays sessions
// of spins against a running Pitboss as a game provider on one wallet
// protocol would — caleta, evolution, redtiger, pitboss or tbb — and checks
// every answer against that protocol's document as Pitboss implements it
// (docs/protocols/*.md, docs/provider-wallet.md): HTTP status, field names
// and types, statuses, and the balance arithmetic of every call.
//
// It is an outside client: it speaks the wire (HTTP and JSON) and imports
// none of the server's packages but gateway's signature helper and
// domain's money type, so what it checks is what a real provider sees.
//
// A run is a list of steps (steps.go), each one function over a run; a
// protocol is a dialect (one file each) that builds a call's request and
// reads its answer. A new step or a new protocol is one function or one
// file.
package providersim

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"time"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// Protocols are the wallet protocols the simulator speaks: every one of
// gateway's registry.
var Protocols = gateway.WalletProtocols

// Config is one run of the simulator.
type Config struct {
	// Protocol is one of Protocols.
	Protocol string
	// BaseURL is Pitboss's public address (http://127.0.0.1:8080): the
	// launch and the wallet routes are under it.
	BaseURL string
	// Provider is the provider's id: the wallet's base path names it, and
	// pitboss's X-Provider-Id.
	Provider string
	// Game is the game (our catalog id) the session is launched in; it
	// must be the provider's.
	Game string
	// APIKey is the client's API key (scope launch), ClientSecret its
	// signed-launch secret: the launch is signed with it when it is given
	// (required where the client requires signatures).
	APIKey       string
	ClientSecret string
	// SessionToken, for a seamless client (docs/seamless-wallet.md), is
	// the operator's own session token of the player: the session is then
	// launched with POST /api/v1/game/launch and it, and Balance is what
	// the operator's wallet holds (the launch sets nothing).
	SessionToken string
	// Player and Currency are the session's; Balance the player's balance
	// the launch sets (a decimal in the currency).
	Player   string
	Currency string
	Balance  string
	// Spins is how many bet-and-win rounds are played; Seed picks their
	// amounts and outcomes (ids are fresh on every run).
	Spins int
	Seed  uint64
	// Secret is the provider's secret (pitboss and tbb: the HMAC key;
	// evolution: the authToken; redtiger: the API key). PrivateKey is
	// caleta's: the provider's RSA key that signs its request bodies.
	Secret     string
	PrivateKey *rsa.PrivateKey
	// Timeout bounds each HTTP call; zero: 10 s.
	Timeout time.Duration
	// Out receives a line per call and per deviation; nil: discarded.
	Out io.Writer
	// HTTP is the client; nil: a fresh one.
	HTTP *http.Client
}

// Deviation is an answer that is not what the protocol's document says.
type Deviation struct {
	Step    string
	Message string
}

func (d Deviation) String() string { return d.Step + ": " + d.Message }

// Report is what a run did and found.
type Report struct {
	Protocol string
	// Session is the game session the run played in.
	Session string
	// Calls counts the HTTP calls made to the wallet.
	Calls int
	// Booked are the ledger's transaction ids of the calls the run
	// expects booked (the ids the client's transaction history shows).
	Booked []string
	// Start and Final are the player's balance at launch and as the run
	// expects it at the end.
	Start, Final domain.Money
	// Deviations are every answer not as the document says; empty: the
	// server conforms.
	Deviations []Deviation
}

// Errors of Run that are not deviations.
var (
	// ErrConfig: the configuration cannot run (a usage error).
	ErrConfig = errors.New("configuration")
	// ErrAborted: a step could not go on (the server unreachable, the
	// launch refused); the report says how far it got.
	ErrAborted = errors.New("aborted")
)

// session is the game session a run plays in.
type session struct {
	ID       string
	Player   string
	Game     string
	Currency domain.Currency
}

// run is one run in progress: the configuration, the session, the
// dialect and the balance the run expects the wallet to hold.
type run struct {
	cfg     Config
	http    *http.Client
	out     io.Writer
	d       dialect
	sess    session
	rng     *mrand.Rand
	nonce   string
	seq     int
	step    string
	expect  int64 // the balance the wallet should hold, in minor units
	report  *Report
	timeout time.Duration
}

// Run plays cfg's session and returns what it found. err is non-nil only
// when the run could not be made (ErrConfig) or could not go on
// (ErrAborted); deviations are in the report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	d, err := newDialect(cfg)
	if err != nil {
		return nil, err
	}
	cur, err := domain.ParseCurrency(strings.ToUpper(cfg.Currency))
	if err != nil {
		return nil, fmt.Errorf("%w: --currency: %w", ErrConfig, err)
	}
	if cfg.Protocol == "caleta" && cur.Exponent() > caletaDigits {
		return nil, fmt.Errorf("%w: %s has %d decimals; Caleta's amounts carry at most %d", ErrConfig, cur.Code(), cur.Exponent(), caletaDigits)
	}
	start, err := domain.ParseMoney(cfg.Balance, cur)
	if err != nil || start.IsNegative() {
		return nil, fmt.Errorf("%w: --balance %q is not an amount of %s", ErrConfig, cfg.Balance, cur.Code())
	}
	for _, f := range [][2]string{{"--base-url", cfg.BaseURL}, {"--provider", cfg.Provider}, {"--game", cfg.Game},
		{"--api-key", cfg.APIKey}, {"--player", cfg.Player}} {
		if f[1] == "" {
			return nil, fmt.Errorf("%w: %s is required", ErrConfig, f[0])
		}
	}
	if u, err := url.Parse(cfg.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: --base-url %q is not an http(s) address", ErrConfig, cfg.BaseURL)
	}
	if cfg.Spins < 0 {
		return nil, fmt.Errorf("%w: --spins must not be negative", ErrConfig)
	}
	nonce := make([]byte, 4)
	_, _ = rand.Read(nonce)
	r := &run{cfg: cfg, http: cfg.HTTP, out: cfg.Out, d: d, rng: mrand.New(mrand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15)),
		nonce: "sim" + hex.EncodeToString(nonce), timeout: cfg.Timeout,
		report: &Report{Protocol: cfg.Protocol, Start: start, Final: start}}
	if r.http == nil {
		r.http = &http.Client{}
	}
	if r.out == nil {
		r.out = io.Discard
	}
	if r.timeout == 0 {
		r.timeout = 10 * time.Second
	}
	r.cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	r.step = "launch"
	r.sess, err = startSession(ctx, r, cur, start)
	if err != nil {
		return r.report, fmt.Errorf("%w: launch: %w", ErrAborted, err)
	}
	r.report.Session = r.sess.ID
	r.expect = start.Minor()
	r.printf("ok     launch        session %s, player %s, %s %s", r.sess.ID, r.sess.Player, start, cur.Code())
	for _, s := range steps {
		r.step = s.name
		if err := s.run(ctx, r); err != nil {
			r.report.Final = domain.FromMinor(r.expect, cur)
			return r.report, fmt.Errorf("%w: %s: %w", ErrAborted, s.name, err)
		}
	}
	r.report.Final = domain.FromMinor(r.expect, cur)
	return r.report, nil
}

// id is a fresh id of this run: the seed decides amounts, never ids, so a
// second run with the same seed is not answered as a retry of the first.
func (r *run) id(what string) string {
	r.seq++
	return fmt.Sprintf("%s-%s-%d", r.nonce, what, r.seq)
}

func (r *run) printf(format string, args ...any) {
	fmt.Fprintf(r.out, format+"\n", args...)
}

// deviate records a deviation of the current step.
func (r *run) deviate(format string, args ...any) {
	d := Deviation{Step: r.step, Message: fmt.Sprintf(format, args...)}
	r.report.Deviations = append(r.report.Deviations, d)
	r.printf("DEVIATION %s", d)
}

// money is minor units of the session's currency as text.
func (r *run) money(minor int64) string {
	return domain.FormatMinor(minor, r.sess.Currency.Exponent())
}

// wireRequest is one call as the dialect built it. header is computed on
// every send, so a retry is signed afresh (pitboss's time-bound
// signature) while its body stays the same bytes.
type wireRequest struct {
	kind   kind
	path   string // path and query, under the base URL
	body   []byte
	header func(body []byte) http.Header
	tx     tx
	echo   string // the request's id the answer must echo, where the protocol echoes one
}

// reply is a call's HTTP answer.
type reply struct {
	code int
	body []byte
}

// send makes one call and reads its answer whole.
func (r *run) send(ctx context.Context, req wireRequest) (reply, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	hr, err := r.newRequest(ctx, req)
	if err != nil {
		return reply{}, err
	}
	r.report.Calls++
	path, _, _ := strings.Cut(req.path, "?") // evolution's query carries its token
	resp, err := r.http.Do(hr)
	if err != nil {
		return reply{}, fmt.Errorf("POST %s: %w", path, withoutURL(err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return reply{}, fmt.Errorf("POST %s: read the answer: %w", path, err)
	}
	return reply{code: resp.StatusCode, body: b}, nil
}

// withoutURL is err without the request's URL, whose query may carry a
// credential (the launch's api_key, evolution's authToken).
func withoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// hangUp is when a client-side timeout gives up on a call.
type hangUp int

const (
	// hangUpWritten: as soon as the request is written, before the
	// server can have answered (it may or may not book the call).
	hangUpWritten hangUp = iota
	// hangUpAnswered: when the answer's first byte arrives, unread (the
	// server has booked the call; its answer is lost).
	hangUpAnswered
)

func (h hangUp) String() string {
	if h == hangUpWritten {
		return "as soon as it was written"
	}
	return "at the answer's first byte, unread"
}

// sendAndHangUp sends req and gives up on it at when, never reading the
// answer: a provider's client-side timeout. Whether the server booked it
// is what the retry finds out.
func (r *run) sendAndHangUp(ctx context.Context, req wireRequest, when hangUp) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { cancel() }}
	if when == hangUpAnswered {
		trace = &httptrace.ClientTrace{GotFirstResponseByte: cancel}
	}
	hr, err := r.newRequest(httptrace.WithClientTrace(ctx, trace), req)
	if err != nil {
		return err
	}
	r.report.Calls++
	resp, err := r.http.Do(hr)
	if err == nil { // the headers beat the cancel: the body is dropped unread
		_ = resp.Body.Close()
	}
	return nil
}

func (r *run) newRequest(ctx context.Context, req wireRequest) (*http.Request, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, r.cfg.BaseURL+req.path, strings.NewReader(string(req.body)))
	if err != nil {
		return nil, fmt.Errorf("request %s: %w", req.path, err)
	}
	hr.Header.Set("Content-Type", "application/json")
	for k, vs := range req.header(req.body) {
		hr.Header[k] = vs
	}
	return hr, nil
}
