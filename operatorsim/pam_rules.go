package operatorsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/pitboss/pitboss/domain"
)

// PAM's transaction types, and the three classes the rules group them in.
const (
	pamWithdraw      = "WITHDRAW"
	pamPromoWithdraw = "PROMOWITHDRAW"
	pamDeposit       = "DEPOSIT"
	pamPromoDeposit  = "PROMODEPOSIT"
	pamCancel        = "CANCEL"
	pamPromoCancel   = "PROMOCANCEL"
)

var pamClass = map[string]string{
	pamWithdraw: "withdraw", pamPromoWithdraw: "withdraw",
	pamDeposit: "deposit", pamPromoDeposit: "deposit",
	pamCancel: "cancel", pamPromoCancel: "cancel",
}

// pamKey is a PAM transaction's idempotency key: providerTransactionId
// is unique per provider, and a cancel carries the id of the withdraw it
// cancels, so the class is part of the key.
func pamKey(provider, class, id string) string {
	return "pam\x00" + provider + "\x00" + class + "\x00" + id
}

func roundKey(player, provider, id string) string { return player + "\x00" + provider + "\x00" + id }

// maxBody bounds a request body.
const maxBody = 1 << 20

// pamTxBody is the document's Transaction, as a request carries it (promos,
// jackpots, tip and roundTransactions are accepted and not booked) and as
// a lookup answers a stored one.
type pamTxBody struct {
	Currency              string          `json:"currency"`
	Provider              string          `json:"provider"`
	TransactionType       string          `json:"transactionType"`
	CashAmount            json.RawMessage `json:"cashAmount"`
	BonusAmount           json.RawMessage `json:"bonusAmount"`
	PromoAmount           json.RawMessage `json:"promoAmount"`
	TransactionDateTime   string          `json:"transactionDateTime"`
	ProviderTransactionID string          `json:"providerTransactionId"`
	ProviderBetRef        string          `json:"providerBetRef,omitempty"`
	ProviderGameID        string          `json:"providerGameId,omitempty"`
	ProviderRoundID       string          `json:"providerRoundId,omitempty"`
	IsGameOver            bool            `json:"isGameOver"`
}

// pamTx is a checked addTransaction request.
type pamTx struct {
	pamCall
	typ, id, betRef, game, round string
	gameOver                     bool
	at                           time.Time
	amt                          Amounts
}

// errBadRequest marks a body the document's schema refuses (400).
var errBadRequest = errors.New("invalid request body")

// readPamTx reads and checks an addTransaction body: every field the
// schema requires, ids of 1 to 40 characters, the amounts exact in the
// currency. A currency other than the session's is PAM_ERR_TRANS_CURRENCY.
func readPamTx(r *http.Request, c pamCall) (pamTx, string, error) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(raw) > maxBody {
		return pamTx{}, "", fmt.Errorf("%w: unreadable or over %d bytes", errBadRequest, maxBody)
	}
	var b pamTxBody
	if err := json.Unmarshal(raw, &b); err != nil {
		return pamTx{}, "", fmt.Errorf("%w: %v", errBadRequest, err)
	}
	t := pamTx{pamCall: c, typ: b.TransactionType, id: b.ProviderTransactionID, betRef: b.ProviderBetRef,
		game: b.ProviderGameID, round: b.ProviderRoundID, gameOver: b.IsGameOver}
	if b.Currency == "" || b.Provider == "" || pamClass[b.TransactionType] == "" {
		return pamTx{}, "", fmt.Errorf("%w: currency, provider and transactionType (one of the six) are required", errBadRequest)
	}
	for _, f := range []struct{ name, v string }{{"providerTransactionId", t.id}, {"providerBetRef", t.betRef},
		{"providerGameId", t.game}, {"providerRoundId", t.round}} {
		if len(f.v) > 40 || (f.name == "providerTransactionId" && f.v == "") {
			return pamTx{}, "", fmt.Errorf("%w: %s must be 1 to 40 characters", errBadRequest, f.name)
		}
	}
	if t.at, err = time.Parse(time.RFC3339Nano, b.TransactionDateTime); err != nil {
		return pamTx{}, "", fmt.Errorf("%w: transactionDateTime is not a date-time", errBadRequest)
	}
	t.at = t.at.UTC()
	if b.Currency != c.cur.Code() {
		return pamTx{}, pamErrTransCurrency, fmt.Errorf("currency %s is not the session's %s", b.Currency, c.cur.Code())
	}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		to   *int64
	}{{"cashAmount", b.CashAmount, &t.amt.Cash}, {"bonusAmount", b.BonusAmount, &t.amt.Bonus},
		{"promoAmount", b.PromoAmount, &t.amt.Promo}} {
		if *f.to, err = parseDecimal(f.raw, c.cur); err != nil {
			return pamTx{}, "", fmt.Errorf("%w: %s %v", errBadRequest, f.name, err)
		}
	}
	if t.amt.negative() {
		return pamTx{}, pamErrNegativeStake, errors.New("an amount is negative")
	}
	return t, "", nil
}

