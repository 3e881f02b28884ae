package domain

import (
	"fmt"
	"time"
)

// Env is what a decision needs from outside: the time and the id of the
// event it may produce. Passing them in keeps decisions pure.
type Env struct {
	Now     time.Time
	EventID string
	Meta    Metadata
}

// GameTx identifies a provider's wallet call: whose money, which game.
// ExternalTxID is the provider's id of the call, its idempotency key; it is
// spelled the same from the HTTP handler to the event (EventData) and the
// read model, whatever the wire calls it ("transaction_id").
type GameTx struct {
	Client, Player, Provider, Game, Round, Session, ExternalTxID string
	Currency                                                     Currency
	RoundClosed, Promo                                           bool
	// Campaign and Reward name a free bet's campaign and reward (the
	// provider's ids); only a promo bet or win carries them.
	Campaign, Reward string
	// Jackpot is the part of a win's amount a jackpot paid (zero: none).
	// Only a win carries one; it is booked as jackpot money, apart from
	// game and promo wins.
	Jackpot Money
	// MaxBalance, when positive, is the largest balance in minor units the
	// caller's wallet protocol can say: a win or a bet's refund that would
	// take the player past it is ErrBalanceLimit, and nothing moves. It is
	// not part of what a retry must repeat.
	MaxBalance int64
	// Reported, for a seamless client, is its own wallet's answer that
	// decided the call (the ledger records it: mirrored); nil for a
	// ledger client. Not part of what a retry must repeat.
	Reported *Reported
}

// creditedWithin is credited for a game call: the balance after must stay
// within g.MaxBalance.
func (g GameTx) creditedWithin(r Reader, id AccountID, m Money) (int64, error) {
	after, err := credited(r, id, m)
	if err == nil && g.MaxBalance > 0 && after > g.MaxBalance {
		return 0, fmt.Errorf("balance of %s would be %s, at most %s: %w", id, FromMinor(after, g.Currency),
			FromMinor(g.MaxBalance, g.Currency), ErrBalanceLimit)
	}
	return after, err
}

func (g GameTx) validate() error {
	for _, f := range []struct{ name, v string }{
		{"client_id", g.Client}, {"player_id", g.Player}, {"provider", g.Provider}, {"transaction_id", g.ExternalTxID},
	} {
		if err := ValidateID(f.name, f.v); err != nil {
			return err
		}
	}
	for _, f := range []struct{ name, v string }{{"game_id", g.Game}, {"round_id", g.Round}, {"session_id", g.Session}} {
		if f.v != "" {
			if err := ValidateID(f.name, f.v); err != nil {
				return err
			}
		}
	}
	if g.Currency.IsZero() {
		return ErrUnknownCurrency
	}
	for _, f := range []struct{ name, v string }{{"campaign_id", g.Campaign}, {"reward_id", g.Reward}} {
		if f.v == "" {
			continue
		}
		if err := ValidateID(f.name, f.v); err != nil {
			return err
		}
		if !g.Promo {
			return fmt.Errorf("%s names a free bet: only a promo transaction carries one: %w", f.name, ErrInvalidArgument)
		}
	}
	return nil
}

// checkJackpot refuses a jackpot part on anything but a win, and one that
// is negative or larger than the win it is part of.
func (g GameTx) checkJackpot(win bool, amount Money) error {
	if g.Jackpot.IsZero() {
		return nil
	}
	switch {
	case !win:
		return fmt.Errorf("jackpot %s: only a win carries a jackpot part: %w", g.Jackpot, ErrInvalidArgument)
	case g.Jackpot.cur != g.Currency:
		return fmt.Errorf("jackpot in %s for a %s wallet: %w", g.Jackpot.cur, g.Currency, ErrCurrencyMismatch)
	case g.Jackpot.minor < 0 || g.Jackpot.minor > amount.minor:
		return fmt.Errorf("jackpot %s must be between 0 and the win %s: %w", g.Jackpot, amount, ErrInvalidAmount)
	}
	return nil
}

