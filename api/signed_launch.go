package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// The signed-query launch, GET /v1/launch (spec: signed-launch-api.md;
// decisions: docs/signed-launch.md). The client (or the player's browser,
// redirected by the client) sends
//
//	api_key, user_id, game_uid, balance, ts, sig, currency_code, language,
//	return_url, callback_url [, redirect=1]
//
// sig is the lowercase hex HMAC-SHA256, keyed with the client secret, of
// "api_key|user_id|game_uid|balance|ts" built from the values exactly as
// sent (after URL decoding). The answer is {ok:true, game_url} or
// {ok:false, error}; with redirect=1 it is a 302 to game_url or a small
// HTML error page.

// LaunchWindow is how far ts may be from the server's clock, either side,
// inclusive.
const LaunchWindow = 120 * time.Second

// MillisecondThreshold tells the units of ts apart: a value at or above it
// is milliseconds (1e12 ms is September 2001; 1e12 s is the year 33658).
const MillisecondThreshold = 1_000_000_000_000

const (
	maxURLLength      = 2048
	maxLanguageLength = 35 // BCP 47 tags are at most 35 characters in practice
)

// launchParams are the query parameters the launch reads; a parameter
// given more than once is refused, so what was signed is unambiguous.
var launchParams = []string{"api_key", "user_id", "game_uid", "balance", "ts", "sig", "currency_code",
	"language", "return_url", "callback_url", "redirect", "country"}

