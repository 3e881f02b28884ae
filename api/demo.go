package api

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// The built-in demo game (docs/providers-and-games.md). GET /demo/play is
// the page a demo provider's game_url opens; the page calls GET
// /demo/state and POST /demo/spin, and the server side of those acts as
// the demo provider, calling the provider wallet over HTTP. The session id
// in the URL is the player's only credential, as with any provider's game
// URL. Everything the page loads is embedded here: it makes no request to
// another origin.

//go:embed demo
var demoFiles embed.FS

var demoAssets = func() fs.FS {
	sub, err := fs.Sub(demoFiles, "demo/assets")
	if err != nil {
		panic(err)
	}
	return sub
}()

var demoPage = template.Must(template.ParseFS(demoFiles, "demo/play.html"))

// demoCSP allows only our own scripts, styles and fetches.
const demoCSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
	"base-uri 'none'; form-action 'self'"

func (s *Server) registerDemoRoutes(e *echo.Echo) {
	e.GET("/demo/play", s.demoPlay)
	e.GET("/demo/assets/:name", s.demoAsset)
	e.GET("/demo/state", s.demoState)
	e.POST("/demo/spin", s.demoSpinRound)
}

// demoSession resolves a session of a demo-kind provider with the
// provider (and its secret). Anything else is 404: the demo game must not
// play a session that belongs to an outside provider.
func (s *Server) demoSession(ctx context.Context, id string) (gateway.GameSession, gateway.Provider, error) {
	notFound := &Error{Status: http.StatusNotFound, Code: CodeNotFound, Message: "unknown game session",
		Details: map[string]any{"field": "session"}}
	if domain.ValidateID("session", id) != nil {
		return gateway.GameSession{}, gateway.Provider{}, notFound
	}
	sess, err := s.deps.Sessions.Session(ctx, id)
	if errors.Is(err, domain.ErrNotFound) {
		return gateway.GameSession{}, gateway.Provider{}, notFound
	} else if err != nil {
		return gateway.GameSession{}, gateway.Provider{}, err
	}
	prov, err := s.deps.Catalog.Provider(ctx, sess.ProviderID)
	if errors.Is(err, domain.ErrNotFound) || (err == nil && !prov.Enabled) {
		return gateway.GameSession{}, gateway.Provider{}, notFound
	} else if err != nil {
		return gateway.GameSession{}, gateway.Provider{}, err
	}
	route, err := s.providerRoute(ctx, prov)
	if err != nil {
		return gateway.GameSession{}, gateway.Provider{}, err
	}
	if route.Kind != gateway.ProviderKindDemo {
		return gateway.GameSession{}, gateway.Provider{}, notFound
	}
	return sess, prov, nil
}

type demoPageData struct {
	Session   string
	Lang      string
	Game      string
	Currency  string
	Stakes    []string
	Stake     string
	Paytable  []demoPaytableRow
	ReturnURL string
}

type demoPaytableRow struct {
	Line       string
	Multiplier int64
}

func demoPaytableRows() []demoPaytableRow {
	labels := map[string]string{}
	for _, s := range demoSymbols {
		labels[s.Key] = s.Label
	}
	rows := make([]demoPaytableRow, 0, len(demoPaytable))
	for _, r := range demoPaytable {
		line := fmt.Sprintf("%d × %s", r.Count, labels[r.Symbol])
		if r.Count < demoReels {
			line = fmt.Sprintf("exactly %d × %s", r.Count, labels[r.Symbol])
		}
		rows = append(rows, demoPaytableRow{Line: line, Multiplier: r.Multiplier})
	}
	return rows
}

func demoStakeTexts(cur domain.Currency) []string {
	stakes := demoStakes(cur)
	out := make([]string, len(stakes))
	for i, m := range stakes {
		out[i] = domain.FromMinor(m, cur).String()
	}
	return out
}

