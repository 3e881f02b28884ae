// Package wallet is the wallet core: what every provider's wallet call does
// whatever its protocol — the caller and its session (token → client,
// player, provider, game, currency), the game a call is booked under, the
// money calls (balance, bet, win, rollback, with their promo and jackpot
// kinds) and one Verdict for every outcome. A protocol's dialect (package
// api/dialect/...) authenticates, decodes, encodes and maps the verdict to
// its statuses, and decides nothing about money.
package wallet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// Catalog reads providers and games: a game by our id, or by its
// provider's code among one provider's games. Unknown is domain.ErrNotFound.
type Catalog interface {
	gateway.Catalog
	// ProviderGame is provider's game whose provider code is code
	// (games.provider_game_code). Two games of one provider under one
	// code is gateway.ErrAmbiguousGameCode.
	ProviderGame(ctx context.Context, provider, code string) (gateway.Game, error)
}

// Sessions reads game sessions and tells whether one was superseded.
type Sessions interface {
	gateway.Sessions
	// Superseded reports whether a newer session of s's client, player,
	// provider and currency exists: s then takes no new bet.
	Superseded(ctx context.Context, s gateway.GameSession) (bool, error)
}

// TxRecords reads the ledger's record of a transaction by its key
// (domain.GameTxKey).
type TxRecords interface {
	TxRecord(ctx context.Context, key string) (domain.TxRecord, bool, error)
}

// Deps are the stores and the ledger behind the core.
type Deps struct {
	Catalog  Catalog
	Sessions Sessions
	// Ledger runs the money calls; Balances reads a player's balance;
	// Records the ledger's transaction records (optional: Record answers
	// a Fault without it).
	Ledger   *commands.Handler
	Balances commands.Balances
	Records  TxRecords
	// Operators finds a seamless client's own wallet, FollowUps queues
	// the unknown outcomes of its calls (docs/seamless-wallet.md);
	// without Operators every client is a ledger client.
	Operators Operators
	FollowUps FollowUps
	// FollowUpGrace is how long a follow-up waits before its first
	// attempt (0: FollowUpGrace).
	FollowUpGrace time.Duration
	// Clock is the core's time (nil: the system clock).
	Clock Clock
	// FreeSpins finds the free-bet reward a bet of nothing spends when its
	// protocol cannot name one (docs/promotions.md); without it such a bet
	// is booked as before.
	FreeSpins FreeSpins
}

// FreeSpins finds a player's active free-bet reward (promo.Service).
type FreeSpins interface {
	// FreeSpin is the oldest active reward of the player on the
	// provider's game in currency with free bets left; ok false when none.
	FreeSpin(ctx context.Context, clientID, providerID, playerID, gameID, currency string) (id string, ok bool, err error)
}

// Result is a booked call's result: our event id, the caller's id, the
// amount moved and the balance after it, whether it was replayed.
type Result = commands.Result

// Clock is the server's time.
type Clock = commands.Clock

// Core answers the provider calls of every protocol.
type Core struct{ deps Deps }

// New returns the core over deps.
func New(deps Deps) *Core { return &Core{deps: deps} }

// ErrNoStores: the process was built without the ledger's stores.
var ErrNoStores = errors.New("the server has no ledger stores")

func (c *Core) ready() error {
	if c == nil {
		return ErrNoStores
	}
	if d := c.deps; d.Catalog == nil || d.Sessions == nil || d.Ledger == nil || d.Balances == nil {
		return ErrNoStores
	}
	return nil
}

