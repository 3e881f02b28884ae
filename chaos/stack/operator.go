package stack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/pitboss/pitboss/internal/freeport"
)

// OperatorSim is `pitboss operator-sim` as a child process: a seamless
// client's own wallet (docs/seamless-wallet.md), on a fixed loopback port
// and a state file, so that a kill -9 and a start again find the same
// players, tokens and transactions where they were. Its admin API
// (/_sim/) sets faults and shows the state.
type OperatorSim struct {
	Proc     *Proc
	Protocol string
	Port     int
	// Token is the wallet API's bearer token (valkyrie-pam) or signing
	// secret (tbb): the client's credential. The admin API takes the same.
	Token     string
	StatePath string
	HTTP      *http.Client
}

// NewOperatorSim returns (does not start) an operator simulator speaking
// protocol, built from bin, its log and state file in dir.
func NewOperatorSim(bin, dir, protocol string) (*OperatorSim, error) {
	port, err := freeport.Port()
	if err != nil {
		return nil, err
	}
	o := &OperatorSim{Protocol: protocol, Port: port, Token: randomHex(20),
		StatePath: filepath.Join(dir, "operator-sim.json"), HTTP: &http.Client{Timeout: 10 * time.Second}}
	cred := filepath.Join(dir, "operator-sim.token")
	if err := os.WriteFile(cred, []byte(o.Token+"\n"), 0o600); err != nil {
		return nil, err
	}
	flag := "--token-file"
	if protocol == "tbb" {
		flag = "--secret-file"
	}
	o.Proc = &Proc{Name: "operator-sim", Path: bin, Dir: dir, LogPath: filepath.Join(dir, "operator-sim.log"),
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")},
		Args: []string{"operator-sim", "--protocol", protocol, "--listen", fmt.Sprintf("127.0.0.1:%d", port),
			flag, cred, "--state", o.StatePath, "--players", "0"}}
	return o, nil
}

// URL is the wallet's address (the client's wallet URL for valkyrie-pam;
// tbb's endpoint is URL + "/operator/wallet").
func (o *OperatorSim) URL() string { return fmt.Sprintf("http://127.0.0.1:%d", o.Port) }

// Start starts the process and waits until its admin API answers.
func (o *OperatorSim) Start(ctx context.Context) error {
	if err := o.Proc.Start(); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := waitFor(wctx, 50*time.Millisecond, func() error {
		if !o.Proc.Running() {
			return errors.New("exited")
		}
		_, err := o.State(wctx)
		return err
	})
	if err != nil {
		return fmt.Errorf("operator-sim did not start: %w\n%s", err, o.Proc.LogTail(20))
	}
	return nil
}

// admin sends one admin API request and decodes a 2xx answer into out.
func (o *OperatorSim) admin(ctx context.Context, method, path string, body, out any) error {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return err
		}
	}
	send := func(ctx context.Context) (Reply, error) {
		var rd io.Reader
		if raw != nil {
			rd = bytes.NewReader(raw)
		}
		req, err := http.NewRequestWithContext(ctx, method, o.URL()+path, rd)
		if err != nil {
			return Reply{}, err
		}
		req.Header.Set("Authorization", "Bearer "+o.Token)
		req.Header.Set("Content-Type", "application/json")
		return do(ctx, o.HTTP, req)
	}
	rep, err := send(ctx)
	// The admin routes are never faulted, but a restart the simulator
	// makes of itself closes every connection for a moment: a GET or a
	// PUT (idempotent) is sent again.
	for deadline := time.Now().Add(15 * time.Second); err != nil && method != http.MethodPost &&
		time.Now().Before(deadline) && ctx.Err() == nil; {
		time.Sleep(100 * time.Millisecond)
		rep, err = send(ctx)
	}
	if err != nil {
		return fmt.Errorf("operator-sim %s %s: %w", method, path, err)
	}
	if rep.Status/100 != 2 {
		return fmt.Errorf("operator-sim %s %s: %d %s", method, path, rep.Status, rep.Body)
	}
	if out == nil {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(rep.Body))
	d.UseNumber()
	return d.Decode(out)
}

