package stack

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Player is one player's game session in one currency.
type Player struct {
	Index    int
	ID       string
	Currency string
	Exp      int // decimals of the currency
	Session  string
	Deposit  int64 // minor units deposited before the load
}

// FormatMinor writes minor units as a decimal with exp decimals (written
// here, independently of domain.FormatMinor).
func FormatMinor(v int64, exp int) string {
	neg := v < 0
	if neg {
		v = -v
	}
	s := fmt.Sprintf("%0*d", exp+1, v)
	if exp > 0 {
		s = s[:len(s)-exp] + "." + s[len(s)-exp:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// Call is one wallet call of the load and what came of it.
type Call struct {
	Phase   string
	Op      string // bet, win or rollback
	TxID    string
	Player  *Player
	Amount  int64 // minor units; for a rollback, the amount it gives back
	Ref     *Call // the bet a win settles or a rollback undoes
	Outcome Outcome
	// EventID is the answer's transaction_id: our id of the event.
	EventID  string
	Replayed bool
}

// Acked is true when the call was answered 200.
func (c *Call) Acked() bool { return c.Outcome.Err == nil && c.Outcome.Status == http.StatusOK }

// Load drives the provider wallet protocol over HTTP: Workers goroutines,
// each owning the players whose index is its number modulo Workers (so a
// player's calls are sequential, as in a real game), at Rate calls a
// second in all (0: as fast as the service answers). Each call is retried
// with the same body until a definitive answer.
type Load struct {
	Provider *Provider
	Players  []*Player
	Workers  int
	Rate     float64
	Retry    Retry
	// Prefix makes transaction ids unique per load.
	Prefix string
	Seed   uint64

	mu    sync.Mutex
	calls []*Call
	open  map[int]*Call // per player: the acked bet not settled yet
	n     int
}

// Calls is a copy of every call made so far.
func (l *Load) Calls() []*Call {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls)
}

// Start runs the load, tagging its calls with phase, until the returned
// stop is called; stop waits for every call in flight to be settled.
func (l *Load) Start(ctx context.Context, phase string) (stop func()) {
	l.mu.Lock()
	if l.open == nil {
		l.open = map[int]*Call{}
	}
	l.mu.Unlock()
	quit := make(chan struct{})
	var wg sync.WaitGroup
	for w := range l.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.worker(ctx, phase, w, quit)
		}()
	}
	var once sync.Once
	return func() {
		once.Do(func() { close(quit) })
		wg.Wait()
	}
}

func (l *Load) worker(ctx context.Context, phase string, w int, quit <-chan struct{}) {
	var mine []*Player
	for _, p := range l.Players {
		if p.Index%l.Workers == w {
			mine = append(mine, p)
		}
	}
	if len(mine) == 0 {
		return
	}
	rng := rand.New(rand.NewPCG(l.Seed, uint64(w)+uint64(time.Now().UnixNano())))
	var tick <-chan time.Time
	if l.Rate > 0 {
		t := time.NewTicker(time.Duration(float64(time.Second) * float64(l.Workers) / l.Rate))
		defer t.Stop()
		tick = t.C
	}
	for i := 0; ; i++ {
		if tick != nil {
			select {
			case <-quit:
				return
			case <-ctx.Done():
				return
			case <-tick:
			}
		} else {
			select {
			case <-quit:
				return
			case <-ctx.Done():
				return
			default:
			}
		}
		l.step(ctx, phase, mine[i%len(mine)], rng)
	}
}

// step makes one call for p: settles its open bet (a win, sometimes a
// rollback) or places a new bet.
func (l *Load) step(ctx context.Context, phase string, p *Player, rng *rand.Rand) {
	l.mu.Lock()
	open := l.open[p.Index]
	l.n++
	id := fmt.Sprintf("%s-%d", l.Prefix, l.n)
	l.mu.Unlock()
	unit := int64(1)
	for range p.Exp {
		unit *= 10
	}
	c := &Call{Phase: phase, TxID: id, Player: p}
	body := map[string]any{"session_id": p.Session, "transaction_id": id}
	switch {
	case open != nil && rng.IntN(10) < 8:
		c.Op, c.Ref = "win", open
		c.Amount = rng.Int64N(2 * open.Amount)
		body["amount"] = FormatMinor(c.Amount, p.Exp)
		body["reference_transaction_id"] = open.TxID
		body["round_id"] = "r-" + open.TxID
		body["round_closed"] = true
	case open != nil:
		c.Op, c.Ref, c.Amount = "rollback", open, open.Amount
		body["reference_transaction_id"] = open.TxID
	default:
		c.Op = "bet"
		// 0.01 .. 5.00 of the currency's unit (at least one minor unit).
		c.Amount = max(1, unit/100) * (1 + rng.Int64N(500))
		body["amount"] = FormatMinor(c.Amount, p.Exp)
		body["round_id"] = "r-" + id
	}
	raw, _ := json.Marshal(body)
	c.Outcome = l.Provider.Call(ctx, l.Retry, c.Op, raw)
	if c.Acked() {
		if a, err := DecodeWallet(c.Outcome.Body); err == nil {
			c.EventID, c.Replayed = a.TransactionID, a.Replayed
		}
	}
	l.mu.Lock()
	l.calls = append(l.calls, c)
	switch {
	case c.Op == "bet" && c.Acked():
		l.open[p.Index] = c
	case c.Op != "bet" && c.Outcome.Definitive():
		delete(l.open, p.Index)
	}
	l.mu.Unlock()
}

