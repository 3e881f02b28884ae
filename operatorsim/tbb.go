package operatorsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// HeaderTBBSignature carries the lower-case hex HMAC-SHA256 of the raw
// body, keyed with the shared secret (TBB: "the shared password").
const HeaderTBBSignature = "X-REQUEST-SIGN"

// TBB's actions.
const (
	tbbBalance     = "balance"
	tbbBet         = "bet"
	tbbWin         = "win"
	tbbRefund      = "refund"
	tbbRollbackWin = "rollback-win"
)

// tbbMessages are the addendum's messages of its error codes.
var tbbMessages = map[int]string{
	400: "Bad request. Badly formatted JSON.",
	402: "The player does not have enough money for the action.",
	403: "Forbidden. Request sign doesn't match.",
	404: "Player not found.",
	405: "Game is not available.",
	406: "Previous transaction not found.",
	407: "Player is blocked.",
	408: "Bet is rejected.",
	418: "The player has reached his responsible limits.",
	500: "Unknown error.",
	503: "Service is unavailable.",
	504: "Request timed out.",
}

// tbbError answers the addendum's {"code", "message"}, the code also the
// HTTP status; msg empty: the addendum's message.
func tbbError(w http.ResponseWriter, code int, msg string) {
	if msg == "" {
		msg = tbbMessages[code]
	}
	writeJSON(w, code, struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg})
}

// tbbBody is every field of the five actions (the document lists them
// all as required for their action). Fields outside the document
// (promo, jackpot, tournament, free_spin of a win's transfer data) are
// accepted and not booked.
type tbbBody struct {
	Action       string          `json:"action"`
	PlayerID     string          `json:"player_id"`
	CurrencyCode string          `json:"currency_code"`
	IsMobile     *bool           `json:"is_mobile"`
	Amount       json.RawMessage `json:"amount"`
	// balance's fields (flat)
	Reference    string `json:"reference"`
	SessionToken string `json:"session_token"`
	// bet, win, refund and rollback-win carry them in payload
	Payload *struct {
		Reference    string `json:"reference"`
		SessionToken string `json:"session_token"`
		Transfer     *struct {
			TransactionID            string `json:"transaction_id"`
			RoundID                  string `json:"round_id"`
			RoundClose               *bool  `json:"round_close"`
			RefundedTransactionID    string `json:"refunded_transaction_id"`
			RollbackWinTransactionID string `json:"rollback_win_transaction_id"`
			TableReference           string `json:"table_reference"`
		} `json:"provider_transfer_data"`
	} `json:"payload"`
}

// tbbTx is a checked money call.
type tbbTx struct {
	action, player, session, id, ref, round string
	game                                    string // the payload's reference
	cur                                     domain.Currency
	amount                                  int64
	closed                                  bool
}

