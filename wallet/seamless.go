package wallet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// The seamless path (docs/seamless-wallet.md): for a client in seamless
// mode, a provider's bet, win or rollback is sent to the client's own
// wallet first and its answer decides the call; the ledger then records
// what was decided (domain.Reported: the operator's id and balance), so
// every read model, report and verify works as for a ledger client. What
// the ledger can refuse without asking (a retry, an unknown bet, a reused
// id, an ended session) is refused — or replayed — before anything is
// sent. An outcome left unknown (a timeout, a 5xx) is decided once: an
// unknown debit is voided (a follow-up cancels it at the operator, and the
// bet's id is refused from then on), an unknown credit or cancel is re-sent
// under the same id by a follow-up until the operator acknowledges it, and
// booked then.

// Operators finds a client's own wallet.
type Operators interface {
	// Operator is the client's own wallet, or nil for a ledger client.
	Operator(ctx context.Context, clientID string) (OperatorWallet, error)
}

// FollowUps is the durable queue of unknown outcomes (the store's side;
// RunFollowUps works it).
type FollowUps interface {
	// Enqueue adds f, once per client, action and movement id: a second
	// enqueue of the same is a no-op.
	Enqueue(ctx context.Context, f FollowUp) error
	// Voided reports whether the client's debit id was voided (its outcome
	// was unknown and a cancel follow-up exists): the bet is refused from
	// then on.
	Voided(ctx context.Context, clientID, moveID string) (bool, error)
}

// Follow-up actions.
const (
	// ActionCancel cancels, at the operator, a debit whose outcome is
	// unknown (the ledger never booked it).
	ActionCancel = "cancel"
	// ActionResend re-sends a credit, cancel or reverse under its own id
	// until the operator acknowledges it, then books it.
	ActionResend = "resend"
)

// FollowUp is one unknown outcome to settle with the operator.
type FollowUp struct {
	ID       int64
	ClientID string
	Action   string
	Call     FollowUpCall
	// Attempts, NextAt, LastError, CreatedAt: the queue's bookkeeping.
	Attempts  int
	NextAt    time.Time
	LastError string
	CreatedAt time.Time
}

// FollowUpCall is the call a follow-up settles: enough to send its
// movement again and to book it.
type FollowUpCall struct {
	Session string        `json:"session_id"`
	Kind    domain.TxKind `json:"kind"`
	Tx      FollowUpTx    `json:"tx"`
	Amount  string        `json:"amount"`
	Ref     string        `json:"ref,omitempty"`
	Move    string        `json:"move"`
	MoveID  string        `json:"move_id"`
	MoveRef string        `json:"move_ref,omitempty"`
}

// FollowUpTx is Tx as the queue stores it.
type FollowUpTx struct {
	ID          string `json:"id"`
	Game        string `json:"game,omitempty"`
	Round       string `json:"round,omitempty"`
	RoundClosed bool   `json:"round_closed,omitempty"`
	Promo       bool   `json:"promo,omitempty"`
	Campaign    string `json:"campaign,omitempty"`
	Reward      string `json:"reward,omitempty"`
	Jackpot     string `json:"jackpot,omitempty"`
}

// operator is the session client's own wallet, nil for a ledger client.
func (c *Core) operator(ctx context.Context, s Session) (OperatorWallet, error) {
	if c.deps.Operators == nil {
		return nil, nil
	}
	op, err := c.deps.Operators.Operator(ctx, s.ClientID)
	switch {
	case err != nil:
		return nil, fmt.Errorf("wallet of client %s: %w", s.ClientID, err)
	case op != nil && c.deps.FollowUps == nil:
		return nil, fmt.Errorf("client %s is seamless, and the server has no follow-up queue: %w", s.ClientID, ErrNoStores)
	}
	return op, nil
}

// player is whom a call to the operator is about.
func (s Session) player(correlation string) OperatorPlayer {
	return OperatorPlayer{Player: s.PlayerID, Token: s.OperatorToken, Provider: s.ProviderID, Currency: s.Cur,
		Game: s.GameID, CorrelationID: correlation}
}

