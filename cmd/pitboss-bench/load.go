package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/providersim"
)

// The load generator speaks the provider wallet protocol
// (docs/provider-wallet.md) the way a game provider does while players
// spin: a bet, and when its answer is in, the round's result — a win
// (zero more often than not) or, one spin in twenty, a rollback of the
// bet. Each call is signed by the v2 scheme (X-Signature: t=<unix
// seconds>,v2=<hex HMAC-SHA256 of "<t>.POST.<path>.<raw body>"> with the
// provider's secret), so the HMAC cost measured is the one providers pay.
// A player never has two spins in flight.

// player is one preloaded wallet with an open game session.
type player struct {
	id, session, currency string
}

// walletClient calls the provider wallet over HTTP.
type walletClient struct {
	http     *http.Client
	base     string
	provider string
	secret   string
	run      string // prefix of every transaction id of this run
	seq      atomic.Int64
	// dialect, when set, speaks a provider's own protocol (BENCH_PROTOCOL)
	// in the sessions of game, instead of ours.
	dialect *providersim.Load
	game    string
	// track: the loops keep every call's ids and latency
	// (recorder.byID).
	track bool
}

func newHTTPClient(conns int) *http.Client {
	return &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns + 16,
		MaxIdleConnsPerHost: conns + 16,
		IdleConnTimeout:     90 * time.Second,
	}}
}

// Kinds of wallet call.
const (
	opBet      = "bet"
	opWin      = "win"
	opRollback = "rollback"
)

// callResult is one call's outcome.
type callResult struct {
	op      string
	start   time.Time // when the call was sent (closed loop) or meant to be (open loop)
	done    time.Time
	code    string // "" when 200 OK; else "HTTP <status> <error code>" or "transport: ..."
	eventID string // our event id from the answer (a new event: not a replay)
	// id is the call's transaction id (the correlation id of the seamless
	// client's wallet call it causes); alt the id that wallet call may
	// carry instead (a refund's refund@<bet id>).
	id, alt string
}

type walletAnswer struct {
	Status        string `json:"status"`
	TransactionID string `json:"transaction_id"`
	Replayed      bool   `json:"replayed"`
}

type errorAnswer struct {
	Error struct {
		Code string `json:"code"`
	} `json:"error"`
}

func (w *walletClient) nextID(kind string) string {
	return w.run + "-" + kind + "-" + strconv.FormatInt(w.seq.Add(1), 36)
}

