package providersim

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// The provider's side of its own promotion API (docs/promotions.md#the-providers-promotion-apis):
// a real HTTP server on loopback that Pitboss's promotion adapters call
// (Caleta's Freebets API, The Bet Brothers' supplier Free Spin API). It
// verifies each call's signature, checks its body against the document
// (required fields, types, datetime forms, money) and records what is not
// as a deviation, as a run records the wallet's; it keeps the campaigns
// and rewards it granted, with the free bets left on each, which
// SpendFreeBets then plays through Pitboss's wallet.

// PromoConfig configures a PromoServer.
type PromoConfig struct {
	// Protocol is caleta (the Freebets API) or tbb (the Free Spin API).
	Protocol string
	// Addr is the address to listen on; "": a free port of 127.0.0.1.
	Addr string
	// OperatorKey (caleta) is the public half of the operator's launch
	// key — Pitboss's — which signs every Freebets and Games API call.
	OperatorKey *rsa.PublicKey
	// OperatorID (caleta) is the operator_id the calls must name; "":
	// any.
	OperatorID string
	// Secret (tbb) is the provider's secret: the password X-REQUEST-SIGN
	// is keyed with (and the json launch kind's X-Signature).
	Secret string
	// ProviderName (tbb) is the provider_name the calls must carry (the
	// provider's id at Pitboss); "": any.
	ProviderName string
	// Prepaids (caleta) are the prepaids offered; nil: one open prepaid
	// (any bet value and count) of each game and currency asked about.
	Prepaids []PromoPrepaid
	// Out receives a line per call and per deviation; nil: discarded.
	Out io.Writer
	// Fallback, when set, answers the paths the server does not know (a
	// CaletaGamesAPI's /api/game/list, so one server is the provider's
	// whole endpoint); nil: such a call is a deviation, answered 404.
	Fallback http.Handler
}

// PromoPrepaid is a Caleta prepaid the server offers.
type PromoPrepaid struct {
	UUID     string
	GameCode string
	Currency string
	// BetValue is a decimal amount of Currency ("1.00"); "" is null: any.
	BetValue string
	// BetCount is the number of free bets; 0 is null: any.
	BetCount int
}

// FreeBetReward is a reward the server granted, as it keeps it.
type FreeBetReward struct {
	// Ref is the provider's id of the reward: Caleta's reward_uuid (the
	// reward id Pitboss sent), TBB's bonus_id as decimal text.
	Ref string
	// Campaign is Caleta's campaign_uuid ("" for a single-use reward), or
	// TBB's bonus_code (Pitboss's campaign id).
	Campaign string
	Player   string
	// Game is the provider's code of the game (Caleta: the prepaid's).
	Game     string
	Currency string
	// BetValue is one free bet's value in minor units of Currency.
	BetValue  int64
	FreeBets  int
	Remaining int
	// Start and End are the validity window as the grant gave it.
	Start, End string
	Canceled   bool

	prepaid     string // caleta: the reward's prepaid_uuid
	brand       int64  // tbb: the create's brand_id
	fingerprint string // what a retry of the grant must repeat
}

// PromoServer is the provider's side of its promotion API. Close it when
// done.
type PromoServer struct {
	// URL is the server's base address: the provider's endpoint in its
	// route.
	URL string

	cfg   PromoConfig
	cur   map[string]domain.Currency // parsed currencies, by code
	srv   *http.Server
	done  chan struct{}
	nonce string

	mu        sync.Mutex
	devs      []Deviation
	calls     map[string]int
	refuse    bool
	failWith  int
	seq       int
	gameIDs   map[string]int64
	prepaids  map[string]*caletaPrepaidState
	ppOrder   []string
	campaigns map[string]*caletaCampaignState
	cpOrder   []string
	rewards   map[string]*FreeBetReward
	rwOrder   []string
}

