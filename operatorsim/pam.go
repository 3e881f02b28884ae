package operatorsim

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// The Valkyrie PAM API's error codes the simulator answers (ErrorCode in
// pam_api.yml).
const (
	pamErrUndefined        = "PAM_ERR_UNDEFINED"
	pamErrAPIToken         = "PAM_ERR_API_TOKEN"
	pamErrSessionNotFound  = "PAM_ERR_SESSION_NOT_FOUND"
	pamErrMissingProvider  = "PAM_ERR_MISSING_PROVIDER"
	pamErrPlayerNotFound   = "PAM_ERR_PLAYER_NOT_FOUND"
	pamErrRoundNotFound    = "PAM_ERR_ROUND_NOT_FOUND"
	pamErrTransNotFound    = "PAM_ERR_TRANS_NOT_FOUND"
	pamErrCashOverdraft    = "PAM_ERR_CASH_OVERDRAFT"
	pamErrBonusOverdraft   = "PAM_ERR_BONUS_OVERDRAFT"
	pamErrPromoOverdraft   = "PAM_ERR_PROMO_OVERDRAFT"
	pamErrTransCurrency    = "PAM_ERR_TRANS_CURRENCY"
	pamErrNegativeStake    = "PAM_ERR_NEGATIVE_STAKE"
	pamErrCancelNotFound   = "PAM_ERR_CANCEL_NOT_FOUND"
	pamErrAlreadyCancelled = "PAM_ERR_TRANS_ALREADY_CANCELLED"
	pamErrCancelNonWithdr  = "PAM_ERR_CANCEL_NON_WITHDRAW"
	pamErrAlreadySettled   = "PAM_ERR_TRANS_ALREADY_SETTLED"
	pamErrDuplicateTrans   = "PAM_ERR_DUPLICATE_TRANS"
	pamErrTimeout          = "PAM_ERR_TIMEOUT"
)

// PAM's headers.
const (
	HeaderPlayerToken   = "X-Player-Token"
	HeaderCorrelationID = "X-Correlation-ID"
)

func (s *Sim) pamRoutes(mux *http.ServeMux) {
	mux.Handle("GET /players/session", s.call(s.pam(s.pamSession, false)))
	mux.Handle("GET /players/{playerId}/balance", s.call(s.pam(s.pamBalance, true)))
	mux.Handle("GET /players/{playerId}/transactions", s.call(s.pam(s.pamGetTransactions, true)))
	mux.Handle("POST /players/{playerId}/transactions", s.call(s.pam(s.pamAddTransaction, true)))
	mux.Handle("GET /players/{playerId}/gamerounds/{providerGameRoundId}", s.call(s.pam(s.pamGameRound, true)))
}

// pamCall is a PAM request that passed the checks every call has: the
// API token, the correlation id, the provider, the session, and (for the
// player routes) the player the session belongs to.
type pamCall struct {
	token    string
	player   string
	provider string
	cur      domain.Currency
}

// pam checks what every PAM call carries, in this order: the bearer API
// token (401 PAM_ERR_API_TOKEN), X-Correlation-ID (400), the provider
// query parameter (400 PAM_ERR_MISSING_PROVIDER), the path's player
// (PAM_ERR_PLAYER_NOT_FOUND), and X-Player-Token: a token the simulator
// issued, for that player (401 PAM_ERR_SESSION_NOT_FOUND).
func (s *Sim) pam(h func(http.ResponseWriter, *http.Request, pamCall), playerRoute bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || !gateway.SameSecret(strings.TrimSpace(auth), s.cfg.APIToken) {
			pamFail(w, http.StatusUnauthorized, pamErrAPIToken, "Authorization: Bearer does not carry the PAM API token", nil)
			return
		}
		if strings.TrimSpace(r.Header.Get(HeaderCorrelationID)) == "" {
			pamFail(w, http.StatusBadRequest, pamErrUndefined, HeaderCorrelationID+" is required", nil)
			return
		}
		c := pamCall{provider: r.URL.Query().Get("provider"), token: r.Header.Get(HeaderPlayerToken)}
		if c.provider == "" {
			pamFail(w, http.StatusBadRequest, pamErrMissingProvider, "the provider query parameter is required", nil)
			return
		}
		s.store.mu.Lock()
		owner, known := s.store.st.Tokens[c.token]
		_, playerKnown := s.store.st.Players[r.PathValue("playerId")]
		s.store.mu.Unlock()
		if playerRoute && !playerKnown {
			pamFail(w, http.StatusOK, pamErrPlayerNotFound, "no player "+r.PathValue("playerId"), nil)
			return
		}
		if n := len(c.token); n < 32 || n > 40 || !known || (playerRoute && owner.Player != r.PathValue("playerId")) {
			pamFail(w, http.StatusUnauthorized, pamErrSessionNotFound, "no session for this "+HeaderPlayerToken, nil)
			return
		}
		cur, err := domain.ParseCurrency(owner.Currency)
		if err != nil { // a state file's currency this run was not configured with
			pamFail(w, http.StatusInternalServerError, pamErrUndefined, err.Error(), nil)
			return
		}
		c.player, c.cur = owner.Player, cur
		h(w, r, c)
	}
}

// pamBalance is a Balance in PAM's shape: each amount a JSON number with
// the currency's decimals.
type pamBalance struct {
	CashAmount  json.RawMessage `json:"cashAmount"`
	BonusAmount json.RawMessage `json:"bonusAmount"`
	PromoAmount json.RawMessage `json:"promoAmount"`
}