// call sends one signed wallet call and reads the answer.
func (w *walletClient) call(ctx context.Context, op string, body map[string]any) callResult {
	r := callResult{op: op, start: time.Now()}
	r.id, _ = body["transaction_id"].(string)
	raw, err := json.Marshal(body)
	if err != nil {
		r.code, r.done = "encode: "+err.Error(), time.Now()
		return r
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.base+"/provider/v1/wallet/"+op, bytes.NewReader(raw))
	if err != nil {
		r.code, r.done = "request: "+err.Error(), time.Now()
		return r
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Provider-Id", w.provider)
	req.Header.Set("X-Signature", gateway.SignProviderCall(w.secret, time.Now(),
		gateway.ProviderCall{Method: req.Method, Path: req.URL.EscapedPath(), Body: raw}))
	res, err := w.http.Do(req)
	if err != nil {
		r.done = time.Now()
		switch {
		case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			r.code = "transport: canceled"
		default:
			r.code = "transport: " + shortErr(err)
		}
		return r
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	r.done = time.Now()
	if err != nil {
		r.code = "transport: read answer"
		return r
	}
	if res.StatusCode != http.StatusOK {
		var e errorAnswer
		_ = json.Unmarshal(b, &e)
		r.code = fmt.Sprintf("HTTP %d %s", res.StatusCode, e.Error.Code)
		return r
	}
	var a walletAnswer
	if err := json.Unmarshal(b, &a); err != nil || a.Status != "OK" {
		r.code = "HTTP 200 unreadable answer"
		return r
	}
	if !a.Replayed {
		r.eventID = a.TransactionID
	}
	return r
}

func shortErr(err error) string {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timeout"
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return oe.Op + " " + oe.Err.Error()
	}
	s := err.Error()
	if len(s) > 60 {
		s = s[:60]
	}
	return s
}

// spin plays one round for p: a bet, then a win or a rollback. It returns
// the results of the calls it made (one, if the bet failed).
func (w *walletClient) spin(ctx context.Context, p player, rnd *rand.Rand) (bet, result callResult) {
	if w.dialect != nil {
		return w.dialectSpin(ctx, p, rnd)
	}
	round, betID := w.nextID("r"), w.nextID("b")
	bet = w.call(ctx, opBet, map[string]any{"session_id": p.session, "transaction_id": betID, "round_id": round,
		"amount": "1.00"})
	if bet.code != "" {
		return bet, callResult{}
	}
	if rnd.IntN(20) == 0 {
		return bet, w.call(ctx, opRollback, map[string]any{"session_id": p.session, "transaction_id": w.nextID("rb"),
			"round_id": round, "reference_transaction_id": betID, "round_closed": true})
	}
	return bet, w.call(ctx, opWin, map[string]any{"session_id": p.session, "transaction_id": w.nextID("w"),
		"round_id": round, "reference_transaction_id": betID, "amount": spinWins[rnd.IntN(len(spinWins))], "round_closed": true})
}

// dialectSpin is spin in the provider's own protocol: the same round,
// amounts and odds.
func (w *walletClient) dialectSpin(ctx context.Context, p player, rnd *rand.Rand) (bet, result callResult) {
	round, betID := w.nextID("r"), w.nextID("b")
	bet = w.dialectCall(ctx, opBet, p, providersim.LoadTx{ID: betID, Round: round}, "1.00")
	if bet.code != "" {
		return bet, callResult{}
	}
	if rnd.IntN(20) == 0 {
		return bet, w.dialectCall(ctx, opRollback, p, providersim.LoadTx{ID: w.nextID("rb"), Ref: betID, Round: round, Closed: true}, "")
	}
	return bet, w.dialectCall(ctx, opWin, p, providersim.LoadTx{ID: w.nextID("w"), Ref: betID, Round: round, Closed: true},
		spinWins[rnd.IntN(len(spinWins))])
}

// spinWins are a round's possible wins, zero more often than not.
var spinWins = []string{"0", "0", "0", "0.50", "1.00", "2.00", "5.00"}

// recorder collects one worker's results; recorders are merged after the
// step, so the hot path takes no lock.
type recorder struct {
	hist    map[string]*hdrhistogram.Histogram // by op, and "all"
	errors  map[string]int64
	answers []answerAt
	calls   int64
	first   time.Time
	last    time.Time
	// track keeps every successful call's ids and latency in byID (the
	// seamless step joins them with the operator wallet's own times).
	track bool
	byID  []callLatency
}

// callLatency is one successful call's ids and latency.
type callLatency struct {
	id, alt string
	us      int64
}

// answerAt is when the answer that reported a new event arrived: the
// event was committed before it.
type answerAt struct {
	eventID string
	at      int64 // unix ns
}

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, 120_000_000, 3) } // µs, up to 120 s

func newRecorder() *recorder {
	r := &recorder{hist: map[string]*hdrhistogram.Histogram{}, errors: map[string]int64{}}
	for _, op := range []string{"all", opBet, opWin, opRollback} {
		r.hist[op] = newHist()
	}
	return r
}

func (r *recorder) add(c callResult) {
	if c.op == "" {
		return
	}
	r.calls++
	if r.first.IsZero() || c.start.Before(r.first) {
		r.first = c.start
	}
	if c.done.After(r.last) {
		r.last = c.done
	}
	if c.code != "" {
		r.errors[c.code]++
		return
	}
	us := max(c.done.Sub(c.start).Microseconds(), 1)
	_ = r.hist["all"].RecordValue(us)
	_ = r.hist[c.op].RecordValue(us)
	if c.eventID != "" {
		r.answers = append(r.answers, answerAt{eventID: c.eventID, at: c.done.UnixNano()})
	}
	if r.track {
		r.byID = append(r.byID, callLatency{id: c.id, alt: c.alt, us: us})
	}
}