// Caller is the enabled provider id names, on protocol: anything else is
// Unauthenticated, with the same answer for an unknown provider as for a
// wrong credential, so a caller learns nothing of which providers exist.
// The dialect then checks the credential (its signature or key).
func (c *Core) Caller(ctx context.Context, id, protocol string) (gateway.Provider, error) {
	if err := c.ready(); err != nil {
		return gateway.Provider{}, err
	}
	if id == "" {
		return gateway.Provider{}, Refuse(Unauthenticated, "no provider named")
	}
	prov, err := c.deps.Catalog.Provider(ctx, id)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return prov, Refuse(Unauthenticated, "unknown provider")
	case err != nil:
		return prov, fmt.Errorf("look up provider %s: %w", gateway.ClipValue(id), err)
	case !prov.Enabled:
		return prov, Refuse(Unauthenticated, "provider disabled")
	case protocol != "" && prov.Protocol() != protocol:
		return prov, Refuse(Unauthenticated, "provider is on the "+prov.Protocol()+" wallet protocol")
	}
	return prov, nil
}

// Session is a call's game session, resolved, with the wallet protocol
// of the provider calling in it (which bounds the balances it can say).
type Session struct {
	gateway.GameSession
	Cur      domain.Currency
	Protocol gateway.WalletProtocolSpec
}

// Session resolves token, our game session id, which must be a session of
// prov (else UnknownSession). player, when not empty, must be the
// session's player: else WrongPlayer, with the session returned, so a
// protocol that tells the balance on a refusal can.
func (c *Core) Session(ctx context.Context, prov gateway.Provider, token, player string) (Session, error) {
	if err := c.ready(); err != nil {
		return Session{}, err
	}
	sess, err := c.deps.Sessions.Session(ctx, token)
	if errors.Is(err, domain.ErrNotFound) || (err == nil && sess.ProviderID != prov.ID) {
		return Session{}, Refuse(UnknownSession, "unknown token")
	} else if err != nil {
		return Session{}, fmt.Errorf("look up session: %w", err)
	}
	cur, err := domain.ParseCurrency(sess.Currency)
	if err != nil {
		return Session{}, fmt.Errorf("currency of session %s: %w", sess.ID, err)
	}
	spec, _ := gateway.WalletProtocolOf(prov.Protocol())
	s := Session{GameSession: sess, Cur: cur, Protocol: spec}
	if player != "" && player != sess.PlayerID {
		return s, Refuse(WrongPlayer, "the player is not the session's")
	}
	return s, nil
}

// SameCurrency refuses code when it is not the session's currency
// (WrongCurrency).
func (s Session) SameCurrency(code string) error {
	if code != s.Currency {
		return Refuse(WrongCurrency, "currency is not the session's")
	}
	return nil
}

// Wallet is the session player's wallet.
func (s Session) Wallet() domain.AccountID { return domain.PlayerWallet(s.ClientID, s.PlayerID, s.Cur) }

// Game is the game a call is booked under: the session's own when code is
// empty or names it, else the game code names — our id or its provider
// code — which must be a game of the session's provider (a lobby or live
// provider moves a player between games in one session, and each game's
// money is that game's GGR). Anything else is InvalidGame. Whether a game
// is enabled is not looked at: disabling a game stops its launches, while
// the sessions already open play on and settle.
func (c *Core) Game(ctx context.Context, s Session, code string) (string, error) {
	if code == "" || code == s.GameID {
		return s.GameID, nil
	}
	own, err := c.deps.Catalog.Game(ctx, s.GameID)
	if err != nil && !errors.Is(err, domain.ErrNotFound) {
		return "", fmt.Errorf("look up the session's game: %w", err)
	}
	if err == nil && own.Code == code {
		return own.ID, nil
	}
	g, err := c.deps.Catalog.Game(ctx, code)
	switch {
	case err == nil && g.ProviderID == s.ProviderID:
		return g.ID, nil
	case err != nil && !errors.Is(err, domain.ErrNotFound):
		return "", fmt.Errorf("look up game %s: %w", gateway.ClipValue(code), err)
	}
	g, err = c.deps.Catalog.ProviderGame(ctx, s.ProviderID, code)
	switch {
	case errors.Is(err, domain.ErrNotFound) || errors.Is(err, gateway.ErrAmbiguousGameCode):
		return "", &Refusal{Verdict: InvalidGame, Reason: "not a game of the session's provider", Err: err}
	case err != nil:
		return "", fmt.Errorf("look up game code %s: %w", gateway.ClipValue(code), err)
	}
	return g.ID, nil
}

