package providersim

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/pitboss/pitboss/domain"
)

// startSession gets the game session the run plays in, as the operator
// would start it: the signed launch (GET /v1/launch, docs/signed-launch.md)
// with the client's API key, signed with the client secret when one is
// given. It sets the player's game wallet to start; the session id it
// answers is what the provider is handed (the token, sid or session_id of
// every wallet call). A launch of the provider's own kind (its game URL
// carrying the token) would replace this one function.
func startSession(ctx context.Context, r *run, cur domain.Currency, start domain.Money) (session, error) {
	if r.cfg.SessionToken != "" {
		return startSeamlessSession(ctx, r, cur)
	}
	balance := start.String()
	q := url.Values{"api_key": {r.cfg.APIKey}, "user_id": {r.cfg.Player}, "game_uid": {r.cfg.Game},
		"balance": {balance}, "currency_code": {cur.Code()}, "redirect": {"0"}}
	if r.cfg.ClientSecret != "" {
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		m := hmac.New(sha256.New, []byte(r.cfg.ClientSecret))
		m.Write([]byte(r.cfg.APIKey + "|" + r.cfg.Player + "|" + r.cfg.Game + "|" + balance + "|" + ts))
		q.Set("ts", ts)
		q.Set("sig", hex.EncodeToString(m.Sum(nil)))
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.cfg.BaseURL+"/v1/launch?"+q.Encode(), nil)
	if err != nil {
		return session{}, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := r.http.Do(req)
	if err != nil {
		return session{}, fmt.Errorf("GET /v1/launch: %w", withoutURL(err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return session{}, fmt.Errorf("GET /v1/launch: read the answer: %w", err)
	}
	var a struct {
		OK        bool   `json:"ok"`
		SessionID string `json:"session_id"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &a) != nil || !a.OK || a.SessionID == "" {
		return session{}, fmt.Errorf("GET /v1/launch answered %d: %.300s", resp.StatusCode, b)
	}
	return session{ID: a.SessionID, Player: r.cfg.Player, Game: r.cfg.Game, Currency: cur}, nil
}

// startSeamlessSession launches a seamless client's session: POST
// /api/v1/game/launch with the client's API key and the operator's session
// token of the player (docs/seamless-wallet.md#launch).
func startSeamlessSession(ctx context.Context, r *run, cur domain.Currency) (session, error) {
	body, err := json.Marshal(map[string]string{"provider": r.cfg.Provider, "game_id": r.cfg.Game,
		"player_id": r.cfg.Player, "currency": cur.Code(), "session_token": r.cfg.SessionToken})
	if err != nil {
		return session{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.cfg.BaseURL+"/api/v1/game/launch", bytes.NewReader(body))
	if err != nil {
		return session{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+r.cfg.APIKey)
	resp, err := r.http.Do(req)
	if err != nil {
		return session{}, fmt.Errorf("POST /api/v1/game/launch: %w", withoutURL(err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return session{}, fmt.Errorf("POST /api/v1/game/launch: read the answer: %w", err)
	}
	var a struct {
		Success bool `json:"success"`
		Data    struct {
			SessionID string `json:"session_id"`
		} `json:"data"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &a) != nil || !a.Success || a.Data.SessionID == "" {
		return session{}, fmt.Errorf("POST /api/v1/game/launch answered %d: %.300s", resp.StatusCode, b)
	}
	return session{ID: a.Data.SessionID, Player: r.cfg.Player, Game: r.cfg.Game, Currency: cur}, nil
}