// StartPromoServer starts cfg's server on loopback (or cfg.Addr).
func StartPromoServer(cfg PromoConfig) (*PromoServer, error) {
	switch cfg.Protocol {
	case gateway.WalletProtocolCaleta:
		if cfg.OperatorKey == nil {
			return nil, fmt.Errorf("%w: caleta's promotion API is verified with the operator's public key", ErrConfig)
		}
	case gateway.WalletProtocolTBB:
		if cfg.Secret == "" {
			return nil, fmt.Errorf("%w: tbb's promotion API is verified with the provider's secret", ErrConfig)
		}
	default:
		return nil, fmt.Errorf("%w: protocol %q has no promotion API here (caleta, tbb)", ErrConfig, cfg.Protocol)
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	nonce := make([]byte, 4)
	_, _ = rand.Read(nonce)
	s := &PromoServer{cfg: cfg, cur: map[string]domain.Currency{}, nonce: hex.EncodeToString(nonce),
		calls: map[string]int{}, gameIDs: map[string]int64{}, prepaids: map[string]*caletaPrepaidState{},
		campaigns: map[string]*caletaCampaignState{}, rewards: map[string]*FreeBetReward{}}
	for _, p := range cfg.Prepaids {
		if err := s.offer(p); err != nil {
			return nil, err
		}
	}
	addr := cfg.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("promotion server: listen on %s: %w", addr, err)
	}
	s.URL = "http://" + ln.Addr().String()
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln) // ends with Close
	}()
	return s, nil
}

// Close stops the server and waits for it.
func (s *PromoServer) Close() error {
	err := s.srv.Close()
	<-s.done
	return err
}

// Deviations are every call so far that was not as the document says.
func (s *PromoServer) Deviations() []Deviation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.devs)
}

// Calls is how many calls were made to path ("/api/freebet/rewards/create").
func (s *PromoServer) Calls(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[path]
}

// RefuseGrants is the fault switch: while on, every grant (Caleta's
// rewards/create, TBB's freespin/create) is refused with a 4xx, nothing
// granted.
func (s *PromoServer) RefuseGrants(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = on
}

// Fail answers every call with status (a 5xx: the endpoint down) until
// Fail(0).
func (s *PromoServer) Fail(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failWith = status
}

// Reward is the reward ref names (FreeBetReward.Ref).
func (s *PromoServer) Reward(ref string) (FreeBetReward, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rw, ok := s.rewards[ref]
	if !ok {
		return FreeBetReward{}, false
	}
	return *rw, true
}

// Rewards are every reward granted, in the order granted.
func (s *PromoServer) Rewards() []FreeBetReward {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]FreeBetReward, 0, len(s.rwOrder))
	for _, ref := range s.rwOrder {
		out = append(out, *s.rewards[ref])
	}
	return out
}

// useFreeBet takes one free bet off the reward; false when none is left.
func (s *PromoServer) useFreeBet(ref string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	rw, ok := s.rewards[ref]
	if !ok || rw.Canceled || rw.Remaining == 0 {
		return false
	}
	rw.Remaining--
	return true
}

// currency is code's currency; false when it is not one.
func (s *PromoServer) currency(code string) (domain.Currency, bool) {
	c, err := domain.ParseCurrency(code)
	return c, err == nil && c.Code() == code
}

// handler answers one call: an HTTP status and a JSON body.
type handler func(q *promoRequest) (int, any)

func (s *PromoServer) routes() map[string]handler {
	if s.cfg.Protocol == gateway.WalletProtocolCaleta {
		return map[string]handler{
			"/api/freebet/prepaids/list":    s.caletaPrepaidsList,
			"/api/freebet/campaigns/list":   s.caletaCampaignsList,
			"/api/freebet/campaigns/create": s.caletaCampaignsCreate,
			"/api/freebet/rewards/create":   s.caletaRewardsCreate,
			"/api/freebet/rewards/cancel":   s.caletaRewardsCancel,
			"/api/game/url":                 s.caletaGameURL,
		}
	}
	return map[string]handler{
		"/supplier_api/freespin/create": s.tbbCreate,
		"/supplier_api/freespin/cancel": s.tbbCancel,
		"/session":                      s.jsonLaunch,
	}
}

