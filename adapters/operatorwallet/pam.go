package operatorwallet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"time"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/wallet"
)

// pamClient speaks the Valkyrie PAM API 0.6.0 (testdata/valkyrie-pam-0.6.0.yaml
// is our description of the part we call).
type pamClient struct {
	http  transport
	base  string
	token string
}

var _ wallet.OperatorWallet = (*pamClient)(nil)

// pamCode is what one PAM_ERR_* code means: a verdict (credit, when set,
// the verdict of the code answering a DEPOSIT), or undecided: the
// operator did not say no for good, so a movement's outcome is unknown.
type pamCode struct {
	verdict   wallet.Verdict
	credit    *wallet.Verdict
	undecided bool
}

func verdictPtr(v wallet.Verdict) *wallet.Verdict { return &v }

// pamCodes is every error code of the PAM API 0.6.0 with its meaning;
// a code not listed is undecided.
var pamCodes = map[string]pamCode{
	"PAM_ERR_UNDEFINED":     {undecided: true},
	"PAM_ERR_TIMEOUT":       {undecided: true},
	"PAM_ERR_ACC_NOT_FOUND": {verdict: wallet.WrongPlayer},
	// The player id names no player of the operator's.
	"PAM_ERR_PLAYER_NOT_FOUND": {verdict: wallet.WrongPlayer},
	"PAM_ERR_GAME_NOT_FOUND":   {verdict: wallet.InvalidGame},
	// Only getGameRound answers it (we never call it): an unknown round.
	"PAM_ERR_ROUND_NOT_FOUND":   {verdict: wallet.UnknownTransaction},
	"PAM_ERR_TRANS_NOT_FOUND":   {verdict: wallet.UnknownTransaction},
	"PAM_ERR_CANCEL_NOT_FOUND":  {verdict: wallet.UnknownTransaction},
	"PAM_ERR_CASH_OVERDRAFT":    {verdict: wallet.InsufficientFunds},
	"PAM_ERR_BONUS_OVERDRAFT":   {verdict: wallet.InsufficientFunds},
	"PAM_ERR_PROMO_OVERDRAFT":   {verdict: wallet.InsufficientFunds},
	"PAM_ERR_SESSION_NOT_FOUND": {verdict: wallet.UnknownSession},
	"PAM_ERR_SESSION_EXPIRED":   {verdict: wallet.SessionExpired},
	// A request without provider, or with another API token than the
	// operator's: our configuration's fault, not the player's.
	"PAM_ERR_MISSING_PROVIDER": {verdict: wallet.Fault},
	"PAM_ERR_API_TOKEN":        {verdict: wallet.Fault},
	"PAM_ERR_TRANS_CURRENCY":   {verdict: wallet.WrongCurrency},
	"PAM_ERR_NEGATIVE_STAKE":   {verdict: wallet.InvalidAmount},
	// A second cancel of a WITHDRAW; answering a DEPOSIT, a win on a
	// cancelled WITHDRAW.
	"PAM_ERR_TRANS_ALREADY_CANCELLED": {verdict: wallet.AlreadyRolledBack, credit: verdictPtr(wallet.RolledBack)},
	"PAM_ERR_TRANS_ALREADY_SETTLED":   {verdict: wallet.Settled},
	"PAM_ERR_CANCEL_NON_WITHDRAW":     {verdict: wallet.NotRollbackable},
	"PAM_ERR_DUPLICATE_TRANS":         {verdict: wallet.Duplicate},
	"PAM_ERR_BET_NOT_ALLOWED":         {verdict: operatorRefused},
}

// The PAM document's limits: ids of 1 to 40 characters, three-letter
// currency codes, amounts of at most six decimals.
const (
	pamMaxID       = 40
	pamMaxDecimals = 6
)

var pamCurrency = regexp.MustCompile(`^[A-Z]{3}$`)

// pamAnswer is every answer's wrapper: its status, and the call's part.
type pamAnswer struct {
	Status            string           `json:"status"`
	Error             *pamError        `json:"error"`
	Session           *pamSession      `json:"session"`
	Balance           *pamBalance      `json:"balance"`
	TransactionResult *pamTxResult     `json:"transactionResult"`
	Transactions      []pamTransaction `json:"transactions"`
}

type pamError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type pamSession struct {
	PlayerID string `json:"playerId"`
	Currency string `json:"currency"`
	Country  string `json:"country"`
	Language string `json:"language"`
	GameID   string `json:"gameId"`
}