func (g GameTx) data(amount Money, balanceAfter int64) EventData {
	return EventData{
		ClientID: g.Client, PlayerID: g.Player, Provider: g.Provider, GameID: g.Game, RoundID: g.Round,
		SessionID: g.Session, ExternalTxID: g.ExternalTxID, Currency: g.Currency.code, Amount: amount.String(),
		BalanceAfter: FormatMinor(balanceAfter, g.Currency.Exponent()), RoundClosed: g.RoundClosed, Promo: g.Promo,
		CampaignID: g.Campaign, RewardID: g.Reward,
	}
}

func newEvent(t EventType, stream AccountID, env Env, d EventData) Event {
	return Event{ID: env.EventID, Type: t, StreamID: stream, OccurredAt: env.Now.UTC(), Data: d, Meta: env.Meta}
}

// move returns the two postings that move amount from one account to another.
func move(from, to AccountID, amount Money) []Posting {
	return []Posting{{Account: from, Amount: amount.Neg().String()}, {Account: to, Amount: amount.String()}}
}

func checkAmount(m Money, c Currency, allowZero bool) error {
	if m.cur != c {
		return fmt.Errorf("amount in %s for a %s wallet: %w", m.cur, c, ErrCurrencyMismatch)
	}
	if m.minor < 0 || (m.minor == 0 && !allowZero) {
		return fmt.Errorf("amount %s must be greater than zero: %w", m, ErrInvalidAmount)
	}
	return nil
}

func debitable(r Reader, id AccountID, m Money) (int64, error) {
	bal := r.Account(id).Balance
	if bal < m.minor {
		return 0, fmt.Errorf("%s has %s, needs %s: %w", id, FormatMinor(bal, m.cur.Exponent()), m, ErrInsufficientFunds)
	}
	return bal - m.minor, nil
}

func credited(r Reader, id AccountID, m Money) (int64, error) {
	b, ok := addInt64(r.Account(id).Balance, m.minor)
	if !ok {
		return 0, fmt.Errorf("balance of %s: %w", id, ErrAmountOverflow)
	}
	return b, nil
}

// DecideBet debits a player's wallet for a bet. A bet of zero is allowed
// only as a promo (free spin) bet. A bet whose id was rolled back before it
// arrived is refused.
func DecideBet(r Reader, g GameTx, amount Money, env Env) (Change, error) {
	if g.Reported != nil {
		return mirrored(r, g, func(r Reader, g GameTx) (Change, error) { return DecideBet(r, g, amount, env) })
	}
	if err := g.validate(); err != nil {
		return Change{}, err
	}
	if err := checkAmount(amount, g.Currency, g.Promo); err != nil {
		return Change{}, err
	}
	if err := g.checkJackpot(false, amount); err != nil {
		return Change{}, err
	}
	key := GameTxKey(g.Client, g.Provider, g.ExternalTxID)
	if err := unusedID(r, key, "bet", g.ExternalTxID); err != nil {
		return Change{}, err
	}
	g, reward, spent, err := spendReward(r, g, env.Now)
	if err != nil {
		return Change{}, err
	}
	player := PlayerWallet(g.Client, g.Player, g.Currency)
	after, err := debitable(r, player, amount)
	if err != nil {
		return Change{}, err
	}
	d := g.data(amount, after)
	d.Postings = move(player, HouseAccount(g.Client, g.Provider, g.Currency), amount)
	recs := []TxRecord{{Key: key, Kind: TxBet, Account: player, PlayerID: g.Player, Currency: g.Currency.code,
		Amount: amount.minor, RoundID: g.Round, EventID: env.EventID}}
	if spent {
		recs[0].Reward = reward.Reward
	}
	if g.Round != "" {
		round := roundRecord(r, g, env.Now)
		round.OpenBets++
		round.Closed = round.Closed || g.RoundClosed
		if spent {
			round.Campaign, round.Reward = reward.Campaign, reward.Reward
		}
		recs = append(recs, round)
	}
	if spent {
		recs = append(recs, reward)
	}
	return Change{Event: newEvent(EventBetPlaced, player, env, d), Records: recs}, nil
}