func (s Session) move(kind MoveKind, t Tx, amount domain.Money, ref string, now time.Time) OperatorMove {
	m := OperatorMove{OperatorPlayer: s.player(t.ID), Kind: kind, ID: t.ID, Ref: ref, Game: t.Game, Round: t.Round,
		RoundClosed: t.RoundClosed, Amount: amount, Promo: t.Promo, Jackpot: t.Jackpot, At: now.UTC()}
	if m.Game == "" {
		m.Game = s.GameID
	}
	return m
}

// operatorErr is the operator's refusal in the core's words: the rule of
// money's own error where there is one (so every dialect answers it as
// for a ledger client), else a Refusal of its verdict.
func operatorErr(err error) error {
	var r *OperatorRefusal
	if !errors.As(err, &r) {
		return err
	}
	for _, m := range ledgerVerdicts {
		if m.verdict == r.Verdict {
			return fmt.Errorf("%w: %w", err, m.err)
		}
	}
	return &Refusal{Verdict: r.Verdict, Reason: "the client's wallet refused: " + r.Code, Err: err}
}

// unknown reports whether err leaves the operator's decision unknown.
func unknown(err error) bool {
	var r *OperatorRefusal
	return err != nil && !errors.As(err, &r)
}

// now is the core's clock.
func (c *Core) now() time.Time {
	if c.deps.Clock != nil {
		return c.deps.Clock.Now()
	}
	return time.Now()
}

// booked reports whether the ledger holds id already (a retry, a reused
// id, a tombstone): the ledger then answers without the operator.
func (c *Core) booked(ctx context.Context, s Session, id string) (bool, error) {
	_, found, err := c.Record(ctx, s, id)
	return found, err
}

// seamlessBet is Bet for a seamless client.
func (c *Core) seamlessBet(ctx context.Context, op OperatorWallet, s Session, t Tx, amount domain.Money,
	terms commands.SessionTerms) (Result, error) {
	g := s.gameTx(t)
	// The two reads go out at once: one round trip of waiting, not two.
	type answer struct {
		voided bool
		err    error
	}
	vc := make(chan answer, 1)
	go func() {
		v, err := c.deps.FollowUps.Voided(ctx, s.ClientID, t.ID)
		vc <- answer{v, err}
	}()
	found, err := c.booked(ctx, s, t.ID)
	va := <-vc
	if err != nil || found {
		if err != nil {
			return Result{}, err
		}
		return c.deps.Ledger.PlaceBetInSession(ctx, g, amount, terms)
	}
	voided, err := va.voided, va.err
	switch {
	case err != nil:
		return Result{}, fmt.Errorf("is bet %s voided: %w", t.ID, err)
	case voided:
		return Result{}, fmt.Errorf("bet %s, voided when its debit's outcome was unknown: %w", t.ID, domain.ErrRolledBackEarlier)
	case terms.Superseded:
		return Result{}, fmt.Errorf("bet %s in session %s, superseded by a newer launch: %w", t.ID, s.ID, commands.ErrSessionExpired)
	case !c.now().Before(terms.ExpiresAt):
		return Result{}, fmt.Errorf("bet %s after the session's end: %w", t.ID, commands.ErrSessionExpired)
	}
	if err := checkAmount(amount, s.Cur, t.Promo); err != nil {
		return Result{}, err
	}
	m := s.move(Debit, t, amount, "", c.now())
	ans, err := op.Move(ctx, m)
	if unknown(err) {
		return Result{}, c.voidDebit(ctx, s, t, amount, m, err)
	} else if err != nil {
		return Result{}, operatorErr(err)
	}
	g.Reported = &domain.Reported{TxID: ans.TxID, Balance: ans.Balance}
	res, err := c.deps.Ledger.PlaceBetInSession(ctx, g, amount, terms)
	if err != nil {
		// The operator took the money and the ledger refuses the bet (its
		// session ended meanwhile, a concurrent call took the id): give
		// it back there.
		if ferr := c.voidDebit(ctx, s, t, amount, m, err); !errors.Is(ferr, err) {
			return Result{}, ferr
		}
	}
	return res, err
}