// ServeHTTP answers a call: the fault first, then the path, method,
// signature, content type and body, then the call's own handler.
func (s *PromoServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, known := s.routes()[r.URL.Path]; !known && s.cfg.Fallback != nil {
		s.cfg.Fallback.ServeHTTP(w, r)
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return
	}
	s.mu.Lock()
	s.calls[r.URL.Path]++
	fail := s.failWith
	s.mu.Unlock()
	q := &promoRequest{s: s, call: strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/api/freebet/"), "/supplier_api/"),
		raw: raw}
	code, body := s.answer(q, r, fail)
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
	s.mu.Lock()
	defer s.mu.Unlock()
	mark := "ok    "
	for _, msg := range q.devs {
		d := Deviation{Step: s.cfg.Protocol + " " + q.call, Message: msg}
		s.devs = append(s.devs, d)
		fmt.Fprintf(s.cfg.Out, "DEVIATION %s\n", d)
		mark = "FAILED"
	}
	fmt.Fprintf(s.cfg.Out, "%s %-6s %-22s HTTP %d %.200s\n", mark, s.cfg.Protocol, q.call, code, b)
}

func (s *PromoServer) answer(q *promoRequest, r *http.Request, fail int) (int, any) {
	if fail != 0 {
		return fail, q.refusal(fail, "simulated outage")
	}
	h, ok := s.routes()[r.URL.Path]
	if !ok {
		q.deviate("POST %s is not a call of the document", r.URL.Path)
		return http.StatusNotFound, q.refusal(http.StatusNotFound, "no such call")
	}
	if r.Method != http.MethodPost {
		q.deviate("%s, want POST", r.Method)
		return http.StatusMethodNotAllowed, q.refusal(http.StatusMethodNotAllowed, "POST only")
	}
	if msg := s.authenticate(r, q.raw); msg != "" {
		q.deviate("%s", msg)
		return http.StatusForbidden, q.refusal(http.StatusForbidden, "signature does not match")
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		q.deviate("Content-Type %q, want application/json", r.Header.Get("Content-Type"))
	}
	dec := json.NewDecoder(bytes.NewReader(q.raw))
	dec.UseNumber()
	if err := dec.Decode(&q.o); err != nil || q.o == nil {
		q.deviate("the body is not a JSON object: %.200q", q.raw)
		return http.StatusBadRequest, q.refusal(http.StatusBadRequest, "the body is not a JSON object")
	}
	return h(q)
}

// authenticate checks the call's signature; "" when it holds.
func (s *PromoServer) authenticate(r *http.Request, body []byte) string {
	if s.cfg.Protocol == gateway.WalletProtocolCaleta {
		sig := r.Header.Get("X-Auth-Signature")
		if sig == "" {
			return "X-Auth-Signature is missing"
		}
		if err := verifyRSASHA256(s.cfg.OperatorKey, body, sig); err != nil {
			return "X-Auth-Signature does not verify with the operator's public key: " + err.Error()
		}
		return ""
	}
	if r.URL.Path == "/session" { // the json launch kind
		if !gateway.ValidSignature(s.cfg.Secret, body, r.Header.Get("X-Signature")) {
			return "X-Signature is not the HMAC-SHA256 of the body"
		}
		return ""
	}
	sig := r.Header.Get("X-Request-Sign")
	switch {
	case sig == "":
		return "X-REQUEST-SIGN is missing"
	case sig != strings.ToLower(sig):
		return "X-REQUEST-SIGN is not lowercase hex"
	case !gateway.ValidSignature(s.cfg.Secret, body, sig):
		return "X-REQUEST-SIGN is not the HMAC-SHA256 of the body with the provider's secret"
	}
	return ""
}

// promoRequest is one call being checked.
type promoRequest struct {
	s    *PromoServer
	call string
	raw  []byte
	o    obj
	devs []string
}

// deviate records a deviation of this call (the server's list has it
// once the call is answered).
func (q *promoRequest) deviate(format string, args ...any) {
	q.devs = append(q.devs, fmt.Sprintf(format, args...))
}

// refusal is the protocol's refusal body: Caleta's {"error"}, TBB's
// addendum {"code", "message"}.
func (q *promoRequest) refusal(code int, msg string) any {
	if q.s.cfg.Protocol == gateway.WalletProtocolCaleta {
		return map[string]any{"error": msg}
	}
	return map[string]any{"code": code, "message": msg}
}

// invalid answers a call with deviations: 400 naming the first.
func (q *promoRequest) invalid() (int, any) {
	return http.StatusBadRequest, q.refusal(http.StatusBadRequest, q.devs[0])
}