// unusedID refuses a transaction id the ledger already holds: a tombstone
// (rolled back before it arrived) or, as a defence in depth behind the
// command layer's replay check, an id already booked.
func unusedID(r Reader, key, what, id string) error {
	rec, ok := r.Record(key)
	switch {
	case !ok:
		return nil
	case rec.Kind == TxTombstone:
		return fmt.Errorf("%s %s: %w", what, id, ErrRolledBackEarlier)
	}
	return fmt.Errorf("%s %s: id already used by a %s: %w", what, id, rec.Kind, ErrDuplicateTransaction)
}

// roundRecord is the round's record, or a new one opened now: its
// CreatedAt is when the round opened (DecideRoundClose measures from it).
func roundRecord(r Reader, g GameTx, now time.Time) TxRecord {
	key := RoundKey(g.Client, g.Provider, g.Round)
	if rec, ok := r.Record(key); ok {
		return rec
	}
	return TxRecord{Key: key, Kind: TxRound, Account: PlayerWallet(g.Client, g.Player, g.Currency),
		PlayerID: g.Player, Currency: g.Currency.code, RoundID: g.Round, CreatedAt: now.UTC()}
}

// DecideWin credits a player's wallet. betRef, when given, names the bet the
// win settles; a win on a rolled-back bet (named, or the only bets of its
// round) is refused. A zero win closes a lost round. Wins are accepted after
// the game session expired.
//
// The win settles the bet it names, or without a name every bet of its
// round: until the win is reversed, those bets cannot be rolled back
// (DecideRollback), or the player would keep the win and get the stake back.
func DecideWin(r Reader, g GameTx, amount Money, betRef string, env Env) (Change, error) {
	if g.Reported != nil {
		return mirrored(r, g, func(r Reader, g GameTx) (Change, error) { return DecideWin(r, g, amount, betRef, env) })
	}
	if err := g.validate(); err != nil {
		return Change{}, err
	}
	if err := checkAmount(amount, g.Currency, true); err != nil {
		return Change{}, err
	}
	if err := g.checkJackpot(true, amount); err != nil {
		return Change{}, err
	}
	key := GameTxKey(g.Client, g.Provider, g.ExternalTxID)
	if err := unusedID(r, key, "win", g.ExternalTxID); err != nil {
		return Change{}, err
	}
	var bet TxRecord
	if betRef != "" {
		var ok bool
		bet, ok = r.Record(GameTxKey(g.Client, g.Provider, betRef))
		switch {
		case !ok:
			return Change{}, fmt.Errorf("bet %s: %w", betRef, ErrTransactionUnknown)
		case bet.Kind == TxTombstone || bet.RolledBack:
			return Change{}, fmt.Errorf("win on bet %s: %w", betRef, ErrBetRolledBack)
		case bet.Kind != TxBet:
			return Change{}, fmt.Errorf("%s %s is not a bet: %w", bet.Kind, betRef, ErrInvalidArgument)
		case bet.PlayerID != g.Player:
			return Change{}, fmt.Errorf("bet %s: %w", betRef, ErrPlayerMismatch)
		case bet.Currency != g.Currency.code:
			return Change{}, fmt.Errorf("bet %s in %s: %w", betRef, bet.Currency, ErrCurrencyMismatch)
		}
	}
	player := PlayerWallet(g.Client, g.Player, g.Currency)
	own := TxRecord{Key: key, Kind: TxWin, Account: player, PlayerID: g.Player, Currency: g.Currency.code,
		Amount: amount.minor, RoundID: g.Round, EventID: env.EventID}
	recs := []TxRecord{own}
	if g.Round != "" {
		round, ok := r.Record(RoundKey(g.Client, g.Provider, g.Round))
		if ok && round.OpenBets == 0 && round.RolledBets > 0 {
			return Change{}, fmt.Errorf("win in round %s: %w", g.Round, ErrBetRolledBack)
		}
		if !ok {
			round = roundRecord(r, g, env.Now)
		}
		g = freeRound(g, round)
		round.Closed = round.Closed || g.RoundClosed
		if betRef == "" {
			round.Wins++
			recs[0].Settles = round.Key
		}
		recs = append(recs, round)
	}
	if betRef != "" {
		bet.Wins++
		recs[0].Settles = bet.Key
		recs = append(recs, bet)
	}
	after, err := g.creditedWithin(r, player, amount)
	if err != nil {
		return Change{}, err
	}
	d := g.data(amount, after)
	d.ReferenceTx = betRef
	if !g.Jackpot.IsZero() {
		d.Jackpot = g.Jackpot.String()
	}
	d.Postings = move(HouseAccount(g.Client, g.Provider, g.Currency), player, amount)
	return Change{Event: newEvent(EventWinCredited, player, env, d), Records: recs}, nil
}