func (r *recorder) merge(o *recorder) {
	for k, h := range o.hist {
		r.hist[k].Merge(h)
	}
	for k, n := range o.errors {
		r.errors[k] += n
	}
	r.answers = append(r.answers, o.answers...)
	r.byID = append(r.byID, o.byID...)
	r.calls += o.calls
	if !o.first.IsZero() && (r.first.IsZero() || o.first.Before(r.first)) {
		r.first = o.first
	}
	if o.last.After(r.last) {
		r.last = o.last
	}
}

// closedLoop runs conc workers for d, each spinning its own players one
// after another with no pause: the offered load is whatever the service
// answers.
func (w *walletClient) closedLoop(ctx context.Context, players []player, conc int, d time.Duration) *recorder {
	var wg sync.WaitGroup
	recs := make([]*recorder, conc)
	deadline := time.Now().Add(d)
	for i := range conc {
		recs[i] = newRecorder()
		recs[i].track = w.track
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(i), uint64(conc)))
			mine := make([]player, 0, len(players)/conc+1)
			for j := i; j < len(players); j += conc {
				mine = append(mine, players[j])
			}
			if len(mine) == 0 { // more workers than players: share
				mine = append(mine, players[i%len(players)])
			}
			for k := 0; time.Now().Before(deadline) && ctx.Err() == nil; k++ {
				bet, res := w.spin(ctx, mine[k%len(mine)], rnd)
				recs[i].add(bet)
				recs[i].add(res)
			}
		})
	}
	wg.Wait()
	all := newRecorder()
	for _, r := range recs {
		all.merge(r)
	}
	return all
}

// openLoop offers rate wallet calls a second (rate/2 spins) for d,
// whatever the service does: spin i is due at start + i/(rate/2), and its
// bet's latency counts from that due time, not from when it was actually
// sent — so a stall shows in the latency of every spin that had to wait
// for it (no coordinated omission). The round's result is sent when the
// bet's answer arrives, as a provider would, and counts from then. A spin
// waits for a free player (one whose previous spin has ended); that wait
// counts as well.
func (w *walletClient) openLoop(ctx context.Context, players []player, rate float64, d time.Duration) *recorder {
	free := make(chan player, len(players))
	for _, p := range players {
		free <- p
	}
	interval := time.Duration(float64(time.Second) / (rate / 2))
	const shards = 32
	var (
		mus      [shards]sync.Mutex
		recs     [shards]*recorder
		wg       sync.WaitGroup
		dropped  atomic.Int64
		inFlight atomic.Int64
	)
	for i := range recs {
		recs[i] = newRecorder()
		recs[i].track = w.track
	}
	start := time.Now()
	n := int(d / interval)
	for i := range n {
		due := start.Add(time.Duration(i) * interval)
		if wait := time.Until(due); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			break
		}
		if inFlight.Load() >= 20_000 {
			dropped.Add(1) // the service is that far behind: stop piling up
			continue
		}
		inFlight.Add(1)
		wg.Go(func() {
			defer inFlight.Add(-1)
			var p player
			select {
			case p = <-free:
			case <-ctx.Done():
				return
			}
			defer func() { free <- p }()
			rnd := rand.New(rand.NewPCG(uint64(i), 7))
			bet, res := w.spin(ctx, p, rnd)
			bet.start = due
			sh := i % shards
			mus[sh].Lock()
			recs[sh].add(bet)
			recs[sh].add(res)
			mus[sh].Unlock()
		})
	}
	wg.Wait()
	all := newRecorder()
	for _, r := range recs {
		all.merge(r)
	}
	if n := dropped.Load(); n > 0 {
		all.errors["not sent: 20,000 spins already waiting"] += n
	}
	return all
}