// pamVerdict is the answer to an addTransaction: code empty for OK.
type pamVerdict struct {
	code, message string
	txID          string
	balance       Amounts
}

// pamAddTransaction applies one transaction by the document's rules.
func (s *Sim) pamAddTransaction(w http.ResponseWriter, r *http.Request, c pamCall) {
	t, code, err := readPamTx(r, c)
	if err != nil {
		if code == "" {
			pamFail(w, http.StatusBadRequest, pamErrUndefined, err.Error(), nil)
			return
		}
		s.store.mu.Lock()
		a, _ := s.store.account(c.player, c.cur.Code())
		s.store.mu.Unlock()
		bal := pamAmounts(a, c.cur)
		pamFail(w, http.StatusOK, code, err.Error(), &bal)
		return
	}
	note(r.Context(), "%s %s %s", t.typ, t.player, t.id)
	v, err := s.store.pamApply(t)
	if err != nil {
		s.log.Error("apply", "err", err)
		pamFail(w, http.StatusInternalServerError, pamErrUndefined, "the simulator could not keep the transaction", nil)
		return
	}
	bal := pamAmounts(v.balance, c.cur)
	if v.code != "" {
		pamFail(w, http.StatusOK, v.code, v.message, &bal)
		return
	}
	pamOK(w, pamResponse{TransactionResult: &pamTxResult{TransactionID: v.txID, Balance: &bal}})
}

// pamApply decides and applies t under the store's lock: an error is a
// fault (the state could not be written), a refusal is a verdict.
func (s *store) pamApply(t pamTx) (pamVerdict, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	class := pamClass[t.typ]
	if prev, ok := s.lookup(pamKey(t.provider, class, t.id)); ok {
		return s.pamResend(prev, t), nil
	}
	c := s.begin()
	var v pamVerdict
	var err error
	switch class {
	case "withdraw":
		v, err = s.pamWithdraw(c, t)
	case "deposit":
		v, err = s.pamDeposit(c, t)
	default:
		v, err = s.pamCancel(c, t)
	}
	if err == nil && v.code == "" {
		err = c.commit()
	} else {
		c.rollback()
	}
	v.balance, _ = s.account(t.player, t.cur.Code())
	return v, err
}

// refuse is a verdict with the player's balance filled in by pamApply.
func refuse(code, format string, args ...any) pamVerdict {
	return pamVerdict{code: code, message: fmt.Sprintf(format, args...)}
}

// pamDiff names the first field in which t differs from the transaction
// stored under its key ("" when it is the same transaction re-sent).
// The date and isGameOver are not compared: a re-send may stamp anew.
func pamDiff(prev Transaction, t pamTx) string {
	switch {
	case prev.Player != t.player:
		return "playerId"
	case prev.Type != t.typ:
		return "transactionType"
	case prev.Currency != t.cur.Code():
		return "currency"
	case prev.Game != t.game:
		return "providerGameId"
	case prev.Round != t.round:
		return "providerRoundId"
	case prev.Stated != t.amt:
		return "amounts"
	}
	return ""
}