// voidDebit decides a debit whose outcome is unknown (or which the ledger
// refused after the operator took it): a follow-up cancels it at the
// operator, and the bet's id is refused from then on. It answers cause
// wrapped as a fault (the provider is told the bet failed), or the
// enqueue's own error.
func (c *Core) voidDebit(ctx context.Context, s Session, t Tx, amount domain.Money, m OperatorMove, cause error) error {
	f := FollowUp{ClientID: s.ClientID, Action: ActionCancel, Call: followUpCall(s, domain.TxBet, t, amount, "", m),
		NextAt: c.now().Add(c.grace())}
	if err := c.deps.FollowUps.Enqueue(ctx, f); err != nil {
		return fmt.Errorf("bet %s: %w; and its cancel could not be queued: %w", t.ID, cause, err)
	}
	if unknown(cause) {
		return fmt.Errorf("bet %s voided: %w", t.ID, cause)
	}
	return cause
}

// FollowUpGrace is how long a follow-up waits before its first attempt
// unless Deps.FollowUpGrace says: longer than an operator call may take,
// so a request still in flight has landed before its cancel is sent.
const FollowUpGrace = 30 * time.Second

func (c *Core) grace() time.Duration {
	if c.deps.FollowUpGrace > 0 {
		return c.deps.FollowUpGrace
	}
	return FollowUpGrace
}

func followUpCall(s Session, kind domain.TxKind, t Tx, amount domain.Money, ref string, m OperatorMove) FollowUpCall {
	ft := FollowUpTx{ID: t.ID, Game: t.Game, Round: t.Round, RoundClosed: t.RoundClosed, Promo: t.Promo,
		Campaign: t.Campaign, Reward: t.Reward}
	if !t.Jackpot.IsZero() {
		ft.Jackpot = t.Jackpot.String()
	}
	return FollowUpCall{Session: s.ID, Kind: kind, Tx: ft, Amount: amount.String(), Ref: ref, Move: m.Kind.String(),
		MoveID: m.ID, MoveRef: m.Ref}
}

// seamlessWin is Win for a seamless client.
func (c *Core) seamlessWin(ctx context.Context, op OperatorWallet, s Session, t Tx, amount domain.Money, ref string) (Result, error) {
	g := s.gameTx(t)
	// The win's own record, its bet's and its round's, in one read.
	rs, err := c.prefetch(ctx, s, []string{t.ID, ref}, t.Round)
	if err != nil {
		return Result{}, err
	}
	settle, err := rs.askFirst(ctx, s, t.ID, ref, domain.TxBet)
	if err == nil && settle && t.Round != "" {
		// A win in a round whose every bet was rolled back is refused
		// (domain.DecideWin): asked first, the operator would pay it.
		round, found, rerr := rs.roundRecord(ctx, s, t.Round)
		settle, err = !found || round.OpenBets > 0 || round.RolledBets == 0, rerr
	}
	if err != nil || !settle {
		if err != nil {
			return Result{}, err
		}
		return c.deps.Ledger.CreditWin(ctx, g, amount, ref)
	}
	if err := checkAmount(amount, s.Cur, true); err != nil {
		return Result{}, err
	}
	m := s.move(Credit, t, amount, ref, c.now())
	return c.sendAndBook(ctx, op, s, m, func(rep *domain.Reported) (Result, error) {
		g.Reported = rep
		return c.deps.Ledger.CreditWin(ctx, g, amount, ref)
	}, followUpCall(s, domain.TxWin, t, amount, ref, m))
}

