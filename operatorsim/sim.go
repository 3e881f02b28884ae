// Package operatorsim is the operator simulator (`pitboss operator-sim`):
// the far side of a seamless client, a casino operator's own wallet (its
// player account management, PAM) that Pitboss calls on every bet, win and
// rollback. Operators rehearse their integration against it; our tests and
// chaos runs use it as the operator.
//
// It speaks one of two operator-wallet protocols, each written from its
// public document:
//
//   - valkyrie-pam (pam.go, pam_rules.go): the Valkyrie PAM API 0.6.0
//     (pam/pam_api.yml of valkyrie-fnd/valkyrie): GET /players/session,
//     GET /players/{playerId}/balance, GET and POST
//     /players/{playerId}/transactions, GET
//     /players/{playerId}/gamerounds/{providerGameRoundId}; a bearer API
//     token, the X-Player-Token session header, X-Correlation-ID and the
//     provider query parameter; the document's addTransaction rules, error
//     codes and amounts as JSON numbers read exactly.
//   - tbb (tbb.go): The Bet Brothers' operator Wallet API
//     (the-bet-brothers.gitbook.io, /doc/wallet-api/* and the addendum's
//     Wallet Error Response): POST /operator/wallet with an action of
//     balance, bet, win, refund or rollback-win, every body signed
//     (X-REQUEST-SIGN, the hex HMAC-SHA256 of the raw body keyed with the
//     shared secret), integer subunits, errors as {"code","message"} with
//     the code as the HTTP status.
//
// Both faces share one store (store.go): players with exact balances in
// minor units per currency, one list of transactions, each applied once
// per idempotency key whatever is re-sent. The state is written to a JSON
// state file atomically (a temporary file, fsync'd, renamed) after every
// movement, before it is answered, and read back at start and on every
// restart.
//
// Fault injection (faults.go), set by Config or at run time through the
// admin API under /_sim/ (admin.go): a fixed added latency, and by
// probability or every N-th call: a timeout (the call held, unapplied,
// until the client gives up), a 5xx without applying, an answer lost
// after the movement was applied and written (the connection dropped, or
// a 5xx), and a restart (the call dropped unapplied, the server closed,
// the state read back from the file, the same address listened on again
// after a pause). Each fault is counted. Whatever the faults, a movement
// is applied at most once per id.
package operatorsim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pitboss/pitboss/domain"
)

// The protocols the simulator speaks.
const (
	// ProtocolValkyriePAM is the Valkyrie PAM API 0.6.0.
	ProtocolValkyriePAM = "valkyrie-pam"
	// ProtocolTBB is The Bet Brothers' operator Wallet API.
	ProtocolTBB = "tbb"
)

// Protocols lists the protocols, for a command's usage.
var Protocols = []string{ProtocolValkyriePAM, ProtocolTBB}

// Config is one simulator.
type Config struct {
	// Protocol is ProtocolValkyriePAM or ProtocolTBB.
	Protocol string
	// APIToken is the PAM API token every call carries as
	// "Authorization: Bearer <token>" (valkyrie-pam: required).
	APIToken string
	// Secret is the shared password TBB signs every body with (tbb:
	// required).
	Secret string
	// AdminToken guards the /_sim/ routes (Authorization: Bearer); empty:
	// the APIToken (valkyrie-pam) or the Secret (tbb).
	AdminToken string
	// StatePath is the state file; empty: the state lives in memory only
	// (and a restart keeps it there).
	StatePath string
	// Players player-1..player-N are created with Balance (decimal text)
	// in Currency when they do not exist yet (a reloaded state keeps its
	// players as they are).
	Players  int
	Balance  string
	Currency string
	// Country and Language are what PAM's session answers (defaults MT,
	// EN).
	Country, Language string
	// Faults are in force from the start.
	Faults Faults
	// Logger logs a line per call; nil: discarded.
	Logger *slog.Logger
	// Now is the clock; nil: time.Now.
	Now func() time.Time
}