type pamBalance struct {
	Cash  json.Number `json:"cashAmount"`
	Bonus json.Number `json:"bonusAmount"`
	Promo json.Number `json:"promoAmount"`
}

type pamTxResult struct {
	TransactionID string      `json:"transactionId"`
	Balance       *pamBalance `json:"balance"`
}

type pamTransaction struct {
	TransactionType       string      `json:"transactionType"`
	ProviderTransactionID string      `json:"providerTransactionId"`
	CashAmount            json.Number `json:"cashAmount"`
}

// pamTransactionBody is addTransaction's body. The amounts are JSON
// numbers written from the amount's exact decimal text.
type pamTransactionBody struct {
	Currency              string       `json:"currency"`
	Provider              string       `json:"provider"`
	TransactionType       string       `json:"transactionType"`
	CashAmount            json.Number  `json:"cashAmount"`
	BonusAmount           json.Number  `json:"bonusAmount"`
	PromoAmount           json.Number  `json:"promoAmount"`
	TransactionDateTime   string       `json:"transactionDateTime"`
	ProviderTransactionID string       `json:"providerTransactionId"`
	ProviderBetRef        string       `json:"providerBetRef,omitempty"`
	ProviderGameID        string       `json:"providerGameId,omitempty"`
	ProviderRoundID       string       `json:"providerRoundId,omitempty"`
	IsGameOver            bool         `json:"isGameOver"`
	Jackpots              []pamJackpot `json:"jackpots,omitempty"`
}

type pamJackpot struct {
	JackpotAmount json.Number `json:"jackpotAmount"`
}

// total is the player's playable balance: cash and bonus money. Promo
// money (free bets) is the operator's to spend on PROMOWITHDRAWs only,
// so it is not part of it.
func (b *pamBalance) total(c domain.Currency) (domain.Money, error) {
	if b == nil {
		return domain.Money{}, fmt.Errorf("no balance")
	}
	cash, err := parseAmount(b.Cash, c)
	if err != nil {
		return domain.Money{}, fmt.Errorf("cashAmount: %w", err)
	}
	bonus, err := parseAmount(b.Bonus, c)
	if err != nil {
		return domain.Money{}, fmt.Errorf("bonusAmount: %w", err)
	}
	return cash.Add(bonus)
}

// Session resolves the player's token: GET /players/session.
func (c *pamClient) Session(ctx context.Context, p wallet.OperatorPlayer) (wallet.OperatorSession, error) {
	a, err := c.call(ctx, "session", 0, p.Currency, c.get("/players/session", nil, p))
	if err != nil {
		return wallet.OperatorSession{}, err
	}
	s := a.Session
	if s == nil || s.PlayerID == "" || s.Currency == "" {
		return wallet.OperatorSession{}, unreadable(false, "pam session: no session, player or currency")
	}
	return wallet.OperatorSession{Player: s.PlayerID, Currency: s.Currency, Country: s.Country, Language: s.Language,
		Game: s.GameID}, nil
}

// Balance is the player's cash and bonus money: GET
// /players/{id}/balance.
func (c *pamClient) Balance(ctx context.Context, p wallet.OperatorPlayer) (domain.Money, error) {
	if !pamCurrency.MatchString(p.Currency.Code()) {
		return domain.Money{}, refusedBefore(wallet.WrongCurrency, "currency", "the PAM API carries 3-letter codes only")
	}
	a, err := c.call(ctx, "balance", 0, p.Currency, c.get("/players/"+url.PathEscape(p.Player)+"/balance", nil, p))
	if err != nil {
		return domain.Money{}, err
	}
	b, err := a.Balance.total(p.Currency)
	if err != nil {
		return domain.Money{}, unreadable(false, "pam balance: %v", err)
	}
	return b, nil
}