// askFirst reports whether the operator is to be asked before the
// ledger books id: not when the ledger holds id already (it replays or
// refuses), nor when ref, a transaction the call names, is not one the
// ledger holds live of kind want (it refuses, or books a tombstone) —
// want zero: any kind.
func (rs recordSet) askFirst(ctx context.Context, s Session, id, ref string, want domain.TxKind) (bool, error) {
	if _, found, err := rs.Record(ctx, s, id); err != nil || found {
		return false, err
	}
	if ref == "" {
		return true, nil
	}
	rec, found, err := rs.Record(ctx, s, ref)
	switch {
	case err != nil:
		return false, err
	case !found || rec.RolledBack || rec.Kind == domain.TxTombstone || rec.PlayerID != s.PlayerID:
		return false, nil
	case want != "" && rec.Kind != want:
		return false, nil
	}
	return true, nil
}

// sendAndBook sends m to the operator and books its yes with book. An
// unknown outcome queues f, a re-send of m until acknowledged (and booked
// then), and answers a fault: the provider retries, or the follow-up
// completes it.
func (c *Core) sendAndBook(ctx context.Context, op OperatorWallet, s Session, m OperatorMove,
	book func(*domain.Reported) (Result, error), call FollowUpCall) (Result, error) {
	ans, err := op.Move(ctx, m)
	if unknown(err) {
		f := FollowUp{ClientID: s.ClientID, Action: ActionResend, Call: call, NextAt: c.now().Add(c.grace())}
		if qerr := c.deps.FollowUps.Enqueue(ctx, f); qerr != nil {
			return Result{}, fmt.Errorf("%s %s: %w; and its re-send could not be queued: %w", m.Kind, m.ID, err, qerr)
		}
		return Result{}, fmt.Errorf("%s %s, to be re-sent: %w", m.Kind, m.ID, err)
	} else if err != nil {
		return Result{}, operatorErr(err)
	}
	return book(&domain.Reported{TxID: ans.TxID, Balance: ans.Balance})
}

// seamlessRollback is Rollback for a seamless client: a live bet is
// cancelled at the operator, a win reversed (where its protocol can);
// anything else is the ledger's to answer (a rollback of a transaction
// never booked is a tombstone there, and nothing is sent).
func (c *Core) seamlessRollback(ctx context.Context, op OperatorWallet, s Session, t Tx, ref string) (Result, error) {
	g := s.gameTx(t)
	if found, err := c.booked(ctx, s, t.ID); err != nil || found || t.ID == ref {
		if err != nil {
			return Result{}, err
		}
		return c.deps.Ledger.Rollback(ctx, g, ref)
	}
	rec, found, err := c.Record(ctx, s, ref)
	switch {
	case err != nil:
		return Result{}, err
	case !found:
		// A rollback of what the ledger never booked moves nothing and is
		// kept (a tombstone); it answers, and mirrors, the operator's
		// balance.
		bal, err := op.Balance(ctx, s.player(t.ID))
		if err != nil {
			return Result{}, operatorErr(err)
		}
		g.Reported = &domain.Reported{Balance: bal}
		return c.deps.Ledger.Rollback(ctx, g, ref)
	case rec.RolledBack || rec.PlayerID != s.PlayerID || rec.Wins > 0 || (rec.Kind != domain.TxBet && rec.Kind != domain.TxWin):
		return c.deps.Ledger.Rollback(ctx, g, ref) // the ledger's refusal
	case rec.Kind == domain.TxBet && rec.RoundID != "":
		// A bet a win of its round settled cannot be rolled back
		// (domain.DecideRollback): asked first, the operator would refund it.
		round, found, err := c.roundRecord(ctx, s, rec.RoundID)
		if err != nil {
			return Result{}, err
		}
		if found && round.Wins > 0 {
			return c.deps.Ledger.Rollback(ctx, g, ref)
		}
	}
	kind := Cancel
	if rec.Kind == domain.TxWin {
		kind = Reverse
	}
	amount := domain.FromMinor(rec.Amount, s.Cur)
	m := s.move(kind, t, amount, ref, c.now())
	m.Promo = rec.Request["promo"] == "true"
	return c.sendAndBook(ctx, op, s, m, func(rep *domain.Reported) (Result, error) {
		g.Reported = rep
		return c.deps.Ledger.Rollback(ctx, g, ref)
	}, followUpCall(s, domain.TxRollback, t, amount, ref, m))
}