// fieldKind is a field's type in the document.
type fieldKind int

const (
	fText     fieldKind = iota // a string
	fInt                       // a JSON integer
	fNumber                    // a JSON number
	fBool                      // a boolean
	fTime                      // a string, YYYY-MM-DDThh:mm:ss
	fISOTime                   // a string, ISO 8601: YYYY-MM-DDThh:mm:ss, with or without a zone
	fCurrency                  // a string, a currency code
)

// field is one field of a request body in the document.
type field struct {
	name     string
	kind     fieldKind
	required bool
}

var (
	intText  = regexp.MustCompile(`^-?[0-9]+$`)
	numText  = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)
	timeText = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$`)
)

// fields checks the body against spec: every required field present, each
// of its type, none the document does not list. It reports whether the
// body holds.
func (q *promoRequest) fields(spec ...field) bool {
	n := len(q.devs)
	var unknown []string
	for k := range q.o {
		if !slices.ContainsFunc(spec, func(f field) bool { return f.name == k }) {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		q.deviate("field %s is not in the document", k)
	}
	for _, f := range spec {
		raw, ok := q.o[f.name]
		if !ok || string(raw) == "null" {
			if f.required {
				q.deviate("%s is missing", f.name)
			}
			continue
		}
		text := string(raw)
		var s string
		isString := json.Unmarshal(raw, &s) == nil
		switch f.kind {
		case fText:
			if !isString {
				q.deviate("%s is %s, not a string", f.name, text)
			} else if f.required && s == "" {
				q.deviate("%s is empty", f.name)
			}
		case fInt:
			if !intText.MatchString(text) {
				q.deviate("%s is %s, not a JSON integer", f.name, text)
			}
		case fNumber:
			if !numText.MatchString(text) {
				q.deviate("%s is %s, not a plain JSON number", f.name, text)
			}
		case fBool:
			if text != "true" && text != "false" {
				q.deviate("%s is %s, not a boolean", f.name, text)
			}
		case fTime, fISOTime:
			if !isString {
				q.deviate("%s is %s, not a string", f.name, text)
			} else if _, ok := parsePromoTime(s, f.kind == fISOTime); !ok {
				form := "YYYY-MM-DDThh:mm:ss"
				if f.kind == fISOTime {
					form = "an ISO 8601 date and time (YYYY-MM-DDThh:mm:ss, with or without a zone)"
				}
				q.deviate("%s %q is not %s", f.name, s, form)
			}
		case fCurrency:
			if !isString {
				q.deviate("%s is %s, not a string", f.name, text)
			} else if _, ok := q.s.currency(s); !ok {
				q.deviate("%s %q is not an ISO 4217 code", f.name, s)
			}
		}
	}
	return len(q.devs) == n
}

// parsePromoTime reads a validity time: YYYY-MM-DDThh:mm:ss (UTC), or with
// a zone when zoned is allowed.
func parsePromoTime(s string, zoned bool) (time.Time, bool) {
	if timeText.MatchString(s) {
		t, err := time.Parse("2006-01-02T15:04:05", s)
		return t, err == nil
	}
	if zoned {
		t, err := time.Parse(time.RFC3339, s)
		return t, err == nil
	}
	return time.Time{}, false
}

// text is a string field's value ("" when absent).
func (q *promoRequest) text(name string) string {
	var s string
	_ = json.Unmarshal(q.o[name], &s)
	return s
}

// has reports whether the body carries name, not null.
func (q *promoRequest) has(name string) bool {
	raw, ok := q.o[name]
	return ok && string(raw) != "null"
}

// integer is an integer field's value; false when absent.
func (q *promoRequest) integer(name string) (int64, bool) {
	var n json.Number
	if !q.has(name) || json.Unmarshal(q.o[name], &n) != nil {
		return 0, false
	}
	v, err := n.Int64()
	return v, err == nil
}

// window checks that end comes after start where both are given; "" when
// it does.
func window(start, end string) string {
	s, ok1 := parsePromoTime(start, true)
	e, ok2 := parsePromoTime(end, true)
	if ok1 && ok2 && !e.After(s) {
		return fmt.Sprintf("the end %s is not after the start %s", end, start)
	}
	return ""
}