// tbbWallet is POST /operator/wallet: the signature over the raw body
// (403), the body (400), the player (404), then the action.
func (s *Sim) tbbWallet(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(raw) > maxBody {
		tbbError(w, http.StatusBadRequest, "the body is unreadable or too large")
		return
	}
	if !gateway.ValidSignature(s.cfg.Secret, raw, r.Header.Get(HeaderTBBSignature)) {
		note(r.Context(), "refused: signature")
		tbbError(w, http.StatusForbidden, "")
		return
	}
	var b tbbBody
	if err := json.Unmarshal(raw, &b); err != nil {
		tbbError(w, http.StatusBadRequest, "")
		return
	}
	note(r.Context(), "%s %s", b.Action, b.PlayerID)
	cur, err := s.tbbCheck(b)
	if err != nil {
		tbbError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.store.mu.Lock()
	_, known := s.store.st.Players[b.PlayerID]
	acct, held := s.store.account(b.PlayerID, cur.Code())
	s.store.mu.Unlock()
	switch {
	case !known:
		tbbError(w, http.StatusNotFound, "")
		return
	case !held:
		tbbError(w, http.StatusBadRequest, fmt.Sprintf("player %s has no %s account", b.PlayerID, cur.Code()))
		return
	}
	if b.Action == tbbBalance {
		writeJSON(w, http.StatusOK, struct {
			PlayerID     string `json:"player_id"`
			Balance      int64  `json:"balance"`
			CurrencyCode string `json:"currency_code"`
		}{b.PlayerID, acct.Cash, cur.Code()})
		return
	}
	t, err := tbbMoney(b, cur)
	if err != nil {
		tbbError(w, http.StatusBadRequest, err.Error())
		return
	}
	note(r.Context(), "%s %s %s", t.action, t.player, t.id)
	s.tbbAnswer(w, t)
}

// tbbCheck checks what every action carries: the action, player_id,
// currency_code, is_mobile and (balance) reference and session_token.
func (s *Sim) tbbCheck(b tbbBody) (domain.Currency, error) {
	switch b.Action {
	case tbbBalance, tbbBet, tbbWin, tbbRefund, tbbRollbackWin:
	default:
		return domain.Currency{}, fmt.Errorf("action %q is not balance, bet, win, refund or rollback-win", b.Action)
	}
	if b.PlayerID == "" || b.CurrencyCode == "" || b.IsMobile == nil {
		return domain.Currency{}, errors.New("player_id, currency_code and is_mobile are required")
	}
	cur, err := domain.ParseCurrency(b.CurrencyCode)
	if err != nil {
		return domain.Currency{}, err
	}
	if b.Action == tbbBalance && (b.Reference == "" || b.SessionToken == "") {
		return domain.Currency{}, errors.New("reference and session_token are required")
	}
	return cur, nil
}

// tbbMoney checks a bet's, win's, refund's or rollback-win's fields.
func tbbMoney(b tbbBody, cur domain.Currency) (tbbTx, error) {
	p := b.Payload
	if p == nil || p.Reference == "" || p.SessionToken == "" || p.Transfer == nil {
		return tbbTx{}, errors.New("payload with reference, session_token and provider_transfer_data is required")
	}
	d := p.Transfer
	t := tbbTx{action: b.Action, player: b.PlayerID, session: p.SessionToken, id: d.TransactionID, round: d.RoundID,
		game: p.Reference, cur: cur}
	if t.id == "" || t.round == "" {
		return tbbTx{}, errors.New("provider_transfer_data.transaction_id and round_id are required")
	}
	switch b.Action {
	case tbbWin:
		if d.RoundClose == nil {
			return tbbTx{}, errors.New("provider_transfer_data.round_close is required")
		}
		t.closed = *d.RoundClose
	case tbbRefund:
		t.ref = d.RefundedTransactionID
	case tbbRollbackWin:
		t.ref = d.RollbackWinTransactionID
	}
	if (b.Action == tbbRefund || b.Action == tbbRollbackWin) && t.ref == "" {
		return tbbTx{}, fmt.Errorf("the %s names no transaction", b.Action)
	}
	var err error
	if t.amount, err = parseSubunits(b.Amount); err != nil {
		return tbbTx{}, fmt.Errorf("amount %w", err)
	}
	return t, nil
}

// tbbVerdict is a money call's answer: code 0 for 200.
type tbbVerdict struct {
	code    int
	message string
	txID    string
	balance int64
}

func (s *Sim) tbbAnswer(w http.ResponseWriter, t tbbTx) {
	v, err := s.store.tbbApply(t)
	if err != nil {
		s.log.Error("apply", "err", err)
		tbbError(w, http.StatusInternalServerError, "the simulator could not keep the transaction")
		return
	}
	if v.code != 0 {
		tbbError(w, v.code, v.message)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		TransactionID string `json:"transaction_id"`
		Balance       int64  `json:"balance"`
		CurrencyCode  string `json:"currency_code"`
	}{v.txID, v.balance, t.cur.Code()})
}

// tbbKey is a TBB call's idempotency key: a bet or win by its
// transaction_id, a refund or rollback by the transaction it undoes (the
// document's examples give a refund the refunded id as its own
// transaction_id, so its own id cannot be the key; a transaction is
// undone once).
func tbbKey(t tbbTx) string {
	if t.ref != "" {
		return "tbb\x00" + t.action + "\x00" + t.ref
	}
	return "tbb\x00" + t.action + "\x00" + t.id
}

