package providersim

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"sync"
)

// CaletaGamesAPI plays Caleta's side of its Games API game list (Caleta
// Gaming System API, Operator's Guide 1.5: POST /api/game/list, body
// game_list_body {operator_id}): what `pitboss catalog sync` reads. It
// checks the request as Caleta would — the body's X-Auth-Signature, base64
// RSA-SHA256 (PKCS #1 v1.5), against the operator's public key, and the
// operator_id — and answers the games it holds, which a test changes
// between syncs (SetGames). Serve it with net/http (httptest on loopback).
type CaletaGamesAPI struct {
	operatorID string
	key        *rsa.PublicKey

	mu      sync.Mutex
	games   []CaletaGame
	calls   int
	refused int
	status  int // answer every call with this status when not 0
}

// CaletaGame is the document's Game, as the game list answers it.
type CaletaGame struct {
	URLThumb         string   `json:"url_thumb"`
	URLBackground    string   `json:"url_background"`
	Product          string   `json:"product"`
	Platforms        []string `json:"platforms"`
	Name             string   `json:"name"`
	GameID           int      `json:"game_id"`
	GameCode         string   `json:"game_code"`
	Enabled          bool     `json:"enabled"`
	Category         string   `json:"category"`
	BlockedCountries []string `json:"blocked_countries"`
}

// NewCaletaGamesAPI serves games to the operator operatorID, whose
// requests verify with key (the public half of the operator's launch key).
func NewCaletaGamesAPI(operatorID string, key *rsa.PublicKey, games []CaletaGame) *CaletaGamesAPI {
	return &CaletaGamesAPI{operatorID: operatorID, key: key, games: slices.Clone(games)}
}

// CaletaSampleGames is a small list in the document's shape: slots, a
// live table, a blackjack blocked in two countries, a game Caleta has
// disabled.
func CaletaSampleGames() []CaletaGame {
	game := func(id int, code, name, category string, enabled bool, blocked ...string) CaletaGame {
		return CaletaGame{URLThumb: "https://games.caleta.example/" + code + "/thumb.png",
			URLBackground: "https://games.caleta.example/" + code + "/bg.png", Product: "Caleta",
			Platforms: []string{"GPL_DESKTOP", "GPL_MOBILE"}, Name: name, GameID: id, GameCode: code, Enabled: enabled,
			Category: category, BlockedCountries: append([]string{}, blocked...)}
	}
	return []CaletaGame{
		game(1, "cg_torchoffire", "Torch of Fire", "Video Slots", true),
		game(2, "cg_magicforest", "Magic Forest", "Jackpot Slots", true),
		game(3, "cg_liveroulette", "Live Roulette", "Live Roulette", true),
		game(4, "cg_blackjack", "Blackjack Classic", "Blackjack", true, "PL", "BG"),
		game(5, "cg_oldbingo", "Old Bingo", "Bingo", false),
	}
}

// SetGames replaces the list the next calls answer.
func (a *CaletaGamesAPI) SetGames(games []CaletaGame) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.games = slices.Clone(games)
}

// FailWith makes every call answer status (0: serve again), as an
// endpoint in trouble would.
func (a *CaletaGamesAPI) FailWith(status int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.status = status
}

// Calls counts the calls made to the game list; Refused those refused for
// their signature or operator.
func (a *CaletaGamesAPI) Calls() (calls, refused int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.calls, a.refused
}

type caletaGamesError struct {
	Error string `json:"error"`
}

func (a *CaletaGamesAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	answer := func(status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	if r.URL.Path != "/api/game/list" || r.Method != http.MethodPost {
		answer(http.StatusNotFound, caletaGamesError{"no such call: " + r.Method + " " + r.URL.Path})
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	a.mu.Lock()
	a.calls++
	status, games := a.status, slices.Clone(a.games)
	a.mu.Unlock()
	if status != 0 {
		answer(status, caletaGamesError{http.StatusText(status)})
		return
	}
	refuse := func(status int, msg string) {
		a.mu.Lock()
		a.refused++
		a.mu.Unlock()
		answer(status, caletaGamesError{msg})
	}
	if err != nil {
		refuse(http.StatusBadRequest, "the body could not be read")
		return
	}
	if !a.signed(r.Header.Get("X-Auth-Signature"), body) {
		refuse(http.StatusUnauthorized, "Invalid signature")
		return
	}
	var req struct {
		OperatorID *string `json:"operator_id"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || req.OperatorID == nil {
		refuse(http.StatusBadRequest, "the body is not the document's game_list_body {operator_id}")
		return
	}
	if *req.OperatorID != a.operatorID {
		refuse(http.StatusNotFound, "The operator_id does not correspond to any existing Operator.")
		return
	}
	answer(http.StatusOK, games)
}

// signed verifies sig, the standard base64 of the RSA-SHA256 signature of
// body.
func (a *CaletaGamesAPI) signed(sig string, body []byte) bool {
	raw, err := base64.StdEncoding.DecodeString(sig)
	if err != nil || sig == "" {
		return false
	}
	sum := sha256.Sum256(body)
	return rsa.VerifyPKCS1v15(a.key, crypto.SHA256, sum[:], raw) == nil
}