// Move books m: POST /players/{id}/transactions.
func (c *pamClient) Move(ctx context.Context, m wallet.OperatorMove) (wallet.OperatorAnswer, error) {
	if r := pamCheck(m); r != nil {
		return wallet.OperatorAnswer{}, r
	}
	body, err := json.Marshal(pamBody(m))
	if err != nil {
		return wallet.OperatorAnswer{}, fmt.Errorf("pam %s %s: encode: %w", m.Kind, clip(m.ID), err)
	}
	path := "/players/" + url.PathEscape(m.Player) + "/transactions"
	a, err := c.call(ctx, m.Kind.String(), m.Kind, m.Currency, c.build(http.MethodPost, path, nil, m.OperatorPlayer, body))
	if err != nil {
		return wallet.OperatorAnswer{}, err
	}
	if a.TransactionResult == nil {
		return wallet.OperatorAnswer{}, unreadable(true, "pam %s %s: no transactionResult", m.Kind, clip(m.ID))
	}
	tx := a.TransactionResult
	if tx.Balance == nil {
		// The operator booked it but did not say the balance: ask.
		b, err := c.Balance(ctx, m.OperatorPlayer)
		if err != nil {
			// %v: a refusal of the balance read is no refusal of m.
			return wallet.OperatorAnswer{}, fmt.Errorf("pam %s %s booked, its balance: %w: %v", m.Kind, clip(m.ID),
				wallet.ErrOutcomeUnknown, err)
		}
		return wallet.OperatorAnswer{TxID: tx.TransactionID, Balance: b}, nil
	}
	b, err := tx.Balance.total(m.Currency)
	if err != nil {
		return wallet.OperatorAnswer{}, unreadable(true, "pam %s %s: %v", m.Kind, clip(m.ID), err)
	}
	return wallet.OperatorAnswer{TxID: tx.TransactionID, Balance: b}, nil
}

// Lookup asks whether the operator booked m: GET
// /players/{id}/transactions?providerTransactionId=... It is found when
// a transaction of m's type comes back. A movement's identity at the PAM
// is its type and providerTransactionId: m.ID for a Debit or Credit, the
// cancelled debit's id (m.Ref) for a Cancel (see pamBody), so a Cancel is
// looked up by m.Ref and found by its CANCEL. The answer has no balance
// and no PAM transaction id (the document's lookup gives neither): the
// balance is asked for, TxID stays empty. A Reverse is never booked at a
// PAM: never found.
func (c *pamClient) Lookup(ctx context.Context, m wallet.OperatorMove) (wallet.OperatorAnswer, bool, error) {
	if m.Kind == wallet.Reverse {
		return wallet.OperatorAnswer{}, false, nil
	}
	id, typ := pamIdentity(m)
	if id == "" || typ == "" {
		return wallet.OperatorAnswer{}, false, refusedBefore(wallet.InvalidRequest, "field", "no id to look up")
	}
	q := url.Values{"providerTransactionId": {id}}
	path := "/players/" + url.PathEscape(m.Player) + "/transactions"
	a, err := c.call(ctx, "lookup "+m.Kind.String(), m.Kind, m.Currency, c.get(path, q, m.OperatorPlayer))
	if err != nil {
		if r, ok := asRefusal(err); ok && r.Verdict == wallet.UnknownTransaction {
			return wallet.OperatorAnswer{}, false, nil
		}
		return wallet.OperatorAnswer{}, false, err
	}
	found := -1
	for i, t := range a.Transactions {
		if t.TransactionType == typ && t.ProviderTransactionID == id {
			found = i
		}
	}
	if found < 0 {
		return wallet.OperatorAnswer{}, false, nil
	}
	var amount domain.Money
	if n := a.Transactions[found].CashAmount; n != "" {
		if amount, err = parseAmount(n, m.Currency); err != nil {
			return wallet.OperatorAnswer{}, false, unreadable(true, "pam lookup %s %s: cashAmount: %v", m.Kind, clip(m.ID), err)
		}
	}
	b, err := c.Balance(ctx, m.OperatorPlayer)
	if err != nil {
		// %v: a refusal of the balance read is no answer about m.
		return wallet.OperatorAnswer{}, false, fmt.Errorf("pam lookup %s %s found, its balance: %w: %v", m.Kind,
			clip(m.ID), wallet.ErrOutcomeUnknown, err)
	}
	return wallet.OperatorAnswer{Balance: b, Amount: amount}, true, nil
}

// pamIdentity is m's providerTransactionId and transactionType at the
// PAM.
func pamIdentity(m wallet.OperatorMove) (string, string) {
	types := map[wallet.MoveKind][2]string{wallet.Debit: {"WITHDRAW", "PROMOWITHDRAW"},
		wallet.Credit: {"DEPOSIT", "PROMODEPOSIT"}, wallet.Cancel: {"CANCEL", "PROMOCANCEL"}}
	t, ok := types[m.Kind]
	if !ok {
		return "", ""
	}
	typ := t[0]
	if m.Promo {
		typ = t[1]
	}
	if m.Kind == wallet.Cancel {
		return m.Ref, typ
	}
	return m.ID, typ
}

