// Package demogame is the built-in demo game provider
// (docs/providers-and-games.md). GET /demo/play is the page a demo
// provider's game_url opens; the page calls GET /demo/state and POST
// /demo/spin, and the server side of those acts as the demo provider,
// calling the provider wallet over HTTP like any outside provider. The
// session id in the URL is the player's only credential, as with any
// provider's game URL. Everything the page loads is embedded here: it makes
// no request to another origin.
//
// The game is mounted on the HTTP server's Echo instance (Register) and
// answers in that server's shapes through the Host port, which *api.Server
// implements: this package does not import api, and api does not import
// it; cmd wires the two. It reads sessions, providers and routes from the
// gateway stores (it imports only domain and gateway).
package demogame

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

//go:embed web
var files embed.FS

var assets = func() fs.FS {
	sub, err := fs.Sub(files, "web/assets")
	if err != nil {
		panic(err)
	}
	return sub
}()

var page = template.Must(template.ParseFS(files, "web/play.html"))

// csp allows only our own scripts, styles and fetches.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
	"base-uri 'none'; form-action 'self'"

// maxLanguage bounds the page's lang attribute, as the launch bounds a
// language.
const maxLanguage = 16

// Error codes of the one error shape (docs/errors.md) for the answers no
// domain or gateway error carries (a session not found with details.field,
// a stake off the list, a wallet not answering); the host writes the body.
// They are the API's vocabulary, spelled again here because api, which
// declares them, is not importable from here; the demo tests pin each
// against api's constants.
const (
	codeInvalidAmount = "INVALID_AMOUNT"
	codeNotFound      = "NOT_FOUND"
	codeUnavailable   = "SERVICE_UNAVAILABLE"
)

// Config configures the demo game.
type Config struct {
	// WalletURL is where the game calls the provider wallet
	// (/provider/v1/wallet/...) over HTTP, as an outside provider would
	// (PITBOSS_DEMO_WALLET_URL).
	WalletURL string
	// Host is the HTTP server the game is mounted on.
	Host Host
	// Sessions and Catalog resolve the session in the page's URL and its
	// provider (with the secret the wallet calls are signed with).
	Sessions Sessions
	Catalog  gateway.Catalog
	// Routes gives a provider's route kind; nil: every provider is the
	// demo kind (a server without a game catalog).
	Routes Routes
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Now is the time the game signs its wallet calls at (their v2 t);
	// nil: the wall clock. A test whose server runs on a clock of its own
	// gives that clock here, as a provider's clock agrees with ours.
	Now func() time.Time
}