// signedLaunchAnswer is the spec's launch response, plus the session (the
// game and the return address know the session by this id) and its expiry.
type signedLaunchAnswer struct {
	OK        bool   `json:"ok"`
	GameURL   string `json:"game_url,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	ExpiresAt string `json:"expires_at,omitempty"`
	Error     string `json:"error,omitempty"`
	Code      string `json:"code,omitempty"`
	RequestID string `json:"request_id,omitempty"`
	// Details are the error's structured details (docs/signed-launch.md):
	// server_time on TIMESTAMP_OUT_OF_RANGE, ip on IP_NOT_ALLOWED,
	// parameter on a bad parameter, ...
	Details map[string]any `json:"details,omitempty"`
}

func (s *Server) signedLaunch(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	c.Response().Header().Set("Referrer-Policy", "no-referrer")
	c.Response().Header().Add("Vary", "Accept, Sec-Fetch-Mode")
	q, err := url.ParseQuery(c.Request().URL.RawQuery)
	redirect := browserNavigation(c.Request())
	if err == nil && q.Has("redirect") {
		redirect = isTrue(q.Get("redirect")) // an explicit choice decides over the headers
	}
	var ans signedLaunchAnswer
	if err != nil {
		err = badParam("", "the query string is malformed")
	} else {
		ans, err = s.launchBySignature(c, q)
	}
	if err != nil {
		return s.launchFailed(c, err, redirect)
	}
	if redirect {
		return c.Redirect(http.StatusFound, ans.GameURL)
	}
	return c.JSON(http.StatusOK, ans)
}

func isTrue(v string) bool { return v == "1" || strings.EqualFold(v, "true") }

// browserNavigation reports whether r is a browser sending the player to
// the launch address (the spec allows a client to redirect the user there
// directly): a navigation by Fetch metadata (Sec-Fetch-Mode: navigate), or
// an Accept that ranks text/html above application/json. Such a request
// is answered with the game (a redirect) or a readable page, as with
// redirect=1; a program asking for JSON, or for anything (*/*), gets JSON.
func browserNavigation(r *http.Request) bool {
	if r.Header.Get("Sec-Fetch-Mode") == "navigate" {
		return true
	}
	return acceptRank(r.Header.Values("Accept"), "text/html") > acceptRank(r.Header.Values("Accept"), "application/json")
}

// acceptRank is the quality an Accept header gives the media type typ:
// the q of its most specific matching range (typ, its type/*, */*), 0
// when none matches. No Accept header accepts everything alike.
func acceptRank(accept []string, typ string) float64 {
	if len(accept) == 0 {
		return 1
	}
	major, _, _ := strings.Cut(typ, "/")
	best, specificity := 0.0, -1
	for _, line := range accept {
		for _, part := range strings.Split(line, ",") {
			fields := strings.Split(part, ";")
			rng := strings.ToLower(strings.TrimSpace(fields[0]))
			spec := -1
			switch rng {
			case typ:
				spec = 2
			case major + "/*":
				spec = 1
			case "*/*":
				spec = 0
			}
			if spec < specificity || spec < 0 {
				continue
			}
			q := 1.0
			for _, param := range fields[1:] {
				k, v, _ := strings.Cut(strings.TrimSpace(param), "=")
				if strings.EqualFold(strings.TrimSpace(k), "q") {
					if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && f >= 0 && f <= 1 {
						q = f
					}
				}
			}
			if spec > specificity || q > best {
				best, specificity = q, spec
			}
		}
	}
	return best
}

// badParam is a 400 naming the parameter.
func badParam(name, msg string) *wire.Error {
	e := &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidRequest, Message: msg}
	if name != "" {
		e.Details = map[string]any{"parameter": name}
	}
	return e
}

// launchBySignature checks the request in this order: query shape, API
// key, IP allow-list, required parameters, signature and timestamp, scope,
// parameter values, game and provider; then it syncs the balance, opens the
// session and records the launch.
func (s *Server) launchBySignature(c echo.Context, q url.Values) (signedLaunchAnswer, error) {
	for _, name := range launchParams {
		if len(q[name]) > 1 {
			return signedLaunchAnswer{}, badParam(name, name+" is given more than once")
		}
	}
	if s.deps.LaunchClients == nil {
		return signedLaunchAnswer{}, wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "signed launch is not configured")
	}
	ctx := c.Request().Context()
	apiKey := q.Get("api_key")
	if apiKey == "" {
		return signedLaunchAnswer{}, wire.NewError(http.StatusUnauthorized, wire.CodeUnauthorized, "api_key is required")
	}
	p, err := s.deps.Keys.AuthenticateKey(ctx, gateway.HashKey(apiKey))
	if errors.Is(err, domain.ErrNotFound) {
		return signedLaunchAnswer{}, wire.NewError(http.StatusUnauthorized, wire.CodeUnauthorized, "invalid api_key")
	} else if err != nil {
		return signedLaunchAnswer{}, err
	}
	if env := s.environmentOf(c.Request()); p.Environment != env {
		return signedLaunchAnswer{}, wire.NewError(http.StatusUnauthorized, wire.CodeUnauthorized,
			"this is a "+p.Environment+" api_key; it is not valid at the "+env+" address")
	}
	// From here on the launch is a request of this key like any other: it
	// takes from the key's rate-limit window and is metered as its usage
	// (usageMiddleware on the route).
	wire.SetPrincipal(c, p)
	if err := s.takeRate(c); err != nil {
		return signedLaunchAnswer{}, err
	}
	client, err := s.deps.LaunchClients.LaunchClient(ctx, p.ClientID)
	if err != nil {
		return signedLaunchAnswer{}, fmt.Errorf("launch settings of client %s: %w", p.ClientID, err)
	}
	if len(client.IPAllowList) > 0 {
		ip := s.clientIP(c.Request())
		if !inAny(ip, client.IPAllowList) {
			return signedLaunchAnswer{}, &wire.Error{Status: http.StatusForbidden, Code: wire.CodeIPNotAllowed,
				Message: "this address is not on the client's IP allow-list", Details: map[string]any{"ip": ipText(ip)}}
		}
	}
	for _, name := range []string{"user_id", "game_uid", "balance"} {
		if q.Get(name) == "" {
			return signedLaunchAnswer{}, badParam(name, name+" is required")
		}
	}
	if err := s.checkSignature(q, client); err != nil {
		return signedLaunchAnswer{}, err
	}
	if !p.Has(gateway.ScopeLaunch) {
		return signedLaunchAnswer{}, &wire.Error{Status: http.StatusForbidden, Code: wire.CodeForbidden,
			Message: "this api_key lacks the " + gateway.ScopeLaunch + " scope", Details: map[string]any{"scope": gateway.ScopeLaunch}}
	}
	req, err := launchValues(q, client)
	if err != nil {
		return signedLaunchAnswer{}, err
	}
	game, err := s.deps.Catalog.Game(ctx, req.game)
	if errors.Is(err, domain.ErrNotFound) || (err == nil && !game.Enabled) {
		return signedLaunchAnswer{}, &wire.Error{Status: http.StatusNotFound, Code: wire.CodeNotFound,
			Message: "game not found: " + req.game, Details: map[string]any{"parameter": "game_uid"}}
	} else if err != nil {
		return signedLaunchAnswer{}, err
	}
	prov, err := s.deps.Catalog.Provider(ctx, game.ProviderID)
	if errors.Is(err, domain.ErrNotFound) || (err == nil && !prov.Enabled) {
		return signedLaunchAnswer{}, &wire.Error{Status: http.StatusServiceUnavailable, Code: wire.CodeUnavailable,
			Message: "the game's provider is unavailable", Details: map[string]any{"retry_after_seconds": 60}}
	} else if err != nil {
		return signedLaunchAnswer{}, err
	}
	if err := blockedInCountry(game, req.country, "parameter"); err != nil {
		return signedLaunchAnswer{}, err
	}
	return s.launchSigned(c, p, req, game, prov)
}

// checkSignature verifies sig when it is sent (a sent signature is always
// checked) and requires it when the client does. ts is checked with sig.
func (s *Server) checkSignature(q url.Values, client gateway.LaunchClient) error {
	sig := q.Get("sig")
	if sig == "" {
		if client.SignatureRequired() {
			return wire.NewError(http.StatusUnauthorized, wire.CodeSignatureRequired,
				"sig is required: this client launches only with a signature")
		}
		return nil
	}
	tsText := q.Get("ts")
	if tsText == "" {
		return badParam("ts", "ts is required with sig")
	}
	ts, err := parseTimestamp(tsText)
	if err != nil {
		return badParam("ts", "ts must be an integer: seconds or milliseconds since 1970-01-01 UTC")
	}
	if len(client.Secret) == 0 {
		return wire.NewError(http.StatusUnauthorized, wire.CodeInvalidSignature, "no client secret is issued for this client")
	}
	if !validLaunchSignature(client.Secret, q, sig) {
		return wire.NewError(http.StatusUnauthorized, wire.CodeInvalidSignature,
			"sig does not match: HMAC-SHA256 of api_key|user_id|game_uid|balance|ts with the client secret, lowercase hex")
	}
	if now := s.deps.Clock.Now(); !withinWindow(ts, now) {
		// server_time (Unix seconds) lets the client see its clock skew.
		return &wire.Error{Status: http.StatusUnauthorized, Code: wire.CodeTimestampOutOfRange,
			Message: fmt.Sprintf("ts is more than %d seconds away from the server time", int(LaunchWindow/time.Second)),
			Details: map[string]any{"server_time": now.Unix()}}
	}
	return nil
}

// launchTimestamp is ts in its own unit.
type launchTimestamp struct {
	value  int64
	millis bool
}

func parseTimestamp(s string) (launchTimestamp, error) {
	if s == "" || len(s) > 19 || strings.TrimLeft(s, "0123456789") != "" {
		return launchTimestamp{}, errors.New("not a non-negative integer")
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return launchTimestamp{}, err
	}
	return launchTimestamp{value: v, millis: v >= MillisecondThreshold}, nil
}

// withinWindow compares in ts's own unit, so a seconds value is judged at
// second resolution: ±120 s is accepted, 121 s is not.
func withinWindow(ts launchTimestamp, now time.Time) bool {
	limit, at := int64(LaunchWindow/time.Second), now.Unix()
	if ts.millis {
		limit, at = LaunchWindow.Milliseconds(), now.UnixMilli()
	}
	d := ts.value - at
	return d >= -limit && d <= limit
}

// validLaunchSignature recomputes the HMAC over the raw values and compares
// in constant time. sig must be 64 lowercase hex digits.
func validLaunchSignature(secret []byte, q url.Values, sig string) bool {
	if len(sig) != 2*sha256.Size || strings.ToLower(sig) != sig {
		return false
	}
	want, err := hex.DecodeString(sig)
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(strings.Join([]string{q.Get("api_key"), q.Get("user_id"), q.Get("game_uid"), q.Get("balance"),
		q.Get("ts")}, "|")))
	return hmac.Equal(m.Sum(nil), want)
}

// signedLaunchRequest is a checked launch.
type signedLaunchRequest struct {
	user, game, language, returnURL, sig string
	// country is the player's (optional, upper case).
	country  string
	currency domain.Currency
	balance  domain.Money
}

func launchValues(q url.Values, client gateway.LaunchClient) (signedLaunchRequest, error) {
	r := signedLaunchRequest{user: q.Get("user_id"), game: q.Get("game_uid"), language: q.Get("language"),
		country:   strings.ToUpper(q.Get("country")),
		returnURL: q.Get("return_url"), sig: q.Get("sig")}
	for _, f := range []struct{ name, v string }{{"user_id", r.user}, {"game_uid", r.game}} {
		if err := domain.ValidateID(f.name, f.v); err != nil {
			return r, badParam(f.name, fmt.Sprintf("%s must be 1 to %d characters of A-Z a-z 0-9 . _ - @",
				f.name, domain.MaxIDLength))
		}
	}
	code := strings.ToUpper(q.Get("currency_code"))
	if code == "" {
		code = client.DefaultCurrency
	}
	if code == "" {
		return r, badParam("currency_code", "currency_code is required: the client has no default currency")
	}
	cur, err := domain.ParseCurrency(code)
	if err != nil {
		return r, &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeUnknownCurrency, Message: "unknown currency_code " + code,
			Details: map[string]any{"parameter": "currency_code"}, Err: err}
	}
	r.currency = cur
	if r.balance, err = domain.ParseMoney(q.Get("balance"), cur); err != nil {
		e, _ := wire.Classify(err)
		msg := "balance must be a decimal number such as 100 or 100.50"
		switch {
		case errors.Is(err, domain.ErrTooPrecise):
			msg = fmt.Sprintf("balance has more decimals than %s allows (%d)", cur.Code(), cur.Exponent())
		case errors.Is(err, domain.ErrAmountOverflow):
			msg = "balance is out of range"
		}
		return r, &wire.Error{Status: e.Status, Code: e.Code, Message: msg, Details: map[string]any{"parameter": "balance"}, Err: err}
	}
	if r.balance.IsNegative() {
		return r, &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidAmount, Message: "balance must not be negative",
			Details: map[string]any{"parameter": "balance"}}
	}
	if q.Get("sig") == "" {
		if err := gateway.CheckUnsignedLaunchBalance(r.balance); err != nil {
			return r, &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidAmount, Message: err.Error(),
				Details: map[string]any{"parameter": "balance"}, Err: err}
		}
	}
	if len(r.language) > maxLanguageLength || strings.Trim(r.language,
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != "" {
		return r, badParam("language", "language must be a language tag such as en or pt-BR")
	}
	if r.country != "" && !gateway.IsCountry(r.country) {
		return r, badParam("country", "country must be an ISO 3166-1 alpha-2 code such as BR")
	}
	if len(q.Get("callback_url")) > maxURLLength {
		return r, badParam("callback_url", fmt.Sprintf("callback_url is longer than %d characters", maxURLLength))
	}
	if r.returnURL != "" {
		if err := checkReturnURL(r.returnURL, client.AllowedReturnHosts); err != nil {
			return r, err
		}
	}
	return r, nil
}

// launchSigned moves the player's game wallet to the launch balance, opens
// the session and records the launch. A signed launch is idempotent by its
// signature: its ids derive from sig, so a retry of the same signed URL
// answers the same session and moves no money again, and a retry that
// changed an unsigned parameter (currency_code, return_url) is refused as
// an idempotency conflict. An unsigned launch gets fresh ids every time.
func (s *Server) launchSigned(c echo.Context, p gateway.Principal, r signedLaunchRequest, game gateway.Game, prov gateway.Provider) (signedLaunchAnswer, error) {
	ctx := c.Request().Context()
	sessID, syncTx, launchTx := newToken("gs_"), newToken("sl_"), newToken("ln_")
	if r.sig != "" {
		// The signature is 256 bits the client made with its secret: a
		// fine idempotency key. The session id is a digest of it, not
		// the signature itself.
		d := sha256.Sum256([]byte("pitboss launch session|" + p.ClientID + "|" + r.sig))
		sessID = "gs_" + hex.EncodeToString(d[:16])
		syncTx, launchTx = "sl_"+r.sig, "ln_"+r.sig
	}
	// A seamless client's own wallet holds the money: balance is not
	// synced into the ledger (docs/seamless-wallet.md#launch).
	op, err := s.operatorOf(ctx, p.ClientID)
	if err != nil {
		return signedLaunchAnswer{}, err
	}
	var sync commands.Result
	if op == nil {
		sync, err = s.deps.Commands.SyncBalance(ctx, domain.ClientTx{Client: p.ClientID, Player: r.user,
			ExternalTxID: syncTx, Currency: r.currency, Reason: "signed launch"}, r.balance,
			domain.GameTx{Provider: prov.ID, Game: game.ID, Session: sessID})
		if err != nil {
			return signedLaunchAnswer{}, launchConflict(err)
		}
	}
	route, err := s.providerRoute(ctx, prov)
	if err != nil {
		return signedLaunchAnswer{}, err
	}
	// The same flow as the bearer launch: store the session, ask the
	// provider's adapter for the game address, record the launch.
	res, err := s.launchSession(ctx, launchTarget{prov: prov, game: game, route: route},
		gateway.GameSession{ID: sessID, ClientID: p.ClientID, PlayerID: r.user, ProviderID: prov.ID, GameID: game.ID,
			Currency: r.currency.Code(), LaunchTxID: launchTx, ReturnURL: r.returnURL,
			ExpiresAt: s.deps.Clock.Now().Add(s.cfg.SessionTTL).UTC().Truncate(time.Second)},
		launchRequest{Language: r.language, Country: r.country})
	if err != nil {
		return signedLaunchAnswer{}, launchConflict(err)
	}
	s.log.InfoContext(ctx, "signed launch", "client_id", p.ClientID, "player_id", r.user, "game_id", game.ID,
		"session_id", res.SessionID, "balance", r.balance.String(), "currency", r.currency.Code(),
		"sync_replayed", sync.Replayed, "request_id", wire.RequestID(c))
	return signedLaunchAnswer{OK: true, GameURL: res.GameURL, SessionID: res.SessionID, ExpiresAt: res.ExpiresAt}, nil
}

// launchConflict rewords an idempotency conflict of a repeated signed
// launch: the internal key means nothing to the client.
func launchConflict(err error) error {
	var ic *domain.IdempotencyConflictError
	if !errors.As(err, &ic) {
		return err
	}
	field := ic.Field
	if field == "currency" {
		field = "currency_code"
	}
	return &wire.Error{Status: http.StatusConflict, Code: wire.CodeIdempotencyConflict,
		Message: "this signed launch was already used with a different " + field,
		Details: map[string]any{"parameter": field, "original": ic.Original, "given": ic.Given}, Err: err}
}

// checkReturnURL accepts an absolute http or https URL without user
// information whose host the client allowed. It never follows or fetches
// it.
func checkReturnURL(raw string, allowed []string) error {
	refuse := func(msg string) error {
		return &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeReturnURLNotAllowed, Message: msg,
			Details: map[string]any{"parameter": "return_url"}}
	}
	if len(raw) > maxURLLength {
		return refuse(fmt.Sprintf("return_url is longer than %d characters", maxURLLength))
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return refuse("return_url must be an absolute http or https URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return refuse("return_url must use http or https")
	}
	if u.User != nil {
		return refuse("return_url must not carry user information")
	}
	if strings.ContainsAny(raw, "\\\r\n\t") {
		return refuse("return_url has characters browsers read differently (backslash, control characters)")
	}
	for _, h := range allowed {
		if strings.EqualFold(h, u.Host) || strings.EqualFold(h, u.Hostname()) {
			return nil
		}
	}
	return refuse("return_url host " + u.Hostname() + " is not on the client's allowed return hosts")
}

// clientIP is the address a request came from: the direct peer, or, when
// the peer is a trusted proxy, the right-most address in X-Forwarded-For
// that is not a trusted proxy itself. An unreadable entry yields the zero
// address, which no allow-list contains.
func (s *Server) clientIP(r *http.Request) netip.Addr {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	var addr netip.Addr
	if err == nil {
		addr = peer.Addr().Unmap()
	} else if a, aerr := netip.ParseAddr(r.RemoteAddr); aerr == nil {
		addr = a.Unmap()
	}
	if !addr.IsValid() || !inAny(addr, s.cfg.TrustedProxies) {
		return addr
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return netip.Addr{}
		}
		addr = a.Unmap()
		if !inAny(addr, s.cfg.TrustedProxies) {
			return addr
		}
	}
	return addr
}

func inAny(a netip.Addr, nets []netip.Prefix) bool {
	if !a.IsValid() {
		return false
	}
	for _, n := range nets {
		if n.Contains(a) {
			return true
		}
	}
	return false
}

func ipText(a netip.Addr) string {
	if !a.IsValid() {
		return "unknown"
	}
	return a.String()
}

// launchFailed answers a failed launch in the spec's shape,
// {ok:false, error}, with the status and code wire.Classify gives the
// error, or with a small HTML page for the redirect form (the player's
// browser is on the other end).
func (s *Server) launchFailed(c echo.Context, err error, redirect bool) error {
	e, known := wire.Classify(err)
	rid := wire.RequestID(c)
	if !known {
		s.log.ErrorContext(c.Request().Context(), "signed launch failed", "error", err, "request_id", rid)
	}
	if e.Status == http.StatusServiceUnavailable || e.Status == http.StatusTooManyRequests {
		if ra, ok := e.Details["retry_after_seconds"]; ok {
			c.Response().Header().Set("Retry-After", toString(ra))
		}
	}
	if redirect {
		return htmlPage(c, e.Status, pageData{Title: "The game could not be started", Text: e.Message,
			RequestID: rid})
	}
	return c.JSON(e.Status, signedLaunchAnswer{OK: false, Error: e.Message, Code: e.Code, RequestID: rid, Details: e.Details})
}

// pageData fills the one small page the player may see: a launch error or
// "game closed". It has no external assets and no script.
type pageData struct {
	Title, Text, RequestID string
}

var playerPage = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>body{font-family:system-ui,sans-serif;background:#f4f4f6;color:#222;display:flex;min-height:100vh;margin:0;align-items:center;justify-content:center}
main{background:#fff;border-radius:12px;padding:2rem 2.5rem;max-width:32rem;box-shadow:0 2px 12px rgba(0,0,0,.08);text-align:center}
h1{font-size:1.4rem;margin:0 0 .75rem}p{margin:.5rem 0;line-height:1.5}small{color:#777}</style>
</head><body><main><h1>{{.Title}}</h1><p>{{.Text}}</p>{{if .RequestID}}<p><small>Reference: {{.RequestID}}</small></p>{{end}}</main></body></html>
`))

func htmlPage(c echo.Context, status int, d pageData) error {
	h := c.Response().Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	var b strings.Builder
	if err := playerPage.Execute(&b, d); err != nil {
		return fmt.Errorf("render page: %w", err)
	}
	return c.HTML(status, b.String())
}