// DecideRollback undoes the provider transaction ref: a bet is refunded, a
// win is reversed (if the wallet still holds it). Each transaction is rolled
// back at most once. A rollback of a transaction the ledger has never seen
// moves no money but leaves a tombstone, so the late original is refused.
// Rollbacks are accepted after the game session expired.
func DecideRollback(r Reader, g GameTx, ref string, env Env) (Change, error) {
	if g.Reported != nil {
		return mirrored(r, g, func(r Reader, g GameTx) (Change, error) { return DecideRollback(r, g, ref, env) })
	}
	if err := g.validate(); err != nil {
		return Change{}, err
	}
	if err := ValidateID("reference_transaction_id", ref); err != nil {
		return Change{}, err
	}
	// A rollback naming itself would write its own record and a tombstone
	// under one key, and its retry would then fail instead of replaying.
	if ref == g.ExternalTxID {
		return Change{}, fmt.Errorf("rollback %s refers to itself: %w", ref, ErrInvalidArgument)
	}
	if err := g.checkJackpot(false, Zero(g.Currency)); err != nil {
		return Change{}, err
	}
	if g.Campaign != "" || g.Reward != "" {
		return Change{}, fmt.Errorf("rollback %s: a rollback carries no free-bet ids (it undoes what was booked): %w",
			g.ExternalTxID, ErrInvalidArgument)
	}
	// A rollback whose own id was rolled back before it arrived is refused
	// like a late bet or win: the provider was told it would not count.
	if err := unusedID(r, GameTxKey(g.Client, g.Provider, g.ExternalTxID), "rollback", g.ExternalTxID); err != nil {
		return Change{}, err
	}
	player := PlayerWallet(g.Client, g.Player, g.Currency)
	house := HouseAccount(g.Client, g.Provider, g.Currency)
	own := TxRecord{Key: GameTxKey(g.Client, g.Provider, g.ExternalTxID), Kind: TxRollback, Account: player,
		PlayerID: g.Player, Currency: g.Currency.code, RoundID: g.Round, EventID: env.EventID}
	refKey := GameTxKey(g.Client, g.Provider, ref)
	orig, ok := r.Record(refKey)
	if !ok {
		d := g.data(Zero(g.Currency), r.Account(player).Balance)
		d.ReferenceTx = ref
		d.Postings = []Posting{}
		tomb := TxRecord{Key: refKey, Kind: TxTombstone, Account: player, PlayerID: g.Player,
			Currency: g.Currency.code, RoundID: g.Round, EventID: env.EventID}
		return Change{Event: newEvent(EventRollbackRecorded, player, env, d), Records: []TxRecord{own, tomb}}, nil
	}
	switch {
	case orig.Kind == TxTombstone || orig.RolledBack:
		return Change{}, fmt.Errorf("rollback of %s: %w", ref, ErrAlreadyRolledBack)
	case orig.PlayerID != g.Player:
		return Change{}, fmt.Errorf("rollback of %s: %w", ref, ErrPlayerMismatch)
	case orig.Currency != g.Currency.code:
		return Change{}, fmt.Errorf("rollback of %s in %s: %w", ref, orig.Currency, ErrCurrencyMismatch)
	case orig.Kind == TxBet:
		if err := unsettled(r, g, orig, ref); err != nil {
			return Change{}, err
		}
	}
	amount := FromMinor(orig.Amount, g.Currency)
	var (
		typ   EventType
		after int64
		err   error
		post  []Posting
	)
	switch orig.Kind {
	case TxBet:
		typ, post = EventBetRolledBack, move(house, player, amount)
		after, err = g.creditedWithin(r, player, amount)
	case TxWin:
		typ, post = EventWinReversed, move(player, house, amount)
		after, err = debitable(r, player, amount)
	default:
		return Change{}, fmt.Errorf("rollback of %s %s: %w", orig.Kind, ref, ErrNotRollbackable)
	}
	if err != nil {
		return Change{}, err
	}
	orig.RolledBack = true
	own.Amount = amount.minor
	recs := append([]TxRecord{own, orig}, undoneRecords(r, g, orig)...)
	d := g.data(amount, after)
	d.ReferenceTx = ref
	if orig.RoundID != "" {
		d.RoundID = orig.RoundID
	}
	d.Postings = post
	return Change{Event: newEvent(typ, player, env, d), Records: recs}, nil
}