// tbbApply decides and applies t under the store's lock.
func (s *store) tbbApply(t tbbTx) (tbbVerdict, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var v tbbVerdict
	var err error
	if prev, ok := s.lookup(tbbKey(t)); ok {
		v = tbbResend(prev, t)
	} else {
		c := s.begin()
		v, err = s.tbbDecide(c, t)
		if err == nil && v.code == 0 {
			err = c.commit()
		} else {
			c.rollback()
		}
	}
	acct, _ := s.account(t.player, t.cur.Code())
	v.balance = acct.Cash
	return v, err
}

// tbbResend answers a call whose key is stored: the same call is 200
// with its first transaction_id and the balance now, moving nothing; a
// bet or win id reused with another player, currency, round or amount is
// 400 (the addendum has no duplicate code). A refund or rollback re-sent
// is the same undo whatever its own id and amount.
func tbbResend(prev Transaction, t tbbTx) tbbVerdict {
	field := ""
	switch {
	case prev.Player != t.player:
		field = "player_id"
	case prev.Currency != t.cur.Code():
		field = "currency_code"
	case t.ref == "" && prev.Round != t.round:
		field = "round_id"
	case t.ref == "" && prev.Stated.Cash != t.amount:
		field = "amount"
	}
	if field != "" {
		return tbbVerdict{code: http.StatusBadRequest,
			message: fmt.Sprintf("transaction_id %s is %s, with another %s", t.id, prev.ID, field)}
	}
	return tbbVerdict{txID: prev.ID}
}

// tbbDecide applies a new call. A bet must be covered (402) and not
// refunded before it arrived (408); a refund gives back the player's bet
// it names (406 when there is none: recorded, so the bet if it comes late
// is refused); a rollback-win takes back the player's win it names, even
// below zero. A rollback of a win never seen is 406: the document's page
// lists 406 "previous transaction not found" and also says a 200 means
// "processed (or ignored if transaction not found)"; the simulator takes
// the status that tells the caller nothing was taken back.
func (s *store) tbbDecide(c *change, t tbbTx) (tbbVerdict, error) {
	tx := Transaction{Key: tbbKey(t), Protocol: ProtocolTBB, Type: t.action, Player: t.player, Currency: t.cur.Code(),
		Stated: Amounts{Cash: t.amount}, ProviderTxID: t.id, BetRef: t.ref, Game: t.game, Round: t.round, GameOver: t.closed,
		Session: t.session, At: s.now().UTC()}
	switch t.action {
	case tbbBet:
		acct, _ := s.account(t.player, t.cur.Code())
		switch {
		case s.st.RefundedFirst[t.id]:
			return tbbVerdict{code: 408, message: "bet " + t.id + " was refunded before it arrived"}, nil
		case acct.Cash < t.amount:
			return tbbVerdict{code: 402}, nil
		}
		tx.Moved = Amounts{Cash: -t.amount}
	case tbbWin:
		tx.Moved = Amounts{Cash: t.amount}
	case tbbRefund, tbbRollbackWin:
		kind := map[string]string{tbbRefund: tbbBet, tbbRollbackWin: tbbWin}[t.action]
		target, ok := s.lookup("tbb\x00" + kind + "\x00" + t.ref)
		if !ok || target.Player != t.player {
			if t.action == tbbRefund && !ok {
				c.markRefundedFirst(t.ref)
				if err := c.commit(); err != nil {
					return tbbVerdict{}, err
				}
			}
			return tbbVerdict{code: 406, message: "no " + kind + " " + t.ref + " of player " + t.player}, nil
		}
		tx.Moved, tx.Ref = target.Moved.neg(), target.ID
		c.markUndone(target.Key)
	}
	if err := c.move(t.player, t.cur.Code(), tx.Moved); err != nil {
		return tbbVerdict{}, err
	}
	return tbbVerdict{txID: c.record(tx).ID}, nil
}