// pamResend answers a transaction whose key is stored: the same
// transaction is OK with the balance and moves nothing (the document's
// idempotency); another under the same id is PAM_ERR_DUPLICATE_TRANS,
// naming the field, or for a cancel PAM_ERR_TRANS_ALREADY_CANCELLED (a
// second, different cancellation of the same withdraw).
func (s *store) pamResend(prev Transaction, t pamTx) pamVerdict {
	v := pamVerdict{txID: prev.ID}
	if f := pamDiff(prev, t); f != "" {
		if pamClass[t.typ] == "cancel" {
			v = refuse(pamErrAlreadyCancelled, "withdraw %s is already cancelled (by %s, another %s)", t.id, prev.ID, f)
		} else {
			v = refuse(pamErrDuplicateTrans, "providerTransactionId %s is %s, with another %s", t.id, prev.ID, f)
		}
	}
	v.balance, _ = s.account(t.player, t.cur.Code())
	return v
}

// newPamTx is the transaction t records, its moves given.
func newPamTx(t pamTx, moved Amounts) Transaction {
	return Transaction{Key: pamKey(t.provider, pamClass[t.typ], t.id), Protocol: ProtocolValkyriePAM, Type: t.typ,
		Player: t.player, Currency: t.cur.Code(), Stated: t.amt, Moved: moved, Provider: t.provider,
		ProviderTxID: t.id, BetRef: t.betRef, Game: t.game, Round: t.round, GameOver: t.gameOver, Session: t.token,
		At: t.at}
}

// pamWithdraw debits: each of cash, bonus and promo must cover its part
// (PAM_ERR_CASH/BONUS/PROMO_OVERDRAFT). It starts its round, or joins
// it; a round already over refuses it (PAM_ERR_TRANS_ALREADY_SETTLED).
func (s *store) pamWithdraw(c *change, t pamTx) (pamVerdict, error) {
	rk := roundKey(t.player, t.provider, t.round)
	rd := s.st.Rounds[rk]
	if t.round != "" && rd != nil && rd.Closed {
		return refuse(pamErrAlreadySettled, "game round %s is over", t.round), nil
	}
	acct, _ := s.account(t.player, t.cur.Code())
	switch {
	case acct.Cash < t.amt.Cash:
		return refuse(pamErrCashOverdraft, "cash %s < %s", fmtMinor(acct.Cash, t.cur), fmtMinor(t.amt.Cash, t.cur)), nil
	case acct.Bonus < t.amt.Bonus:
		return refuse(pamErrBonusOverdraft, "bonus %s < %s", fmtMinor(acct.Bonus, t.cur), fmtMinor(t.amt.Bonus, t.cur)), nil
	case acct.Promo < t.amt.Promo:
		return refuse(pamErrPromoOverdraft, "promo %s < %s", fmtMinor(acct.Promo, t.cur), fmtMinor(t.amt.Promo, t.cur)), nil
	}
	if err := c.move(t.player, t.cur.Code(), t.amt.neg()); err != nil {
		return pamVerdict{}, err
	}
	rec := c.record(newPamTx(t, t.amt.neg()))
	if t.round != "" {
		next := round{Player: t.player, Provider: t.provider, Game: t.game, ID: t.round, Start: t.at}
		if rd != nil {
			next = *rd
		}
		next.Withdraws = append(next.Withdraws, rec.Key)
		closeIf(&next, t)
		c.setRound(rk, next)
	}
	return pamVerdict{txID: rec.ID}, nil
}

func closeIf(rd *round, t pamTx) {
	if t.gameOver && !rd.Closed {
		rd.Closed, rd.End = true, t.at
	}
}

func fmtMinor(minor int64, cur domain.Currency) string {
	return domain.FormatMinor(minor, cur.Exponent())
}