// pamCheck refuses, before anything is sent, a movement the PAM API
// cannot carry faithfully.
func pamCheck(m wallet.OperatorMove) *wallet.OperatorRefusal {
	switch {
	case m.Kind == wallet.Reverse:
		return refusedBefore(wallet.NotRollbackable, "unsupported", "the PAM API cannot take a credit back")
	case m.Kind < wallet.Debit || m.Kind > wallet.Reverse:
		return refusedBefore(wallet.InvalidRequest, "field", "no movement kind")
	case !pamCurrency.MatchString(m.Currency.Code()):
		return refusedBefore(wallet.WrongCurrency, "currency", "the PAM API carries 3-letter codes only")
	case m.Amount.Currency() != m.Currency || (!m.Jackpot.IsZero() && m.Jackpot.Currency() != m.Currency):
		return refusedBefore(wallet.WrongCurrency, "currency", "an amount in another currency than the player's")
	case m.Amount.IsNegative() || m.Jackpot.IsNegative():
		return refusedBefore(wallet.InvalidAmount, "amount", "a negative amount")
	case !pamExact(m.Amount) || !pamExact(m.Jackpot):
		return refusedBefore(wallet.InvalidAmount, "precision", "the PAM API carries 6 decimals at most")
	case !m.Jackpot.IsZero() && (m.Kind != wallet.Credit || m.Jackpot.Cmp(m.Amount) > 0):
		return refusedBefore(wallet.InvalidAmount, "amount", "a jackpot part that is no part of a credit")
	case m.Kind == wallet.Cancel && m.Ref == "":
		return refusedBefore(wallet.InvalidRequest, "field", "a cancel names no debit")
	}
	for _, f := range []string{m.ID, m.Ref, m.Game, m.Round} {
		if len(f) > pamMaxID {
			return refusedBefore(wallet.InvalidRequest, "field", "an id over the PAM API's 40 characters")
		}
	}
	if m.ID == "" {
		return refusedBefore(wallet.InvalidRequest, "field", "no transaction id")
	}
	return nil
}

// pamExact reports whether m is exact in the PAM's six decimals.
func pamExact(m domain.Money) bool {
	e := m.Currency().Exponent()
	if e <= pamMaxDecimals {
		return true
	}
	unit := int64(1)
	for range e - pamMaxDecimals {
		unit *= 10
	}
	return m.Minor()%unit == 0
}

// pamBody is m's addTransaction body (m passed pamCheck).
//
// A Cancel's providerTransactionId is the cancelled debit's id (m.Ref),
// not the cancel's own: the document has the PAM find "the corresponding
// WITHDRAW" of a CANCEL and gives no other field naming it, so the
// WITHDRAW's own id is how it is found (as Valkyrie's providers send it).
// providerBetRef carries it too — every debit's is its own id — for a PAM
// that matches a cancel by bet reference, which the document's lookup
// prefers. A re-sent cancel is then the same (CANCEL, id) and answers as
// the first; the cancel's own id (m.ID) is not sent, so two cancels of
// one debit under different ids look like one at the PAM.
//
// A promo movement (PROMOWITHDRAW, PROMODEPOSIT, PROMOCANCEL) moves the
// player's money like any other — the ledger books a free bet's wins, and
// a promo bet that has an amount, on the player's wallet — so its amount
// is cashAmount too, and the transaction type says it is a promotion's.
func pamBody(m wallet.OperatorMove) pamTransactionBody {
	id, typ := pamIdentity(m)
	zero := json.Number(domain.Zero(m.Currency).String())
	amount := json.Number(m.Amount.String())
	at := m.At
	if at.IsZero() {
		at = time.Now()
	}
	b := pamTransactionBody{Currency: m.Currency.Code(), Provider: m.Provider, TransactionType: typ,
		CashAmount: amount, BonusAmount: zero, PromoAmount: zero,
		TransactionDateTime: at.UTC().Format(time.RFC3339Nano), ProviderTransactionID: id,
		ProviderGameID: m.Game, ProviderRoundID: m.Round, IsGameOver: m.RoundClosed}
	switch m.Kind {
	case wallet.Debit, wallet.Cancel:
		b.ProviderBetRef = id
	case wallet.Credit:
		b.ProviderBetRef = m.Ref
		if !m.Jackpot.IsZero() {
			// Informative: the jackpot's part is in the credit's amount.
			b.Jackpots = []pamJackpot{{JackpotAmount: json.Number(m.Jackpot.String())}}
		}
	}
	return b
}