// checkAmount refuses, before the operator is asked, an amount the
// ledger would refuse: another currency's, negative, or zero where only a
// promo (free) bet may be.
func checkAmount(m domain.Money, cur domain.Currency, allowZero bool) error {
	switch {
	case m.Currency() != cur:
		return fmt.Errorf("amount in %s for a %s wallet: %w", m.Currency(), cur, domain.ErrCurrencyMismatch)
	case m.IsNegative() || (m.IsZero() && !allowZero):
		return fmt.Errorf("amount %s must be greater than zero: %w", m, domain.ErrInvalidAmount)
	}
	return nil
}

// roundRecord is the ledger's record of the session provider's round.
func (c *Core) roundRecord(ctx context.Context, s Session, round string) (domain.TxRecord, bool, error) {
	if !c.HasRecords() {
		return domain.TxRecord{}, false, ErrNoStores
	}
	rec, found, err := c.deps.Records.TxRecord(ctx, domain.RoundKey(s.ClientID, s.ProviderID, round))
	if err != nil {
		return domain.TxRecord{}, false, fmt.Errorf("record of round %s: %w", round, err)
	}
	return rec, found, nil
}

// seamlessBalance is the player's balance as the client's wallet says it.
func (c *Core) seamlessBalance(ctx context.Context, op OperatorWallet, s Session) (domain.Money, error) {
	m, err := op.Balance(ctx, s.player(""))
	if err != nil {
		return domain.Money{}, operatorErr(err)
	}
	return m, nil
}

// TxRecordsBatch is TxRecords reading several keys in one round trip.
// Records may have it: a seamless win's checks then read its own id, the
// bet it settles and its round at once (one round trip instead of three
// before the operator is asked).
type TxRecordsBatch interface {
	// TxRecords reads the records of keys; a key without one is not in
	// the map.
	TxRecords(ctx context.Context, keys []string) (map[string]domain.TxRecord, error)
}

// recordSet answers the seamless checks' questions about records from
// one batched read (prefetch), or, where the store has no batch, with a
// read each.
type recordSet struct {
	c       *Core
	batched bool
	have    map[string]domain.TxRecord
}

// prefetch reads the records of ids (the empty ones skipped) and of round
// (when not empty) in one round trip where the store can.
func (c *Core) prefetch(ctx context.Context, s Session, ids []string, round string) (recordSet, error) {
	b, ok := c.deps.Records.(TxRecordsBatch)
	if !ok {
		return recordSet{c: c}, nil
	}
	keys, named := make([]string, 0, len(ids)+1), make([]string, 0, len(ids))
	for _, id := range ids {
		if id != "" {
			keys, named = append(keys, domain.GameTxKey(s.ClientID, s.ProviderID, id)), append(named, id)
		}
	}
	if round != "" {
		keys = append(keys, domain.RoundKey(s.ClientID, s.ProviderID, round))
	}
	have, err := b.TxRecords(ctx, keys)
	if err != nil {
		return recordSet{}, fmt.Errorf("records of transactions %s: %w", gateway.ClipValue(strings.Join(named, ", ")), err)
	}
	return recordSet{c: c, batched: true, have: have}, nil
}

// Record is Core.Record of id.
func (rs recordSet) Record(ctx context.Context, s Session, id string) (domain.TxRecord, bool, error) {
	if !rs.batched {
		return rs.c.Record(ctx, s, id)
	}
	rec, found := rs.have[domain.GameTxKey(s.ClientID, s.ProviderID, id)]
	return rec, found, nil
}

// roundRecord is Core.roundRecord of round.
func (rs recordSet) roundRecord(ctx context.Context, s Session, round string) (domain.TxRecord, bool, error) {
	if !rs.batched {
		return rs.c.roundRecord(ctx, s, round)
	}
	rec, found := rs.have[domain.RoundKey(s.ClientID, s.ProviderID, round)]
	return rec, found, nil
}