// Balance is the session player's balance in the session's currency.
func (c *Core) Balance(ctx context.Context, s Session) (domain.Money, error) {
	if op, err := c.operator(ctx, s); err != nil || op != nil {
		if err != nil {
			return domain.Money{}, err
		}
		return c.seamlessBalance(ctx, op, s)
	}
	st, err := c.deps.Balances.Account(ctx, s.Wallet())
	if err != nil {
		return domain.Money{}, fmt.Errorf("balance of %s: %w", s.Wallet(), err)
	}
	return domain.FromMinor(st.Balance, s.Cur), nil
}

// Tx is a money call in the core's words: its id (the idempotency key,
// with the call's kind and content), the game (as Game resolved it), the
// round and whether the call closes it, and its promotion and jackpot
// parts.
type Tx struct {
	ID, Game, Round  string
	RoundClosed      bool
	Promo            bool
	Campaign, Reward string
	// Jackpot is the part of a win a jackpot paid (zero value: none).
	Jackpot domain.Money
}

// MaxBalance is the largest balance, in minor units, the session's
// protocol can say in its currency: a credit past it is refused before it
// is booked (domain.ErrBalanceLimit), never booked and then unanswerable.
func (s Session) MaxBalance() int64 { return s.Protocol.MaxBalance(s.Cur) }

func (s Session) gameTx(t Tx) domain.GameTx {
	g := domain.GameTx{Client: s.ClientID, Player: s.PlayerID, Provider: s.ProviderID, Game: t.Game, Round: t.Round,
		Session: s.ID, ExternalTxID: t.ID, Currency: s.Cur, RoundClosed: t.RoundClosed, Promo: t.Promo,
		Campaign: t.Campaign, Reward: t.Reward, Jackpot: t.Jackpot, MaxBalance: s.MaxBalance()}
	if g.Game == "" {
		g.Game = s.GameID
	}
	return g
}

// Bet debits amount while the session takes bets: until it expires, and
// only while no newer session of the same client, player, provider and
// currency exists (the Caleta document's superseded token, applied to
// every protocol; docs/provider-wallet.md#rules). Another currency is
// another wallet of the player's, whose session supersedes nothing here. Both are decided by the
// ledger after its idempotency check, so a retry of a bet accepted before
// still answers as the first time.
func (c *Core) Bet(ctx context.Context, s Session, t Tx, amount domain.Money) (Result, error) {
	superseded, err := c.deps.Sessions.Superseded(ctx, s.GameSession)
	if err != nil {
		return Result{}, fmt.Errorf("is session %s superseded: %w", s.ID, err)
	}
	terms := commands.SessionTerms{ExpiresAt: s.ExpiresAt, Superseded: superseded}
	if t, err = c.freeSpin(ctx, s, t, amount); err != nil {
		return Result{}, err
	}
	if op, err := c.operator(ctx, s); err != nil || op != nil {
		if err != nil {
			return Result{}, err
		}
		return c.seamlessBet(ctx, op, s, t, amount, terms)
	}
	return c.deps.Ledger.PlaceBetInSession(ctx, s.gameTx(t), amount, terms)
}