// get builds a GET of path with query q about p.
func (c *pamClient) get(path string, q url.Values, p wallet.OperatorPlayer) func(context.Context) (*http.Request, error) {
	return c.build(http.MethodGet, path, q, p, nil)
}

// build builds a request with the document's query and headers: provider,
// X-Player-Token, X-Correlation-ID and the bearer API token.
func (c *pamClient) build(method, path string, q url.Values, p wallet.OperatorPlayer,
	body []byte) func(context.Context) (*http.Request, error) {
	if q == nil {
		q = url.Values{}
	}
	q.Set("provider", p.Provider)
	target := c.base + path + "?" + q.Encode()
	cid := correlationID(p.CorrelationID)
	return func(ctx context.Context) (*http.Request, error) {
		var rd io.Reader = http.NoBody
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, target, rd)
		if err != nil {
			return nil, fmt.Errorf("pam request: %w", err)
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Accept", "application/json")
		req.Header.Set("Authorization", "Bearer "+c.token)
		req.Header.Set("X-Player-Token", p.Token)
		req.Header.Set("X-Correlation-ID", cid)
		return req, nil
	}
}

// call sends the request and reads the answer's wrapper: a status OK
// answer, or the operator's refusal (kind: the movement it answers, zero
// for a read), or an error wrapping wallet.ErrOutcomeUnknown.
func (c *pamClient) call(ctx context.Context, op string, kind wallet.MoveKind, cur domain.Currency,
	build func(context.Context) (*http.Request, error)) (pamAnswer, error) {
	move := kind != 0
	status, raw, err := c.http.do(ctx, move, build)
	if err != nil {
		return pamAnswer{}, fmt.Errorf("pam %s: %w", op, err)
	}
	var a pamAnswer
	decodeErr := json.Unmarshal(raw, &a)
	switch {
	case status >= 500 || status == http.StatusRequestTimeout:
		return pamAnswer{}, fmt.Errorf("pam %s: %w", op, undecided("HTTP_"+strconv.Itoa(status), ""))
	case status < 200 || status > 299:
		// Any other status is a definite no (401: the session or our API
		// token; 400: our request): the body's code says why when it can.
		if decodeErr == nil && a.Error != nil && a.Error.Code != "" {
			if row, ok := pamCodes[a.Error.Code]; ok && !row.undecided {
				return pamAnswer{}, pamRefusal(a, kind, cur)
			}
			return pamAnswer{}, &wallet.OperatorRefusal{Verdict: wallet.Fault, Code: a.Error.Code,
				Message: clip(a.Error.Message)}
		}
		return pamAnswer{}, &wallet.OperatorRefusal{Verdict: wallet.Fault, Code: "HTTP_" + strconv.Itoa(status)}
	case decodeErr != nil:
		return pamAnswer{}, unreadable(move, "pam %s: %v", op, decodeErr)
	case a.Status == "OK":
		return a, nil
	case a.Status != "ERROR" || a.Error == nil || a.Error.Code == "":
		return pamAnswer{}, unreadable(move, "pam %s: status %q without its part", op, clip(a.Status))
	}
	if row, ok := pamCodes[a.Error.Code]; !ok || row.undecided {
		return pamAnswer{}, fmt.Errorf("pam %s: %w", op, undecided(a.Error.Code, a.Error.Message))
	}
	return pamAnswer{}, pamRefusal(a, kind, cur)
}

// pamRefusal is the operator's refusal a (of a known, decided code) of a
// movement of kind, with the balance in cur it reported when it did (an
// unreadable one is left out: the refusal itself is clear).
func pamRefusal(a pamAnswer, kind wallet.MoveKind, cur domain.Currency) *wallet.OperatorRefusal {
	row := pamCodes[a.Error.Code]
	v := row.verdict
	if kind == wallet.Credit && row.credit != nil {
		v = *row.credit
	}
	r := &wallet.OperatorRefusal{Verdict: v, Code: a.Error.Code, Message: clip(a.Error.Message)}
	b := a.Balance
	if a.TransactionResult != nil && a.TransactionResult.Balance != nil {
		b = a.TransactionResult.Balance
	}
	if b != nil {
		if m, err := b.total(cur); err == nil {
			r.Balance = &m
		}
	}
	return r
}