// undoneRecords are the records a rollback of orig changes besides its own
// and orig's: the round of a bet (one bet fewer standing), the reward a free
// bet spent (its free bet back), what a win settled (no longer settled).
func undoneRecords(r Reader, g GameTx, orig TxRecord) []TxRecord {
	var recs []TxRecord
	if orig.Kind == TxBet && orig.RoundID != "" {
		if round, ok := r.Record(RoundKey(g.Client, g.Provider, orig.RoundID)); ok {
			round.OpenBets--
			round.RolledBets++
			round.Closed = round.Closed || g.RoundClosed
			recs = append(recs, round)
		}
	}
	// A free bet rolled back was not played: its reward gets it back (the
	// provider may play it again, under a new id).
	if orig.Kind == TxBet && orig.Reward != "" {
		if rw, ok := r.Record(RewardKey(g.Client, orig.Reward)); ok && rw.Kind == TxReward && rw.Used > 0 {
			rw.Used--
			recs = append(recs, rw)
		}
	}
	// A reversed win no longer settles its bet (or round): the provider
	// may now roll that back.
	if orig.Kind == TxWin && orig.Settles != "" {
		if s, ok := r.Record(orig.Settles); ok && s.Wins > 0 {
			s.Wins--
			recs = append(recs, s)
		}
	}
	return recs
}

// unsettled refuses the rollback of a bet a win has settled: a win naming
// it, or a win naming no bet in its round, that was not reversed. Refunding
// it would leave the player the win and the stake; the provider reverses
// the win first (docs/provider-wallet.md).
func unsettled(r Reader, g GameTx, bet TxRecord, ref string) error {
	if bet.Wins > 0 {
		return fmt.Errorf("rollback of bet %s: a win names it; reverse the win first: %w", ref, ErrBetSettled)
	}
	if bet.RoundID == "" {
		return nil
	}
	if round, ok := r.Record(RoundKey(g.Client, g.Provider, bet.RoundID)); ok && round.Wins > 0 {
		return fmt.Errorf("rollback of bet %s: a win of round %s settled it; reverse the win first: %w",
			ref, bet.RoundID, ErrBetSettled)
	}
	return nil
}

// ClientTx identifies an operator's own money movement. Player is empty
// for the client's own wallet; ExternalTxID is the client's id of the
// call, its idempotency key. Reason is the caller's one-line note, stored
// in the event: CheckText with MaxReasonLength.
type ClientTx struct {
	Client, Player, ExternalTxID, Reason string
	Currency                             Currency
}

func (c ClientTx) validate() error {
	if err := ValidateID("client_id", c.Client); err != nil {
		return err
	}
	if err := ValidateID("transaction_id", c.ExternalTxID); err != nil {
		return err
	}
	if c.Player != "" {
		if err := ValidateID("player_id", c.Player); err != nil {
			return err
		}
	}
	if c.Currency.IsZero() {
		return ErrUnknownCurrency
	}
	return CheckText("reason", c.Reason, MaxReasonLength)
}