func (c *Config) setDefaults() {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Validate reports every missing setting.
func (c Config) Validate() error {
	var errs []error
	if c.WalletURL == "" {
		errs = append(errs, errors.New("demo game: WalletURL is required"))
	}
	if c.Host == nil {
		errs = append(errs, errors.New("demo game: Host is required"))
	}
	if c.Sessions == nil {
		errs = append(errs, errors.New("demo game: Sessions is required"))
	}
	if c.Catalog == nil {
		errs = append(errs, errors.New("demo game: Catalog is required"))
	}
	return errors.Join(errs...)
}

// Game serves the demo game's routes.
type Game struct {
	cfg  Config
	host Host
	log  *slog.Logger
}

// New returns the demo game; Register mounts it.
func New(cfg Config) (*Game, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Game{cfg: cfg, host: cfg.Host, log: cfg.Logger}, nil
}

// Register adds the game's routes to the server's Echo instance, whose
// middleware (request ids, metrics, logs) and error handler then serve
// them as any other route.
func (g *Game) Register(e *echo.Echo) {
	e.GET("/demo/play", g.play)
	e.GET("/demo/assets/:name", g.asset)
	e.GET("/demo/state", g.state)
	e.POST("/demo/spin", g.spinRound)
}

// requestID is the id the server answers this request with (its
// request-id middleware sets the header before any handler runs).
func requestID(c echo.Context) string {
	return c.Response().Header().Get(echo.HeaderXRequestID)
}

// session resolves a session of a demo-kind provider with the provider
// (and its secret). Anything else is 404: the demo game must not play a
// session that belongs to an outside provider.
func (g *Game) session(ctx context.Context, id string) (gateway.GameSession, gateway.Provider, error) {
	notFound := g.host.HTTPError(http.StatusNotFound, codeNotFound, "unknown game session",
		map[string]any{"field": "session"}, nil)
	if domain.ValidateID("session", id) != nil {
		return gateway.GameSession{}, gateway.Provider{}, notFound
	}
	sess, err := g.cfg.Sessions.Session(ctx, id)
	if errors.Is(err, domain.ErrNotFound) {
		return gateway.GameSession{}, gateway.Provider{}, notFound
	} else if err != nil {
		return gateway.GameSession{}, gateway.Provider{}, err
	}
	prov, err := g.cfg.Catalog.Provider(ctx, sess.ProviderID)
	if errors.Is(err, domain.ErrNotFound) || (err == nil && !prov.Enabled) {
		return gateway.GameSession{}, gateway.Provider{}, notFound
	} else if err != nil {
		return gateway.GameSession{}, gateway.Provider{}, err
	}
	kind := gateway.ProviderKindDemo
	if g.cfg.Routes != nil {
		route, err := g.cfg.Routes.ProviderRoute(ctx, prov.ID)
		if err != nil {
			return gateway.GameSession{}, gateway.Provider{}, err
		}
		kind = route.Kind
	}
	if kind != gateway.ProviderKindDemo {
		return gateway.GameSession{}, gateway.Provider{}, notFound
	}
	return sess, prov, nil
}

type pageData struct {
	Session   string
	Lang      string
	Game      string
	Currency  string
	Stakes    []string
	Stake     string
	Paytable  []paytableRow
	ReturnURL string
}

type paytableRow struct {
	Line       string
	Multiplier int64
}

func paytableRows() []paytableRow {
	labels := map[string]string{}
	for _, s := range symbols {
		labels[s.Key] = s.Label
	}
	rows := make([]paytableRow, 0, len(paytable))
	for _, r := range paytable {
		line := fmt.Sprintf("%d × %s", r.Count, labels[r.Symbol])
		if r.Count < reels {
			line = fmt.Sprintf("exactly %d × %s", r.Count, labels[r.Symbol])
		}
		rows = append(rows, paytableRow{Line: line, Multiplier: r.Multiplier})
	}
	return rows
}

func stakeTexts(cur domain.Currency) []string {
	stakes := stakesOf(cur)
	out := make([]string, len(stakes))
	for i, m := range stakes {
		out[i] = domain.FromMinor(m, cur).String()
	}
	return out
}

func setHeaders(c echo.Context) {
	h := c.Response().Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer") // the URL holds the session id
	h.Set("Cache-Control", "no-store")
}

// play is GET /demo/play?session=<id>[&lang=<tag>]: the game page.
func (g *Game) play(c echo.Context) error {
	ctx := c.Request().Context()
	sess, _, err := g.session(ctx, c.QueryParam("session"))
	if err != nil {
		return g.host.ErrorPage(c, "Game not available", err)
	}
	cur, err := domain.ParseCurrency(sess.Currency)
	if err != nil {
		return err
	}
	game := sess.GameID
	if gm, gerr := g.cfg.Catalog.Game(ctx, sess.GameID); gerr == nil {
		game = gm.Name
	}
	lang := c.QueryParam("lang")
	if lang == "" || len(lang) > maxLanguage || strings.Trim(lang, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-") != "" {
		lang = "en"
	}
	stakes := stakeTexts(cur)
	d := pageData{Session: sess.ID, Lang: lang, Game: game, Currency: cur.Code(), Stakes: stakes,
		Paytable: paytableRows(), ReturnURL: "/v1/return?session=" + sess.ID}
	if len(stakes) > 0 {
		d.Stake = stakes[min(3, len(stakes)-1)]
	}
	var b strings.Builder
	if err := page.Execute(&b, d); err != nil {
		return fmt.Errorf("render demo page: %w", err)
	}
	setHeaders(c)
	return c.HTML(http.StatusOK, b.String())
}

// asset serves the page's embedded script and style sheet.
func (g *Game) asset(c echo.Context) error {
	name := c.Param("name")
	b, err := fs.ReadFile(assets, path.Clean(name))
	if err != nil || strings.Contains(name, "/") {
		return g.host.HTTPError(http.StatusNotFound, codeNotFound, "no such file", nil, nil)
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

// stateView is GET /demo/state: what the page shows before a spin.
// Reel, symbols and paytable are public, so anyone can check the game's
// return to player. Amounts of the demo endpoints are decimal strings: the
// page is JavaScript, whose numbers are binary floating point.
type stateView struct {
	Session   string    `json:"session"`
	Game      string    `json:"game_id"`
	Currency  string    `json:"currency"`
	Balance   string    `json:"balance"`
	Stakes    []string  `json:"stakes"`
	Reel      []string  `json:"reel"`
	Symbols   []symbol  `json:"symbols"`
	Paytable  []payRule `json:"paytable"`
	ExpiresAt string    `json:"expires_at"`
}

// state answers the session's balance, asked of the wallet as the
// provider would (POST /provider/v1/wallet/balance).
func (g *Game) state(c echo.Context) error {
	ctx := c.Request().Context()
	sess, prov, err := g.session(ctx, c.QueryParam("session"))
	if err != nil {
		return err
	}
	cur, err := domain.ParseCurrency(sess.Currency)
	if err != nil {
		return err
	}
	a, err := g.walletRetried(ctx, requestID(c), "balance", prov, walletCall{SessionID: sess.ID})
	if err != nil {
		return g.walletFailure(err)
	}
	setHeaders(c)
	return g.host.OK(c, stateView{Session: sess.ID, Game: sess.GameID, Currency: cur.Code(), Balance: a.Balance.String(),
		Stakes: stakeTexts(cur), Reel: strip, Symbols: symbols, Paytable: paytable,
		ExpiresAt: sess.ExpiresAt.UTC().Format(time.RFC3339)})
}

// walletFailure shows a wallet refusal to the player with the wallet's
// own status and code (INSUFFICIENT_FUNDS, SESSION_EXPIRED, ...); a wallet
// we could not reach, or that failed, is 503.
func (g *Game) walletFailure(err error) error {
	var we *walletError
	if !errors.As(err, &we) {
		return err
	}
	if we.Err != nil || we.Status >= 500 || we.Code == "" {
		return g.host.HTTPError(http.StatusServiceUnavailable, codeUnavailable, "the wallet is not answering; try again", nil, we)
	}
	return g.host.HTTPError(we.Status, we.Code, we.Message, nil, we)
}

// requireField refuses a missing required field, naming it: a gateway
// field error, which the host answers as every handler's (400
// INVALID_REQUEST with details.field).
func requireField(name, v string) error {
	if strings.TrimSpace(v) == "" {
		return &gateway.FieldError{Field: name, Message: name + " is required"}
	}
	return nil
}

type spinRequest struct {
	Session string            `json:"session"`
	Stake   domain.AmountText `json:"stake"`
}

// spinView is one spin's outcome.
type spinView struct {
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

// spinRound is POST /demo/spin {session, stake}: one round. The outcome
// is drawn first (crypto/rand); then the stake is debited (POST
// /provider/v1/wallet/bet with a new round id) and the win, zero or more,
// is credited against that bet with round_closed (POST
// /provider/v1/wallet/win). A refused bet ends the round with nothing
// moved and the wallet's status and code (INSUFFICIENT_FUNDS,
// SESSION_EXPIRED, ...). The win is retried with the same transaction id
// while the wallet says a retry may succeed.
func (g *Game) spinRound(c echo.Context) error {
	var req spinRequest
	if err := g.host.BindJSON(c, &req); err != nil {
		return err
	}
	if err := requireField("session", req.Session); err != nil {
		return err
	}
	ctx := c.Request().Context()
	rid := requestID(c)
	sess, prov, err := g.session(ctx, req.Session)
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
	texts := stakeTexts(cur)
	allowed := false
	for _, m := range stakesOf(cur) {
		allowed = allowed || m == stake.Minor()
	}
	if !allowed {
		return g.host.HTTPError(http.StatusBadRequest, codeInvalidAmount, "stake must be one of "+strings.Join(texts, ", "),
			map[string]any{"field": "stake"}, nil)
	}
	line, err := spin()
	if err != nil {
		return err
	}
	mult, rule := payout(line)
	win := domain.FromMinor(stake.Minor()*mult, cur) // stakesOf keeps the top win within int64
	id := make([]byte, 12)
	_, _ = rand.Read(id)
	round := "demo-" + hex.EncodeToString(id)
	betTx, winTx := round+"-bet", round+"-win"
	if _, err := g.wallet(ctx, rid, "bet", prov, walletCall{SessionID: sess.ID, TransactionID: betTx,
		RoundID: round, Amount: stake.String()}); err != nil {
		var we *walletError
		if errors.As(err, &we) && we.Retryable {
			// The bet may have been applied without us hearing: roll it
			// back, as a provider must (a rollback that arrives first
			// also keeps a late bet out).
			if _, rerr := g.walletRetried(ctx, rid, "rollback", prov, walletCall{SessionID: sess.ID,
				TransactionID: round + "-rollback", RoundID: round, ReferenceTransactionID: betTx}); rerr != nil {
				g.log.ErrorContext(ctx, "demo game could not roll back a bet", "error", rerr, "session_id", sess.ID,
					"round_id", round, "request_id", rid)
			}
		}
		return g.walletFailure(err)
	}
	a, err := g.walletRetried(ctx, rid, "win", prov, walletCall{SessionID: sess.ID, TransactionID: winTx,
		RoundID: round, RoundClosed: true, Amount: win.String(), ReferenceTransactionID: betTx})
	if err != nil {
		g.log.ErrorContext(ctx, "demo game could not credit a win", "error", err, "session_id", sess.ID,
			"round_id", round, "win", win.String(), "request_id", rid)
		return g.walletFailure(err)
	}
	v := spinView{RoundID: round, Line: line[:], Stake: stake.String(), Multiplier: mult,
		Win: win.String(), Balance: a.Balance.String(), Currency: cur.Code(), BetTransactionID: betTx,
		WinTransactionID: winTx}
	if rule != nil {
		r := fmt.Sprintf("%d %s", rule.Count, rule.Symbol)
		v.Rule = &r
	}
	setHeaders(c)
	return g.host.OK(c, v)
}
