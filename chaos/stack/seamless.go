package stack

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// The seamless form (docs/seamless-wallet.md): a client whose players'
// money stays in its own wallet, an operator simulator here. The same
// Load drives the provider wallet protocol for its players; what differs
// is the setup (the operator funds the players and issues their tokens,
// the launch carries one) and what the checks expect (a bet whose
// debit's outcome was unknown is voided, and refused from then on).

// ParseMinor reads decimal text with at most exp decimals as minor units
// (written here, independently of domain.ParseMoney).
func ParseMinor(s string, exp int) (int64, error) {
	neg := strings.HasPrefix(s, "-")
	whole, frac, _ := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	if len(frac) > exp || whole == "" {
		return 0, fmt.Errorf("amount %q: not a decimal of at most %d decimals", s, exp)
	}
	v, err := strconv.ParseInt(whole+frac+strings.Repeat("0", exp-len(frac)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("amount %q: %w", s, err)
	}
	if neg {
		v = -v
	}
	return v, nil
}

// LaunchSeamless opens a game session for a seamless client's player:
// token is the operator's player token (the launch's session_token).
func (a *API) LaunchSeamless(ctx context.Context, provider, game, player, currency, token string) (string, error) {
	return a.launch(ctx, provider, game, player, currency, token)
}

// SetClientWallet sets a client's wallet mode through the admin API (PUT
// /admin/v1/clients/{id}/wallet); admin carries the admin token.
func SetClientWallet(ctx context.Context, admin *API, client, mode, url, protocol, credential string) error {
	o := admin.Call(ctx, Retry{First: 50 * time.Millisecond, Max: time.Second, GiveUp: time.Minute}, http.MethodPut,
		"/admin/v1/clients/"+client+"/wallet", map[string]string{"mode": mode, "url": url, "protocol": protocol,
			"credential": credential})
	if o.Err != nil || o.Status != http.StatusOK {
		return fmt.Errorf("set the wallet of %s: %v %d %s", client, o.Err, o.Status, o.Body)
	}
	return nil
}

// SetupSeamlessPlayers funds n players at the operator with balance units
// each (their Deposit: the operator's balance at the start), spread over
// currencies, and launches a session for each with the token the operator
// issued.
func SetupSeamlessPlayers(ctx context.Context, api *API, sim *OperatorSim, sb Sandbox, prefix string, n int,
	units int64, currencies []Currency) ([]*Player, error) {
	players := make([]*Player, n)
	var mu sync.Mutex
	var msgs []string
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range n {
		cur := currencies[i%len(currencies)]
		p := &Player{Index: i, ID: fmt.Sprintf("%s-p%d", prefix, i), Currency: cur.Code, Exp: cur.Exp}
		unit := int64(1)
		for range cur.Exp {
			unit *= 10
		}
		p.Deposit = units * unit
		players[i] = p
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			token, err := sim.Fund(ctx, p.ID, p.Currency, FormatMinor(p.Deposit, p.Exp))
			if err == nil {
				p.Session, err = api.LaunchSeamless(ctx, sb.Provider, sb.Game, p.ID, p.Currency, token)
			}
			if err != nil {
				mu.Lock()
				msgs = append(msgs, err.Error())
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(msgs) > 0 {
		return nil, fmt.Errorf("set up seamless players: %s", strings.Join(msgs, "; "))
	}
	return players, nil
}

// FollowUp is one row of GET /admin/v1/seamless/follow-ups.
type FollowUp struct {
	ID        int64  `json:"id"`
	Action    string `json:"action"`
	Kind      string `json:"kind"`
	Move      string `json:"move"`
	MoveID    string `json:"move_id"`
	Ref       string `json:"ref"`
	Amount    string `json:"amount"`
	Attempts  int    `json:"attempts"`
	State     string `json:"state"`
	NextAt    string `json:"next_attempt_at"`
	LastError string `json:"last_error"`
	Outcome   string `json:"outcome"`
	CreatedAt string `json:"created_at"`
	DoneAt    string `json:"settled_at"`
}

// FollowUps lists a client's follow-ups, every page: pending ones only,
// or all.
func FollowUps(ctx context.Context, admin *API, client string, all bool) ([]FollowUp, error) {
	state := "pending"
	if all {
		state = "all"
	}
	var out []FollowUp
	for page := 1; ; page++ {
		o := admin.Call(ctx, Retry{First: 50 * time.Millisecond, Max: time.Second, GiveUp: time.Minute}, http.MethodGet,
			fmt.Sprintf("/admin/v1/seamless/follow-ups?client_id=%s&state=%s&per_page=200&page=%d", client, state, page), nil)
		if o.Err != nil || o.Status != http.StatusOK {
			return nil, fmt.Errorf("list follow-ups: %v %d %s", o.Err, o.Status, o.Body)
		}
		var v struct {
			Data struct {
				FollowUps []FollowUp `json:"follow_ups"`
			} `json:"data"`
		}
		if err := json.Unmarshal(o.Body, &v); err != nil {
			return nil, fmt.Errorf("follow-ups answer %s: %w", o.Body, err)
		}
		out = append(out, v.Data.FollowUps...)
		if len(v.Data.FollowUps) < 200 {
			return out, nil
		}
	}
}

// DrainFollowUps waits until the client has no pending follow-up, polling
// every 200 ms, within; it answers the pending ones when it gives up.
func DrainFollowUps(ctx context.Context, admin *API, client string, within time.Duration) ([]FollowUp, error) {
	deadline := time.Now().Add(within)
	for {
		pending, err := FollowUps(ctx, admin, client, false)
		if err != nil {
			return nil, err
		}
		if len(pending) == 0 {
			return nil, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return pending, fmt.Errorf("%d follow-ups still pending after %v", len(pending), within)
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// LedgerMove is one game event of a seamless player's wallet: what the
// ledger recorded the operator decided.
type LedgerMove struct {
	Type, Player, TxID, Ref, OperatorTxID string
	// Signed is the movement's effect on the player's money in minor
	// units: a bet's negative, a win's and a bet's refund positive.
	Signed int64
}

// moveSign is each game event's sign on the player's money; a tombstone
// (rollback_recorded) moves nothing.
var moveSign = map[string]int64{"wallet.bet_placed.v1": -1, "wallet.win_credited.v1": 1,
	"wallet.bet_rolled_back.v1": 1, "wallet.win_reversed.v1": -1, "wallet.rollback_recorded.v1": 0}

// LedgerMoves reads every game event of the players' wallet streams
// (player:<client>:<player>:<currency>) in order.
func LedgerMoves(ctx context.Context, db *pgxpool.Pool, client string, players []*Player) ([]LedgerMove, error) {
	streams := make([]string, len(players))
	byStream := map[string]*Player{}
	for i, p := range players {
		streams[i] = "player:" + client + ":" + p.ID + ":" + p.Currency
		byStream[streams[i]] = p
	}
	rows, err := db.Query(ctx, `SELECT stream_id, event_type, coalesce(body->'data'->>'external_tx_id', ''),
	       coalesce(body->'data'->>'reference_tx_id', ''), coalesce(body->'data'->>'operator_tx_id', ''),
	       coalesce(body->'data'->>'amount', '0')
	  FROM events WHERE stream_id = ANY($1) ORDER BY position`, streams)
	if err != nil {
		return nil, fmt.Errorf("read the seamless players' events: %w", err)
	}
	defer rows.Close()
	var out []LedgerMove
	for rows.Next() {
		var stream, amount string
		var m LedgerMove
		if err := rows.Scan(&stream, &m.Type, &m.TxID, &m.Ref, &m.OperatorTxID, &amount); err != nil {
			return nil, err
		}
		sign, game := moveSign[m.Type]
		if !game {
			continue
		}
		p := byStream[stream]
		m.Player = p.ID
		v, err := ParseMinor(amount, p.Exp)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", m.Type, m.TxID, err)
		}
		m.Signed = sign * v
		out = append(out, m)
	}
	return out, rows.Err()
}

// SyncMirror books one more round for every player, a bet and a win of
// the same amount (the player's money unchanged), so that each wallet's
// mirror in the ledger takes the operator's balance as it is now: a
// debit voided and cancelled at the operator after a player's last booked
// call is not in the mirror until the next one (docs/seamless-wallet.md,
// "A call, step by step").
func SyncMirror(ctx context.Context, pr *Provider, players []*Player, tag string) error {
	for _, p := range players {
		bet, win := "sync-"+tag+"-bet-"+p.ID, "sync-"+tag+"-win-"+p.ID
		amount := FormatMinor(1, p.Exp)
		for _, call := range []struct {
			op   string
			body map[string]any
		}{
			{"bet", map[string]any{"session_id": p.Session, "transaction_id": bet, "round_id": "r-" + bet, "amount": amount}},
			{"win", map[string]any{"session_id": p.Session, "transaction_id": win, "round_id": "r-" + bet, "amount": amount,
				"reference_transaction_id": bet, "round_closed": true}},
		} {
			raw, _ := json.Marshal(call.body)
			o := pr.Call(ctx, Retry{First: 50 * time.Millisecond, Max: time.Second, GiveUp: time.Minute}, call.op, raw)
			if o.Err != nil || o.Status != http.StatusOK {
				return fmt.Errorf("sync %s of %s: %v %d %s", call.op, p.ID, o.Err, o.Status, o.Body)
			}
		}
	}
	return nil
}