func setDemoHeaders(c echo.Context) {
	h := c.Response().Header()
	h.Set("Content-Security-Policy", demoCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer") // the URL holds the session id
	h.Set("Cache-Control", "no-store")
}

// demoPlay is GET /demo/play?session=<id>[&lang=<tag>]: the game page.
func (s *Server) demoPlay(c echo.Context) error {
	ctx := c.Request().Context()
	sess, _, err := s.demoSession(ctx, c.QueryParam("session"))
	if err != nil {
		e, known := classify(err)
		if !known {
			s.log.ErrorContext(ctx, "demo game page", "error", err, "request_id", requestID(c))
		}
		return htmlPage(c, e.Status, pageData{Title: "Game not available", Text: e.Message, RequestID: requestID(c)})
	}
	cur, err := domain.ParseCurrency(sess.Currency)
	if err != nil {
		return err
	}
	game := sess.GameID
	if g, gerr := s.deps.Catalog.Game(ctx, sess.GameID); gerr == nil {
		game = g.Name
	}
	lang := c.QueryParam("lang")
	if lang == "" || len(lang) > maxLaunchLanguage || strings.Trim(lang, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-") != "" {
		lang = "en"
	}
	stakes := demoStakeTexts(cur)
	d := demoPageData{Session: sess.ID, Lang: lang, Game: game, Currency: cur.Code(), Stakes: stakes,
		Paytable: demoPaytableRows(), ReturnURL: "/v1/return?session=" + sess.ID}
	if len(stakes) > 0 {
		d.Stake = stakes[min(3, len(stakes)-1)]
	}
	var b strings.Builder
	if err := demoPage.Execute(&b, d); err != nil {
		return fmt.Errorf("render demo page: %w", err)
	}
	setDemoHeaders(c)
	return c.HTML(http.StatusOK, b.String())
}

// demoAsset serves the page's embedded script and style sheet.
func (s *Server) demoAsset(c echo.Context) error {
	name := c.Param("name")
	b, err := fs.ReadFile(demoAssets, path.Clean(name))
	if err != nil || strings.Contains(name, "/") {
		return apiError(http.StatusNotFound, CodeNotFound, "no such file")
	}
	ct := mime.TypeByExtension(path.Ext(name))
	if ct == "" {
		ct = "application/octet-stream"
	}
	h := c.Response().Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "public, max-age=300")
	return c.Blob(http.StatusOK, ct, b)
}

// demoStateView is GET /demo/state: what the page shows before a spin.
// Reel, symbols and paytable are public, so anyone can check the game's
// return to player. Amounts of the demo endpoints are decimal strings: the
// page is JavaScript, whose numbers are binary floating point.
type demoStateView struct {
	Session   string       `json:"session"`
	Game      string       `json:"game_id"`
	Currency  string       `json:"currency"`
	Balance   string       `json:"balance"`
	Stakes    []string     `json:"stakes"`
	Reel      []string     `json:"reel"`
	Symbols   []demoSymbol `json:"symbols"`
	Paytable  []demoRule   `json:"paytable"`
	ExpiresAt string       `json:"expires_at"`
}

// demoState answers the session's balance, asked of the wallet as the
// provider would (POST /provider/v1/wallet/balance).
func (s *Server) demoState(c echo.Context) error {
	ctx := c.Request().Context()
	sess, prov, err := s.demoSession(ctx, c.QueryParam("session"))
	if err != nil {
		return err
	}
	cur, err := domain.ParseCurrency(sess.Currency)
	if err != nil {
		return err
	}
	a, err := s.demoWalletRetried(ctx, "balance", prov, demoWalletCall{SessionID: sess.ID})
	if err != nil {
		return demoFailure(err)
	}
	setDemoHeaders(c)
	return ok(c, demoStateView{Session: sess.ID, Game: sess.GameID, Currency: cur.Code(), Balance: a.Balance.String(),
		Stakes: demoStakeTexts(cur), Reel: demoStrip, Symbols: demoSymbols, Paytable: demoPaytable,
		ExpiresAt: sess.ExpiresAt.UTC().Format(time.RFC3339)})
}

func demoFailure(err error) error {
	var we *demoWalletError
	if errors.As(err, &we) {
		return we.apiError()
	}
	return err
}

type demoSpinRequest struct {
	Session string `json:"session"`
	Stake   Amount `json:"stake"`
}