func (c *Config) setDefaults() {
	if c.AdminToken == "" {
		c.AdminToken = map[string]string{ProtocolValkyriePAM: c.APIToken, ProtocolTBB: c.Secret}[c.Protocol]
	}
	if c.Balance == "" {
		c.Balance = "1000"
	}
	if c.Currency == "" {
		c.Currency = "EUR"
	}
	if c.Country == "" {
		c.Country = "MT"
	}
	if c.Language == "" {
		c.Language = "EN"
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Validate reports every setting that cannot run, joined.
func (c Config) Validate() error {
	var errs []error
	switch c.Protocol {
	case ProtocolValkyriePAM:
		if c.APIToken == "" {
			errs = append(errs, errors.New("valkyrie-pam needs the API token"))
		}
	case ProtocolTBB:
		if c.Secret == "" {
			errs = append(errs, errors.New("tbb needs the shared secret"))
		}
	default:
		errs = append(errs, fmt.Errorf("protocol %q: want one of %s", c.Protocol, strings.Join(Protocols, ", ")))
	}
	if c.Players < 0 {
		errs = append(errs, fmt.Errorf("players %d is negative", c.Players))
	}
	if c.Players > 0 {
		if cur, err := domain.ParseCurrency(c.Currency); err != nil {
			errs = append(errs, err)
		} else if _, err := parseAmountText(c.Balance, cur); err != nil {
			errs = append(errs, fmt.Errorf("balance: %w", err))
		}
	}
	errs = append(errs, c.Faults.Validate())
	return errors.Join(errs...)
}

// Sim is a running operator wallet simulator.
type Sim struct {
	cfg     Config
	store   *store
	faults  faultBox
	log     *slog.Logger
	handler http.Handler
	// gate: every wallet call holds it shared; a restart takes it whole,
	// so the state is read back with no call half way.
	gate sync.RWMutex

	srvMu   sync.Mutex
	srv     *server // nil until Start
	addr    string
	closed  chan struct{}
	closeMu sync.Once
	bg      sync.WaitGroup // restarts under way
}

// New makes a simulator: it validates cfg, reads the state file (when
// there is one) and creates the configured players that do not exist.
func New(cfg Config) (*Sim, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("operator simulator: %w", err)
	}
	st, err := newStore(cfg.StatePath, cfg.Now)
	if err != nil {
		return nil, err
	}
	s := &Sim{cfg: cfg, store: st, log: cfg.Logger, closed: make(chan struct{})}
	s.faults.set(cfg.Faults)
	for i := 1; i <= cfg.Players; i++ {
		id := "player-" + strconv.Itoa(i)
		if _, ok := st.player(id); ok {
			continue
		}
		if _, err := s.AddPlayer(id, cfg.Currency, cfg.Balance); err != nil {
			return nil, err
		}
	}
	s.handler = s.routes()
	return s, nil
}

// Protocol is the protocol the simulator speaks.
func (s *Sim) Protocol() string { return s.cfg.Protocol }

// Handler serves the protocol's routes and the /_sim/ admin routes. A
// restart through it alone (no Start) reads the state back without
// closing a listener.
func (s *Sim) Handler() http.Handler { return s.handler }

// AddPlayer creates the player (or its account in currency) when it does
// not exist, adds balance (decimal text, e.g. "1000.00") to its cash, and
// issues a new player token for it in currency.
func (s *Sim) AddPlayer(id, currency, balance string) (string, error) {
	return s.Fund(id, currency, balance, "", "")
}

// Fund is AddPlayer with the bonus and promo balances too (decimal text;
// empty: none added).
func (s *Sim) Fund(id, currency, cash, bonus, promo string) (string, error) {
	cur, err := domain.ParseCurrency(currency)
	if err != nil {
		return "", err
	}
	var a Amounts
	for _, f := range []struct {
		name, text string
		to         *int64
	}{{"balance", cash, &a.Cash}, {"bonus", bonus, &a.Bonus}, {"promo", promo, &a.Promo}} {
		if f.text == "" {
			continue
		}
		if *f.to, err = parseAmountText(f.text, cur); err != nil {
			return "", fmt.Errorf("%s: %w", f.name, err)
		}
	}
	return s.store.fund(id, cur, a)
}

// ErrNoAccount: the player has no account in that currency.
var ErrNoAccount = errors.New("no such player account")

// Balance is the player's cash balance in currency.
func (s *Sim) Balance(player, currency string) (domain.Money, error) {
	cur, err := domain.ParseCurrency(currency)
	if err != nil {
		return domain.Money{}, err
	}
	s.store.mu.Lock()
	a, ok := s.store.account(player, currency)
	s.store.mu.Unlock()
	if !ok {
		return domain.Money{}, fmt.Errorf("%s in %s: %w", player, currency, ErrNoAccount)
	}
	return domain.FromMinor(a.Cash, cur), nil
}

// Player is the player's balances and tokens, and whether it exists.
func (s *Sim) Player(id string) (Player, bool) { return s.store.player(id) }

// Players is every player, by id.
func (s *Sim) Players() []Player { return s.store.players() }

// Transactions is every applied transaction, in order.
func (s *Sim) Transactions() []Transaction { return s.store.transactions() }

// SetFaults puts f in force from the next call (the every-N counts and
// the draws start again).
func (s *Sim) SetFaults(f Faults) error {
	if err := f.Validate(); err != nil {
		return err
	}
	s.faults.set(f)
	return nil
}

// Faults are the faults in force.
func (s *Sim) Faults() Faults { return s.faults.get() }

// Counts are the calls taken and the faults caused so far.
func (s *Sim) Counts() Counts { return s.faults.snapshot() }

// routes is the protocol's routes behind the fault injection, and the
// admin routes.
func (s *Sim) routes() http.Handler {
	mux := http.NewServeMux()
	switch s.cfg.Protocol {
	case ProtocolValkyriePAM:
		s.pamRoutes(mux)
	case ProtocolTBB:
		mux.Handle("POST /operator/wallet", s.call(http.HandlerFunc(s.tbbWallet)))
	}
	s.adminRoutes(mux)
	return mux
}

// callInfo is what a handler tells the call's log line.
type callInfo struct{ what string }

type callInfoKey struct{}

// note sets the call's log note (the TBB action, the PAM type and id).
func note(ctx context.Context, format string, args ...any) {
	if ci, ok := ctx.Value(callInfoKey{}).(*callInfo); ok {
		ci.what = fmt.Sprintf(format, args...)
	}
}
