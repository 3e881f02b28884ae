package operatorsim

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// The admin API, under /_sim/, every route behind "Authorization: Bearer
// <admin token>"; never touched by the fault injection:
//
//	GET  /_sim/state          players, balances, tokens, transactions, faults, counts
//	GET  /_sim/players/{id}   one player
//	POST /_sim/players        {"playerId","currency","balance"[,"bonus","promo"]}: create or fund, issue a token
//	GET  /_sim/faults         the faults in force
//	PUT  /_sim/faults         set them (Faults as JSON, durations as "5ms")
//	POST /_sim/restart        restart now (answered 202 first)
func (s *Sim) adminRoutes(mux *http.ServeMux) {
	mux.Handle("GET /_sim/state", s.admin(s.adminState))
	mux.Handle("GET /_sim/players/{id}", s.admin(s.adminPlayer))
	mux.Handle("POST /_sim/players", s.admin(s.adminFund))
	mux.Handle("GET /_sim/faults", s.admin(func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, s.Faults())
	}))
	mux.Handle("PUT /_sim/faults", s.admin(s.adminSetFaults))
	mux.Handle("POST /_sim/restart", s.admin(s.adminRestart))
}

func (s *Sim) admin(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || !gateway.SameSecret(strings.TrimSpace(tok), s.cfg.AdminToken) {
			adminError(w, http.StatusUnauthorized, "Authorization: Bearer does not carry the admin token")
			return
		}
		s.log.Info("admin", "method", r.Method, "path", r.URL.Path)
		h(w, r)
	})
}

func adminError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// playerView is a player on the admin API: balances as JSON numbers with
// the currency's decimals.
type playerView struct {
	ID       string                `json:"id"`
	Balances map[string]pamBalance `json:"balances"`
	Tokens   []Token               `json:"tokens"`
}

func viewPlayer(p Player) playerView {
	v := playerView{ID: p.ID, Balances: make(map[string]pamBalance, len(p.Accounts)), Tokens: p.Tokens}
	for code, a := range p.Accounts {
		cur, err := domain.ParseCurrency(code)
		if err != nil {
			continue
		}
		v.Balances[code] = pamAmounts(a, cur)
	}
	return v
}

// stateView is GET /_sim/state.
type stateView struct {
	Protocol     string        `json:"protocol"`
	Players      []playerView  `json:"players"`
	Transactions []Transaction `json:"transactions"`
	Faults       Faults        `json:"faults"`
	Counts       Counts        `json:"counts"`
}

func (s *Sim) adminState(w http.ResponseWriter, _ *http.Request) {
	v := stateView{Protocol: s.cfg.Protocol, Transactions: s.Transactions(), Faults: s.Faults(), Counts: s.Counts()}
	for _, p := range s.Players() {
		v.Players = append(v.Players, viewPlayer(p))
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Sim) adminPlayer(w http.ResponseWriter, r *http.Request) {
	p, ok := s.Player(r.PathValue("id"))
	if !ok {
		adminError(w, http.StatusNotFound, "no player "+r.PathValue("id"))
		return
	}
	writeJSON(w, http.StatusOK, viewPlayer(p))
}

// fundRequest is POST /_sim/players: amounts as decimal text or numbers.
type fundRequest struct {
	PlayerID string            `json:"playerId"`
	Currency string            `json:"currency"`
	Balance  domain.AmountText `json:"balance"`
	Bonus    domain.AmountText `json:"bonus"`
	Promo    domain.AmountText `json:"promo"`
}

func (s *Sim) adminFund(w http.ResponseWriter, r *http.Request) {
	var req fundRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, maxBody)).Decode(&req); err != nil {
		adminError(w, http.StatusBadRequest, "body: "+err.Error())
		return
	}
	tok, err := s.Fund(req.PlayerID, req.Currency, string(req.Balance), string(req.Bonus), string(req.Promo))
	if err != nil {
		adminError(w, http.StatusBadRequest, err.Error())
		return
	}
	p, _ := s.Player(req.PlayerID)
	writeJSON(w, http.StatusOK, struct {
		Token  string     `json:"token"`
		Player playerView `json:"player"`
	}{tok, viewPlayer(p)})
}

func (s *Sim) adminSetFaults(w http.ResponseWriter, r *http.Request) {
	var f Faults
	if err := json.NewDecoder(io.LimitReader(r.Body, maxBody)).Decode(&f); err != nil {
		adminError(w, http.StatusBadRequest, "body: "+err.Error())
		return
	}
	if err := s.SetFaults(f); err != nil {
		adminError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, s.Faults())
}

// adminRestart answers first (flushed), then restarts: the restart
// closes this connection too.
func (s *Sim) adminRestart(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusAccepted, map[string]string{"restart": "started"})
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	s.restartLater()
}