// wallet is the player's wallet when a player is named, else the client's.
func (c ClientTx) wallet() AccountID {
	if c.Player != "" {
		return PlayerWallet(c.Client, c.Player, c.Currency)
	}
	return ClientWallet(c.Client, c.Currency)
}

func (c ClientTx) change(r Reader, kind TxKind, typ EventType, amount Money, after int64, post []Posting, dir string, env Env) Change {
	w := c.wallet()
	d := EventData{ClientID: c.Client, PlayerID: c.Player, ExternalTxID: c.ExternalTxID, Currency: c.Currency.code,
		Amount: amount.String(), BalanceAfter: FormatMinor(after, c.Currency.Exponent()), Direction: dir,
		Reason: c.Reason, Postings: post}
	rec := TxRecord{Key: ClientTxKey(c.Client, c.ExternalTxID), Kind: kind, Account: w, PlayerID: c.Player,
		Currency: c.Currency.code, Amount: amount.minor, EventID: env.EventID}
	return Change{Event: newEvent(typ, w, env, d), Records: []TxRecord{rec}}
}

// DecideDeposit brings money into a wallet (the client's, or a player's)
// from outside the ledger.
func DecideDeposit(r Reader, c ClientTx, amount Money, env Env) (Change, error) {
	if err := c.validate(); err != nil {
		return Change{}, err
	}
	if err := checkAmount(amount, c.Currency, false); err != nil {
		return Change{}, err
	}
	after, err := credited(r, c.wallet(), amount)
	if err != nil {
		return Change{}, err
	}
	post := move(ExternalAccount(c.Client, c.Currency), c.wallet(), amount)
	return c.change(r, TxDeposit, EventDeposited, amount, after, post, "", env), nil
}

// DecideWithdrawal takes money out of a wallet to outside the ledger.
func DecideWithdrawal(r Reader, c ClientTx, amount Money, env Env) (Change, error) {
	if err := c.validate(); err != nil {
		return Change{}, err
	}
	if err := checkAmount(amount, c.Currency, false); err != nil {
		return Change{}, err
	}
	after, err := debitable(r, c.wallet(), amount)
	if err != nil {
		return Change{}, err
	}
	post := move(c.wallet(), ExternalAccount(c.Client, c.Currency), amount)
	return c.change(r, TxWithdrawal, EventWithdrawn, amount, after, post, "", env), nil
}

// Transfer directions between a client's wallet and a player's game wallet.
const (
	ToPlayer   = "to_player"
	FromPlayer = "from_player"
)

// DecideTransfer moves money between the client's wallet and a player's
// game wallet; the event lives on the player's stream.
func DecideTransfer(r Reader, c ClientTx, amount Money, direction string, env Env) (Change, error) {
	if err := c.validate(); err != nil {
		return Change{}, err
	}
	if c.Player == "" {
		return Change{}, fmt.Errorf("player_id is required for a transfer: %w", ErrInvalidArgument)
	}
	if err := checkAmount(amount, c.Currency, false); err != nil {
		return Change{}, err
	}
	client, player := ClientWallet(c.Client, c.Currency), c.wallet()
	var (
		after int64
		err   error
		post  []Posting
	)
	switch direction {
	case ToPlayer:
		if _, err = debitable(r, client, amount); err != nil {
			return Change{}, err
		}
		after, err = credited(r, player, amount)
		post = move(client, player, amount)
	case FromPlayer:
		after, err = debitable(r, player, amount)
		post = move(player, client, amount)
	default:
		return Change{}, fmt.Errorf("direction %q is not %s or %s: %w", direction, ToPlayer, FromPlayer, ErrInvalidArgument)
	}
	if err != nil {
		return Change{}, err
	}
	return c.change(r, TxTransfer, EventTransferred, amount, after, post, direction, env), nil
}