// demoSpinView is one spin's outcome.
type demoSpinView struct {
	RoundID          string   `json:"round_id"`
	Line             []string `json:"line"`
	Stake            string   `json:"stake"`
	Multiplier       int64    `json:"multiplier"`
	Win              string   `json:"win"`
	Rule             *string  `json:"rule"`
	Balance          string   `json:"balance"`
	Currency         string   `json:"currency"`
	BetTransactionID string   `json:"bet_transaction_id"`
	WinTransactionID string   `json:"win_transaction_id"`
}

// demoSpinRound is POST /demo/spin {session, stake}: one round. The
// outcome is drawn first (crypto/rand); then the stake is debited
// (POST /provider/v1/wallet/bet with a new round id) and the win, zero or
// more, is credited against that bet with round_closed
// (POST /provider/v1/wallet/win). A refused bet ends the round with
// nothing moved and the wallet's status and code (INSUFFICIENT_FUNDS,
// SESSION_EXPIRED, ...). The win is retried with the same transaction id
// while the wallet says a retry may succeed.
func (s *Server) demoSpinRound(c echo.Context) error {
	var req demoSpinRequest
	if _, err := bindJSON(c, &req); err != nil {
		return err
	}
	if err := requireField("session", req.Session); err != nil {
		return err
	}
	ctx := c.Request().Context()
	sess, prov, err := s.demoSession(ctx, req.Session)
	if err != nil {
		return err
	}
	cur, err := domain.ParseCurrency(sess.Currency)
	if err != nil {
		return err
	}
	if err := requireField("stake", string(req.Stake)); err != nil {
		return err
	}
	stake, err := domain.ParseMoney(string(req.Stake), cur)
	if err != nil {
		return err
	}
	texts := demoStakeTexts(cur)
	allowed := false
	for _, m := range demoStakes(cur) {
		allowed = allowed || m == stake.Minor()
	}
	if !allowed {
		return &Error{Status: http.StatusBadRequest, Code: CodeInvalidAmount,
			Message: "stake must be one of " + strings.Join(texts, ", "), Details: map[string]any{"field": "stake"}}
	}
	line, err := demoSpin()
	if err != nil {
		return err
	}
	mult, rule := demoPayout(line)
	win := domain.FromMinor(stake.Minor()*mult, cur) // demoStakes keeps the top win within int64
	id := make([]byte, 12)
	_, _ = rand.Read(id)
	round := "demo-" + hex.EncodeToString(id)
	betTx, winTx := round+"-bet", round+"-win"
	if _, err := s.demoWallet(ctx, "bet", prov, demoWalletCall{SessionID: sess.ID, TransactionID: betTx,
		RoundID: round, Amount: stake.String()}); err != nil {
		var we *demoWalletError
		if errors.As(err, &we) && we.Retryable {
			// The bet may have been applied without us hearing: roll it
			// back, as a provider must (a rollback that arrives first
			// also keeps a late bet out).
			if _, rerr := s.demoWalletRetried(ctx, "rollback", prov, demoWalletCall{SessionID: sess.ID,
				TransactionID: round + "-rollback", RoundID: round, ReferenceTransactionID: betTx}); rerr != nil {
				s.log.ErrorContext(ctx, "demo game could not roll back a bet", "error", rerr, "session_id", sess.ID,
					"round_id", round, "request_id", requestID(c))
			}
		}
		return demoFailure(err)
	}
	a, err := s.demoWalletRetried(ctx, "win", prov, demoWalletCall{SessionID: sess.ID, TransactionID: winTx,
		RoundID: round, RoundClosed: true, Amount: win.String(), ReferenceTransactionID: betTx})
	if err != nil {
		s.log.ErrorContext(ctx, "demo game could not credit a win", "error", err, "session_id", sess.ID,
			"round_id", round, "win", win.String(), "request_id", requestID(c))
		return demoFailure(err)
	}
	v := demoSpinView{RoundID: round, Line: line[:], Stake: stake.String(), Multiplier: mult,
		Win: win.String(), Balance: a.Balance.String(), Currency: cur.Code(), BetTransactionID: betTx,
		WinTransactionID: winTx}
	if rule != nil {
		r := fmt.Sprintf("%d %s", rule.Count, rule.Symbol)
		v.Rule = &r
	}
	setDemoHeaders(c)
	return ok(c, v)
}