// freeSpin makes a bet of nothing that names no reward a free bet of the
// player's active reward on the game, when there is one: a protocol
// without promotion fields (The Bet Brothers' Game Events) spends the
// free spins a campaign granted that way (docs/promotions.md). A retry
// spends what the original spent, whatever is active now, so its
// fingerprint matches.
func (c *Core) freeSpin(ctx context.Context, s Session, t Tx, amount domain.Money) (Tx, error) {
	if !amount.IsZero() || t.Promo || c.deps.FreeSpins == nil {
		return t, nil
	}
	g := s.gameTx(t)
	if c.deps.Records != nil {
		rec, ok, err := c.deps.Records.TxRecord(ctx, domain.GameTxKey(g.Client, g.Provider, g.ExternalTxID))
		if err != nil {
			return t, fmt.Errorf("record of bet %s: %w", t.ID, err)
		}
		if ok {
			if r := rec.Request["reward_id"]; r != "" && rec.Request["promo"] == "true" {
				t.Promo, t.Reward = true, r
			}
			return t, nil
		}
	}
	id, ok, err := c.deps.FreeSpins.FreeSpin(ctx, g.Client, g.Provider, g.Player, g.Game, g.Currency.Code())
	if err != nil {
		return t, fmt.Errorf("free spin of bet %s: %w", t.ID, err)
	}
	if ok {
		t.Promo, t.Reward = true, id
	}
	return t, nil
}

// Win credits amount on the bet ref names (or, ref empty, on the round),
// also after the session has ended.
func (c *Core) Win(ctx context.Context, s Session, t Tx, amount domain.Money, ref string) (Result, error) {
	if op, err := c.operator(ctx, s); err != nil || op != nil {
		if err != nil {
			return Result{}, err
		}
		return c.seamlessWin(ctx, op, s, t, amount, ref)
	}
	return c.deps.Ledger.CreditWin(ctx, s.gameTx(t), amount, ref)
}

// Rollback undoes the transaction ref names, also after the session has
// ended. A rollback of a transaction never booked moves nothing and is
// kept, so the late original is refused (RolledBackEarlier).
func (c *Core) Rollback(ctx context.Context, s Session, t Tx, ref string) (Result, error) {
	if op, err := c.operator(ctx, s); err != nil || op != nil {
		if err != nil {
			return Result{}, err
		}
		return c.seamlessRollback(ctx, op, s, t, ref)
	}
	return c.deps.Ledger.Rollback(ctx, s.gameTx(t), ref)
}

// RefundPrefix makes a refund's own ledger id from the id of the bet it
// refunds (RefundBet): '@' keeps it apart from the providers' ids.
const RefundPrefix = "refund@"

// RefundBet gives back the bet ref names, for the protocols whose refund
// undoes bets only and has no usable id of its own (Red Tiger's names the
// stake alone; TBB's example repeats the bet's id): it is booked under
// RefundPrefix and ref, whatever t.ID says — a bet is refunded once, so
// its id names its refund, and a second refund of it is a retry. A ref the
// ledger booked as anything else than a bet is NotRollbackable (the
// ledger's rollback of a win would take a payout back). A ref never booked
// is Rollback's: nothing moves and the ledger keeps it, so the late bet is
// refused.
func (c *Core) RefundBet(ctx context.Context, s Session, t Tx, ref string) (Result, error) {
	t.ID = RefundPrefix + ref
	rec, found, err := c.Record(ctx, s, ref)
	if err != nil {
		return Result{}, err
	}
	if found && rec.Kind != domain.TxBet && rec.Kind != domain.TxTombstone {
		return Result{}, Refuse(NotRollbackable, "the transaction refunded is not a bet")
	}
	return c.Rollback(ctx, s, t, ref)
}

// Record is the ledger's record of the session client's transaction id
// of the session's provider.
func (c *Core) Record(ctx context.Context, s Session, id string) (domain.TxRecord, bool, error) {
	if !c.HasRecords() {
		return domain.TxRecord{}, false, ErrNoStores
	}
	rec, found, err := c.deps.Records.TxRecord(ctx, domain.GameTxKey(s.ClientID, s.ProviderID, id))
	if err != nil {
		return domain.TxRecord{}, false, fmt.Errorf("record of transaction %s: %w", gateway.ClipValue(id), err)
	}
	return rec, found, nil
}

// HasRecords reports whether the core can read transaction records.
func (c *Core) HasRecords() bool { return c != nil && c.deps.Records != nil }