func pamAmounts(a Amounts, cur domain.Currency) pamBalance {
	return pamBalance{CashAmount: decimalJSON(a.Cash, cur), BonusAmount: decimalJSON(a.Bonus, cur),
		PromoAmount: decimalJSON(a.Promo, cur)}
}

type pamError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type pamTxResult struct {
	TransactionID string      `json:"transactionId,omitempty"`
	Balance       *pamBalance `json:"balance,omitempty"`
}

type pamResponse struct {
	Status            string          `json:"status"`
	Error             *pamError       `json:"error,omitempty"`
	Balance           *pamBalance     `json:"balance,omitempty"`
	Session           *pamSession     `json:"session,omitempty"`
	TransactionResult *pamTxResult    `json:"transactionResult,omitempty"`
	GameRound         *pamGameRoundTo `json:"gameround,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// pamFail answers PAM's error wrapper; a balance, when given, goes in the
// transactionResult (where the document says "return error ... and
// balance").
func pamFail(w http.ResponseWriter, status int, code, msg string, bal *pamBalance) {
	resp := pamResponse{Status: "ERROR", Error: &pamError{Code: code, Message: msg}}
	if bal != nil {
		resp.TransactionResult = &pamTxResult{Balance: bal}
	}
	writeJSON(w, status, resp)
}

func pamOK(w http.ResponseWriter, resp pamResponse) {
	resp.Status = "OK"
	writeJSON(w, http.StatusOK, resp)
}

type pamSession struct {
	PlayerID string `json:"playerId"`
	Token    string `json:"token"`
	Currency string `json:"currency"`
	Country  string `json:"country"`
	Language string `json:"language"`
}

// pamSession answers the session of the X-Player-Token (it never changes
// and never expires in the simulator).
func (s *Sim) pamSession(w http.ResponseWriter, r *http.Request, c pamCall) {
	note(r.Context(), "session %s", c.player)
	pamOK(w, pamResponse{Session: &pamSession{PlayerID: c.player, Token: c.token, Currency: c.cur.Code(),
		Country: s.cfg.Country, Language: s.cfg.Language}})
}

// pamBalance answers the player's balances in the session's currency.
func (s *Sim) pamBalance(w http.ResponseWriter, r *http.Request, c pamCall) {
	note(r.Context(), "balance %s", c.player)
	s.store.mu.Lock()
	a, _ := s.store.account(c.player, c.cur.Code())
	s.store.mu.Unlock()
	bal := pamAmounts(a, c.cur)
	pamOK(w, pamResponse{Balance: &bal})
}

// pamGetTransactions answers the player's stored transactions (of the
// provider) with the providerBetRef given, or else the
// providerTransactionId (the document prioritizes the bet ref): a client
// resolves an unknown outcome with it. A cancel carries the id of the
// withdraw it cancels, so the two come back together.
func (s *Sim) pamGetTransactions(w http.ResponseWriter, r *http.Request, c pamCall) {
	q := r.URL.Query()
	betRef, txID := q.Get("providerBetRef"), q.Get("providerTransactionId")
	if betRef == "" && txID == "" {
		pamFail(w, http.StatusBadRequest, pamErrUndefined, "providerTransactionId or providerBetRef is required", nil)
		return
	}
	note(r.Context(), "transactions %s ref=%s id=%s", c.player, betRef, txID)
	out := []pamTxBody{}
	for _, t := range s.store.transactions() {
		if t.Player != c.player || t.Provider != c.provider {
			continue
		}
		if (betRef != "" && t.BetRef != betRef) || (betRef == "" && t.ProviderTxID != txID) {
			continue
		}
		cur, err := domain.ParseCurrency(t.Currency)
		if err != nil {
			continue
		}
		out = append(out, pamTxBody{Currency: t.Currency, Provider: t.Provider, TransactionType: t.Type,
			CashAmount: decimalJSON(t.Stated.Cash, cur), BonusAmount: decimalJSON(t.Stated.Bonus, cur),
			PromoAmount: decimalJSON(t.Stated.Promo, cur), TransactionDateTime: t.At.Format(time.RFC3339Nano),
			ProviderTransactionID: t.ProviderTxID, ProviderBetRef: t.BetRef, ProviderGameID: t.Game,
			ProviderRoundID: t.Round, IsGameOver: t.GameOver})
	}
	writeJSON(w, http.StatusOK, struct {
		Status       string      `json:"status"`
		Transactions []pamTxBody `json:"transactions"`
	}{"OK", out})
}

type pamGameRoundTo struct {
	ProviderGameID  string `json:"providerGameId"`
	ProviderRoundID string `json:"providerRoundId"`
	StartTime       string `json:"startTime"`
	EndTime         string `json:"endTime,omitempty"`
}

// pamGameRound answers the player's round of the provider, or
// PAM_ERR_ROUND_NOT_FOUND.
func (s *Sim) pamGameRound(w http.ResponseWriter, r *http.Request, c pamCall) {
	id := r.PathValue("providerGameRoundId")
	note(r.Context(), "gameround %s %s", c.player, id)
	s.store.mu.Lock()
	rd := s.store.st.Rounds[roundKey(c.player, c.provider, id)]
	var out *pamGameRoundTo
	if rd != nil {
		out = &pamGameRoundTo{ProviderGameID: rd.Game, ProviderRoundID: rd.ID, StartTime: rd.Start.Format(time.RFC3339Nano)}
		if rd.Closed {
			out.EndTime = rd.End.Format(time.RFC3339Nano)
		}
	}
	s.store.mu.Unlock()
	if out == nil {
		pamFail(w, http.StatusOK, pamErrRoundNotFound, "no game round "+id, nil)
		return
	}
	pamOK(w, pamResponse{GameRound: out})
}