// pamDeposit credits. A DEPOSIT needs its round (PAM_ERR_TRANS_NOT_FOUND),
// open (PAM_ERR_TRANS_ALREADY_SETTLED), with a withdraw not cancelled
// (PAM_ERR_TRANS_ALREADY_CANCELLED); its id may be a withdraw's of the
// same player, game and round, never another's (PAM_ERR_DUPLICATE_TRANS).
// A PROMODEPOSIT needs no withdraw.
func (s *store) pamDeposit(c *change, t pamTx) (pamVerdict, error) {
	if w, ok := s.lookup(pamKey(t.provider, "withdraw", t.id)); ok &&
		(w.Player != t.player || w.Game != t.game || w.Round != t.round) {
		return refuse(pamErrDuplicateTrans, "providerTransactionId %s is withdraw %s of another player, game or round",
			t.id, w.ID), nil
	}
	rk := roundKey(t.player, t.provider, t.round)
	rd := s.st.Rounds[rk]
	if t.typ == pamDeposit {
		switch {
		case t.round == "" || rd == nil:
			return refuse(pamErrTransNotFound, "no game round %q for player %s", t.round, t.player), nil
		case rd.Closed:
			return refuse(pamErrAlreadySettled, "game round %s is over", t.round), nil
		case s.cancelledTarget(rd, t.betRef):
			return refuse(pamErrAlreadyCancelled, "the withdraw of game round %s is cancelled", t.round), nil
		}
	}
	if err := c.move(t.player, t.cur.Code(), t.amt); err != nil {
		return pamVerdict{}, err
	}
	rec := c.record(newPamTx(t, t.amt))
	if t.round != "" {
		next := round{Player: t.player, Provider: t.provider, Game: t.game, ID: t.round, Start: t.at}
		if rd != nil {
			next = *rd
		}
		next.Deposited = next.Deposited || t.typ == pamDeposit
		closeIf(&next, t)
		c.setRound(rk, next)
	}
	return pamVerdict{txID: rec.ID}, nil
}

// cancelledTarget reports whether the deposit goes toward a cancelled
// withdraw: the round's withdraw its providerBetRef names, or (no such
// withdraw) every withdraw of the round.
func (s *store) cancelledTarget(rd *round, betRef string) bool {
	all := len(rd.Withdraws) > 0
	for _, k := range rd.Withdraws {
		w, _ := s.lookup(k)
		if betRef != "" && (w.ProviderTxID == betRef || w.BetRef == betRef) {
			return w.Undone
		}
		all = all && w.Undone
	}
	return all
}

// pamCancel gives back the withdraw whose providerTransactionId the
// cancel carries (or, when none has it, its providerBetRef): unknown
// (or another player's) is PAM_ERR_CANCEL_NOT_FOUND, a deposit is
// PAM_ERR_CANCEL_NON_WITHDRAW, a withdraw whose round got a deposit is
// PAM_ERR_TRANS_ALREADY_SETTLED. The withdraw's own amounts are given
// back, whatever the cancel states.
func (s *store) pamCancel(c *change, t pamTx) (pamVerdict, error) {
	w, ok := s.lookup(pamKey(t.provider, "withdraw", t.id))
	if !ok && t.betRef != "" {
		w, ok = s.lookup(pamKey(t.provider, "withdraw", t.betRef))
	}
	if !ok || w.Player != t.player {
		if d, found := s.lookup(pamKey(t.provider, "deposit", t.id)); found && d.Player == t.player {
			return refuse(pamErrCancelNonWithdr, "%s is a %s, not a withdraw", t.id, d.Type), nil
		}
		return refuse(pamErrCancelNotFound, "no withdraw %s of player %s", t.id, t.player), nil
	}
	if w.Undone {
		return refuse(pamErrAlreadyCancelled, "withdraw %s is already cancelled", w.ProviderTxID), nil
	}
	if rd := s.st.Rounds[roundKey(w.Player, w.Provider, w.Round)]; w.Round != "" && rd != nil && rd.Deposited {
		return refuse(pamErrAlreadySettled, "game round %s of withdraw %s got a deposit", w.Round, w.ProviderTxID), nil
	}
	back := w.Moved.neg()
	if err := c.move(t.player, t.cur.Code(), back); err != nil {
		return pamVerdict{}, err
	}
	c.markUndone(w.Key)
	tx := newPamTx(t, back)
	tx.Ref = w.ID
	rec := c.record(tx)
	return pamVerdict{txID: rec.ID}, nil
}