// Fund creates the player (or adds to its cash) with balance (decimal
// text) in currency and returns the new player token it issued.
func (o *OperatorSim) Fund(ctx context.Context, player, currency, balance string) (string, error) {
	var v struct {
		Token string `json:"token"`
	}
	err := o.admin(ctx, http.MethodPost, "/_sim/players", map[string]string{"playerId": player, "currency": currency,
		"balance": balance}, &v)
	if err == nil && v.Token == "" {
		err = fmt.Errorf("operator-sim: funding %s issued no token", player)
	}
	return v.Token, err
}

// SimFaults are the simulator's faults on its admin API (operatorsim.Faults
// as JSON, written here independently): a zero field is no fault.
type SimFaults struct {
	Latency          string  `json:"latency,omitempty"`
	Timeout          SimRule `json:"timeout"`
	TimeoutHold      string  `json:"timeoutHold,omitempty"`
	Error5xx         SimRule `json:"error5xx"`
	ErrorStatus      int     `json:"errorStatus,omitempty"`
	LostAnswer       SimRule `json:"lostAnswer"`
	LostAnswerStatus int     `json:"lostAnswerStatus,omitempty"`
	Restart          SimRule `json:"restart"`
	RestartPause     string  `json:"restartPause,omitempty"`
	Seed             uint64  `json:"seed"`
}

// SimRule strikes every Every-th call, or with Probability.
type SimRule struct {
	Probability float64 `json:"probability,omitempty"`
	Every       int     `json:"every,omitempty"`
}

// SetFaults puts f in force (PUT /_sim/faults); the zero SimFaults heals.
func (o *OperatorSim) SetFaults(ctx context.Context, f SimFaults) error {
	return o.admin(ctx, http.MethodPut, "/_sim/faults", f, nil)
}

// Restart asks the simulator to restart itself (POST /_sim/restart): its
// listener and connections closed, the state read back from the file.
func (o *OperatorSim) Restart(ctx context.Context) error {
	return o.admin(ctx, http.MethodPost, "/_sim/restart", nil, nil)
}

// SimState is GET /_sim/state as the checks read it.
type SimState struct {
	Players      []SimPlayer `json:"players"`
	Transactions []SimTx     `json:"transactions"`
	Counts       struct {
		Calls       uint64 `json:"calls"`
		Timeouts    uint64 `json:"timeouts"`
		Errors5xx   uint64 `json:"errors5xx"`
		LostAnswers uint64 `json:"lostAnswers"`
		Restarts    uint64 `json:"restarts"`
	} `json:"counts"`
}

// SimPlayer is a player at the simulator: its balances by currency.
type SimPlayer struct {
	ID       string                `json:"id"`
	Balances map[string]SimBalance `json:"balances"`
}

// SimBalance is one account's balances (decimal numbers).
type SimBalance struct {
	Cash json.Number `json:"cashAmount"`
}

// SimTx is one movement the simulator applied.
type SimTx struct {
	ID           string `json:"id"`
	Key          string `json:"key"`
	Type         string `json:"type"`
	Player       string `json:"playerId"`
	Currency     string `json:"currency"`
	ProviderTxID string `json:"providerTransactionId"`
	BetRef       string `json:"providerBetRef"`
	Undone       bool   `json:"undone"`
	Ref          string `json:"ref"`
	Moved        struct {
		Cash int64 `json:"cash"`
	} `json:"moved"`
}

// State reads GET /_sim/state.
func (o *OperatorSim) State(ctx context.Context) (SimState, error) {
	var s SimState
	err := o.admin(ctx, http.MethodGet, "/_sim/state", nil, &s)
	return s, err
}

// Cash is each player's cash balance in minor units of its currency's
// exp decimals, by player id.
func (s SimState) Cash(players []*Player) (map[string]int64, error) {
	byID := map[string]*Player{}
	for _, p := range players {
		byID[p.ID] = p
	}
	out := map[string]int64{}
	for _, sp := range s.Players {
		p, ok := byID[sp.ID]
		if !ok {
			continue
		}
		b, ok := sp.Balances[p.Currency]
		if !ok {
			return nil, fmt.Errorf("operator-sim: %s has no %s account", p.ID, p.Currency)
		}
		m, err := ParseMinor(b.Cash.String(), p.Exp)
		if err != nil {
			return nil, fmt.Errorf("operator-sim: balance of %s: %w", p.ID, err)
		}
		out[p.ID] = m
	}
	return out, nil
}