// Expected is each player's balance implied by the acknowledged calls.
func Expected(players []*Player, calls []*Call) map[int]int64 {
	bal := map[int]int64{}
	for _, p := range players {
		bal[p.Index] = p.Deposit
	}
	for _, c := range calls {
		if !c.Acked() {
			continue
		}
		switch c.Op {
		case "bet":
			bal[c.Player.Index] -= c.Amount
		case "win", "rollback":
			bal[c.Player.Index] += c.Amount
		}
	}
	return bal
}

// PhaseStats sums up the calls of one phase.
type PhaseStats struct {
	Sent, Attempts, Acked, Rejected, Unanswered int
	MaxWait, P99                                time.Duration
	RejectedCodes                               []string
}

// Stats sums up the calls of phase ("" for every call).
func Stats(calls []*Call, phase string) PhaseStats {
	var s PhaseStats
	var lat []time.Duration
	codes := map[string]int{}
	for _, c := range calls {
		if phase != "" && c.Phase != phase {
			continue
		}
		s.Sent++
		s.Attempts += c.Outcome.Attempts
		switch {
		case c.Acked():
			s.Acked++
		case c.Outcome.Err != nil:
			s.Unanswered++
		default:
			s.Rejected++
			codes[fmt.Sprintf("%d %s", c.Outcome.Status, c.Outcome.Code())]++
		}
		s.MaxWait = max(s.MaxWait, c.Outcome.Finished.Sub(c.Outcome.Started))
		lat = append(lat, c.Outcome.LastAttemptLatency)
	}
	s.P99 = Percentile(lat, 0.99)
	for k, n := range codes {
		s.RejectedCodes = append(s.RejectedCodes, fmt.Sprintf("%s ×%d", k, n))
	}
	slices.Sort(s.RejectedCodes)
	return s
}

// Percentile is the q-quantile (0..1) of ds, 0 for none.
func Percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s)-1) * q)
	return s[i]
}

// SetupPlayers deposits into and launches a session for n players spread
// over currencies, idempotently (ids derive from prefix).
func SetupPlayers(ctx context.Context, api *API, sb Sandbox, prefix string, n int, currencies []Currency) ([]*Player, error) {
	players := make([]*Player, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range n {
		cur := currencies[i%len(currencies)]
		p := &Player{Index: i, ID: fmt.Sprintf("%s-p%d", prefix, i), Currency: cur.Code, Exp: cur.Exp}
		unit := int64(1)
		for range cur.Exp {
			unit *= 10
		}
		p.Deposit = 1_000_000 * unit
		players[i] = p
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := api.Deposit(ctx, "dep-"+p.ID, p.ID, FormatMinor(p.Deposit, p.Exp), p.Currency); err != nil {
				errs <- err
				return
			}
			s, err := api.Launch(ctx, sb.Provider, sb.Game, p.ID, p.Currency)
			if err != nil {
				errs <- err
				return
			}
			p.Session = s
		}()
	}
	wg.Wait()
	close(errs)
	var msgs []string
	for err := range errs {
		msgs = append(msgs, err.Error())
	}
	if len(msgs) > 0 {
		return nil, fmt.Errorf("set up players: %s", strings.Join(msgs, "; "))
	}
	return players, nil
}

// Currency is a code and its decimals.
type Currency struct {
	Code string
	Exp  int
}

// Currencies of the suite: two decimals, none, and eight.
var Currencies = []Currency{{"EUR", 2}, {"JPY", 0}, {"BTC", 8}}