// DecideAdjustment applies a signed correction to a wallet against the
// client's external account. A wallet still cannot go below zero.
func DecideAdjustment(r Reader, c ClientTx, delta Money, env Env) (Change, error) {
	if err := c.validate(); err != nil {
		return Change{}, err
	}
	if delta.cur != c.Currency {
		return Change{}, ErrCurrencyMismatch
	}
	if delta.minor == 0 {
		return Change{}, fmt.Errorf("an adjustment of zero moves nothing: %w", ErrInvalidAmount)
	}
	after, err := credited(r, c.wallet(), delta)
	if err != nil {
		return Change{}, err
	}
	if after < 0 {
		return Change{}, fmt.Errorf("%s would go to %s: %w", c.wallet(), FormatMinor(after, c.Currency.Exponent()), ErrInsufficientFunds)
	}
	post := move(ExternalAccount(c.Client, c.Currency), c.wallet(), delta)
	return c.change(r, TxAdjustment, EventAdjusted, delta, after, post, "", env), nil
}

// DecideBalanceSync sets a player's game wallet to the balance the client
// reported at a signed launch. The difference is posted against the
// client's external account, so every balance is explained by the ledger.
func DecideBalanceSync(r Reader, c ClientTx, target Money, g GameTx, env Env) (Change, error) {
	if err := c.validate(); err != nil {
		return Change{}, err
	}
	if c.Player == "" {
		return Change{}, fmt.Errorf("player_id is required: %w", ErrInvalidArgument)
	}
	for _, f := range []struct{ name, v string }{{"provider", g.Provider}, {"game_id", g.Game}, {"session_id", g.Session}} {
		if f.v != "" {
			if err := ValidateID(f.name, f.v); err != nil {
				return Change{}, err
			}
		}
	}
	if err := checkAmount(target, c.Currency, true); err != nil {
		return Change{}, err
	}
	cur := r.Account(c.wallet()).Balance
	delta, ok := addInt64(target.minor, -cur)
	if !ok {
		return Change{}, ErrAmountOverflow
	}
	post := move(ExternalAccount(c.Client, c.Currency), c.wallet(), FromMinor(delta, c.Currency))
	ch := c.change(r, TxSync, EventBalanceSynced, target, target.minor, post, "", env)
	ch.Event.Data.GameID, ch.Event.Data.SessionID, ch.Event.Data.Provider = g.Game, g.Session, g.Provider
	return ch, nil
}

// Launch describes a game session opened for a player. ExternalTxID makes
// recording it idempotent.
type Launch struct {
	Client, Player, Provider, Game, Session, ExternalTxID string
	Currency                                              Currency
	ExpiresAt                                             time.Time
}

// DecideLaunch records a game launch. It moves no money.
func DecideLaunch(r Reader, l Launch, env Env) (Change, error) {
	for _, f := range []struct{ name, v string }{
		{"client_id", l.Client}, {"player_id", l.Player}, {"provider", l.Provider}, {"game_id", l.Game},
		{"session_id", l.Session}, {"transaction_id", l.ExternalTxID},
	} {
		if err := ValidateID(f.name, f.v); err != nil {
			return Change{}, err
		}
	}
	if l.Currency.IsZero() {
		return Change{}, ErrUnknownCurrency
	}
	w := PlayerWallet(l.Client, l.Player, l.Currency)
	d := EventData{ClientID: l.Client, PlayerID: l.Player, Provider: l.Provider, GameID: l.Game, SessionID: l.Session,
		ExternalTxID: l.ExternalTxID, Currency: l.Currency.code, Amount: Zero(l.Currency).String(),
		BalanceAfter: FormatMinor(r.Account(w).Balance, l.Currency.Exponent()),
		ExpiresAt:    l.ExpiresAt.UTC().Format(time.RFC3339), Postings: []Posting{}}
	rec := TxRecord{Key: ClientTxKey(l.Client, l.ExternalTxID), Kind: TxLaunch, Account: w, PlayerID: l.Player,
		Currency: l.Currency.code, EventID: env.EventID}
	return Change{Event: newEvent(EventGameLaunched, w, env, d), Records: []TxRecord{rec}}, nil
}
