package modeltest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/kafka"
	"github.com/pitboss/pitboss/adapters/kafka/kafkatest"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/chaos/stack"
)

var currencies = []currency{{"EUR", 2}, {"JPY", 0}, {"BTC", 8}}

// service is one `pitboss serve --roles api,relay,projector` on a fresh
// database and topic of the shared PostgreSQL and Kafka.
type service struct {
	svc  *stack.Service
	db   *pgxpool.Pool
	http *http.Client
}

func startService(t *testing.T) *service {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin, err := stack.Build(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	db, url := pgtest.NewDatabase(t)
	brokers := kafkatest.Brokers(t)
	topic := kafkatest.NewTopic(t, brokers, 6)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = kafka.DeleteTopic(ctx, brokers, topic+".dlq")
	})
	svc, err := stack.NewService(bin, dir, url, brokers, topic)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SetupSandbox(ctx); err != nil { // the demo provider and game
		t.Fatal(err)
	}
	p := svc.Role("pitboss", "api,relay,projector")
	t.Cleanup(func() {
		if err := p.Stop(15 * time.Second); err != nil {
			t.Errorf("stop: %v", err)
		}
		if t.Failed() {
			t.Logf("service log:\n%s", p.LogTail(40))
		}
	})
	if err := svc.StartRole(ctx, p); err != nil {
		t.Fatal(err)
	}
	return &service{svc: svc, db: db, http: stack.NewHTTPClient(2, 30*time.Second)}
}

// seeds are MODEL_SEED alone, or a fixed seed and a fresh one.
func seeds() []uint64 {
	if v := os.Getenv("MODEL_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err == nil {
			return []uint64{n}
		}
	}
	return []uint64{1, uint64(time.Now().UnixNano()) % 1_000_000_000}
}

// TestModel runs seeded random sequences against the service and the
// reference model. Each seed has a client of its own. MODEL_SEED=n
// replays one; MODEL_OPS sets the calls per seed (default 400).
func TestModel(t *testing.T) {
	s := startService(t)
	n := 400
	if v, err := strconv.Atoi(os.Getenv("MODEL_OPS")); err == nil && v > 0 {
		n = v
	}
	for _, seed := range seeds() {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Logf("seed %d, %d calls (replay: MODEL_SEED=%d go test ./modeltest)", seed, n, seed)
			runSeed(t, s, seed, n)
			if t.Failed() {
				t.Logf("replay this sequence with MODEL_SEED=%d", seed)
			}
		})
	}
}

// run is one seed's sequence.
type run struct {
	t       *testing.T
	s       *service
	rng     *rand.Rand
	m       *model
	api     *stack.API
	prov    *stack.Provider
	client  string
	players []string
	session map[string]string // player|currency -> session
	calls   []call            // every call sent, for retries and reused ids
	future  []string          // ids rolled back before they were sent
	n       int
	ctx     context.Context
	answers map[string]int // "op status code" -> count, for the log
}

func runSeed(t *testing.T, s *service, seed uint64, ops int) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r := &run{t: t, s: s, rng: rand.New(rand.NewPCG(seed, 0x5eed)), m: newModel(), session: map[string]string{}, ctx: ctx,
		answers: map[string]int{}}
	r.client = fmt.Sprintf("model-%d-%d", seed, time.Now().UnixNano()%100000)
	if _, err := s.svc.CLI(ctx, "client", "create", "--id", r.client, "--name", "Model test", "--environment", "sandbox"); err != nil {
		t.Fatal(err)
	}
	out, err := s.svc.CLI(ctx, "key", "issue", "--client", r.client, "--scopes", "all", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Key string `json:"key"`
	}
	if err := json.Unmarshal([]byte(out), &k); err != nil || k.Key == "" {
		t.Fatalf("key issue: %v %s", err, out)
	}
	secret, err := os.ReadFile(filepath.Join(s.svc.Dir, "data", "demo-provider.secret"))
	if err != nil {
		t.Fatal(err)
	}
	r.api = &stack.API{Base: s.svc.BaseURL(), Key: k.Key, HTTP: s.http}
	r.prov = &stack.Provider{Base: s.svc.BaseURL(), ID: "demo", Secret: strings.TrimSpace(string(secret)), HTTP: s.http}
	for i := range 6 {
		p := fmt.Sprintf("p%d", i)
		r.players = append(r.players, p)
		for _, c := range currencies {
			sess, err := r.api.Launch(ctx, "demo", "demo-slot", p, c.code)
			if err != nil {
				t.Fatal(err)
			}
			r.session[wallet(p, c)] = sess
			r.send(r.deposit(p, c, r.newID("d"), r.amount(c, 1000, 100000)))
		}
	}
	for range ops {
		if t.Failed() {
			return
		}
		r.send(r.next())
	}
	if t.Failed() {
		return
	}
	r.checkBalances()
	r.checkHistoryAndGGR()
	keys := make([]string, 0, len(r.answers))
	for k := range r.answers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  %-45s %d", k, r.answers[k])
	}
	t.Logf("answers, all as the model said (%d events booked):%s", len(r.m.booked), b.String())
}

func (r *run) newID(prefix string) string {
	r.n++
	return fmt.Sprintf("%s%d", prefix, r.n)
}

// amount is a valid amount of lo..hi whole units' hundredths in c.
func (r *run) amount(c currency, lo, hi int64) int64 {
	v := lo + r.rng.Int64N(hi-lo+1) // hundredths of a unit
	switch {
	case c.exp >= 2:
		for range c.exp - 2 {
			v *= 10
		}
		return v
	default:
		return max(1, v/100)
	}
}

func (r *run) deposit(p string, c currency, id string, minor int64) call {
	return call{op: "deposit", id: id, player: p, cur: c, minor: minor, amount: stack.FormatMinor(minor, c.exp)}
}

// pick returns a random earlier call matching keep, or false.
func (r *run) pick(keep func(call) bool) (call, bool) {
	var cands []call
	for _, c := range r.calls {
		if keep(c) {
			cands = append(cands, c)
		}
	}
	if len(cands) == 0 {
		return call{}, false
	}
	return cands[r.rng.IntN(len(cands))], true
}

// next generates one call.
func (r *run) next() call {
	p := r.players[r.rng.IntN(len(r.players))]
	c := currencies[r.rng.IntN(len(currencies))]
	bal := r.m.bal[wallet(p, c)]
	x := r.rng.IntN(100)
	switch {
	case x < 8:
		d := r.deposit(p, c, r.newID("d"), r.amount(c, 100, 20000))
		r.spice(&d)
		return d
	case x < 38:
		b := call{op: "bet", id: r.newID("b"), player: p, cur: c}
		if len(r.future) > 0 && r.rng.IntN(3) == 0 {
			b.id, r.future = r.future[0], r.future[1:]
		}
		if r.rng.IntN(4) > 0 {
			b.round = "R" + b.id
		}
		switch y := r.rng.IntN(100); {
		case y < 8:
			b.minor = bal + 1 + r.amount(c, 1, 100)
		case y < 11:
			b.minor = 0
		default:
			b.minor = max(1, min(bal/4+1, r.amount(c, 1, 2000)))
		}
		b.amount = stack.FormatMinor(b.minor, c.exp)
		r.spice(&b)
		return b
	case x < 60:
		w := call{op: "win", id: r.newID("w"), player: p, cur: c}
		if len(r.future) > 0 && r.rng.IntN(4) == 0 {
			w.id, r.future = r.future[0], r.future[1:]
		}
		w.minor = r.amount(c, 0, 3000)
		switch y := r.rng.IntN(10); {
		case y < 6:
			if b, ok := r.pick(func(k call) bool { return k.op == "bet" && k.player == p && k.cur == c }); ok {
				w.ref, w.round = b.id, b.round
			}
		case y < 7:
			if b, ok := r.pick(func(k call) bool { return k.op == "bet" && k.player != p && k.cur == c }); ok {
				w.ref = b.id
			} else if b, ok := r.pick(func(k call) bool { return k.op == "bet" && k.player == p && k.cur != c }); ok {
				w.ref = b.id // the player's bet in another currency
			}
		case y < 8:
			w.ref = "nobet" + strconv.Itoa(r.rng.IntN(1000))
		case y < 9:
			if b, ok := r.pick(func(k call) bool { return k.op == "bet" && k.player == p && k.cur == c && k.round != "" }); ok {
				w.round = b.round // no reference: the round decides
			}
		}
		w.amount = stack.FormatMinor(w.minor, c.exp)
		r.spice(&w)
		return w
	case x < 78:
		rb := call{op: "rollback", id: r.newID("r"), player: p, cur: c}
		switch y := r.rng.IntN(10); {
		case y < 5:
			if o, ok := r.pick(func(k call) bool { return (k.op == "bet" || k.op == "win") && k.player == p && k.cur == c }); ok {
				rb.ref = o.id
			}
		case y < 6:
			if o, ok := r.pick(func(k call) bool { return (k.op == "bet" || k.op == "win") && (k.player != p || k.cur != c) }); ok {
				rb.ref = o.id // another player's, or another currency's
			}
		case y < 7:
			if o, ok := r.pick(func(k call) bool { return k.op == "rollback" && k.player == p && k.cur == c }); ok {
				rb.ref = o.id
			}
		case y < 8:
			rb.ref = rb.id
		}
		if rb.ref == "" { // a transaction that has not arrived (yet)
			rb.ref = r.newID("f")
			r.future = append(r.future, rb.ref)
		}
		return rb
	case x < 93:
		if old, ok := r.pick(func(call) bool { return true }); ok {
			return old // a retry: the same request again
		}
	default:
		if old, ok := r.pick(func(k call) bool { return k.op != "deposit" }); ok {
			// the same id with another payload
			alt := old
			if old.op == "rollback" || r.rng.IntN(2) == 0 {
				alt.op, alt.ref, alt.minor = "bet", "", r.amount(c, 1, 500)
				if old.op == "bet" {
					alt.op = "win"
				}
			} else {
				alt.minor = old.minor + 1
			}
			alt.amount, alt.badAmt = stack.FormatMinor(alt.minor, alt.cur.exp), ""
			return alt
		}
	}
	return r.deposit(p, c, r.newID("d"), r.amount(c, 100, 20000))
}

// spice sometimes writes the amount differently: trailing zeros (the same
// amount), too many decimals, or negative.
func (r *run) spice(c *call) {
	switch y := r.rng.IntN(40); {
	case y == 0:
		c.amount += map[bool]string{true: "0", false: ".0"}[c.cur.exp > 0]
	case y == 1:
		c.amount += map[bool]string{true: "1", false: ".5"}[c.cur.exp > 0]
		c.badAmt = "AMOUNT_TOO_PRECISE"
	case y == 2 && c.minor > 0:
		c.amount = "-" + c.amount
		c.minor = -c.minor
	}
}

// send makes the call on the service and on the model and compares.
func (r *run) send(c call) {
	t := r.t
	t.Helper()
	r.calls = append(r.calls, c)
	want := r.m.apply(c)
	var rep stack.Reply
	var o stack.Outcome
	if c.op == "deposit" {
		o = r.api.Call(r.ctx, stack.DefaultRetry, http.MethodPost, "/api/v1/transactions", map[string]any{"type": "deposit",
			"transaction_id": c.id, "player_id": c.player, "amount": json.RawMessage(c.amount), "currency": c.cur.code})
	} else {
		body := map[string]any{"session_id": r.session[wallet(c.player, c.cur)], "transaction_id": c.id}
		if c.op != "rollback" {
			body["amount"] = json.RawMessage(strconv.Quote(c.amount))
		}
		if c.round != "" {
			body["round_id"] = c.round
		}
		if c.ref != "" {
			body["reference_transaction_id"] = c.ref
		}
		raw, _ := json.Marshal(body)
		o = r.prov.Call(r.ctx, stack.DefaultRetry, c.op, raw)
	}
	rep = o.Reply
	if o.Err != nil {
		t.Fatalf("%s %s: no definitive answer: %v", c.op, c.id, o.Err)
	}
	what := fmt.Sprintf("call %d: %s %s (player %s, %s, amount %q, ref %q, round %q)", len(r.calls), c.op, c.id, c.player,
		c.cur.code, c.amount, c.ref, c.round)
	if rep.Status != want.status || rep.Code() != want.code {
		t.Fatalf("%s: answered %d %s, the model says %d %s\n%s", what, rep.Status, rep.Code(), want.status, want.code, rep.Body)
	}
	key := fmt.Sprintf("%s %d %s", c.op, want.status, want.code)
	if want.replayed {
		key += " (replay)"
	}
	r.answers[key]++
	if want.status != http.StatusOK {
		return
	}
	var got struct {
		id, balance string
		replayed    bool
	}
	if c.op == "deposit" {
		var v struct {
			Data struct {
				TransactionID string      `json:"transaction_id"`
				BalanceAfter  json.Number `json:"balance_after"`
				Replayed      bool        `json:"replayed"`
			} `json:"data"`
		}
		d := json.NewDecoder(strings.NewReader(string(rep.Body)))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			t.Fatalf("%s: %v %s", what, err, rep.Body)
		}
		got.id, got.balance, got.replayed = v.Data.TransactionID, v.Data.BalanceAfter.String(), v.Data.Replayed
	} else {
		a, err := stack.DecodeWallet(rep.Body)
		if err != nil {
			t.Fatalf("%s: %v %s", what, err, rep.Body)
		}
		got.id, got.balance, got.replayed = a.TransactionID, a.Balance.String(), a.Replayed
	}
	if exp := stack.FormatMinor(want.balance, c.cur.exp); got.balance != exp || got.replayed != want.replayed {
		t.Fatalf("%s: balance %s replayed %v, the model says %s replayed %v\n%s", what, got.balance, got.replayed, exp,
			want.replayed, rep.Body)
	}
	if want.eventRef.eventID == "" && !want.replayed {
		want.eventRef.eventID = got.id
	} else if got.id != want.eventRef.eventID {
		t.Fatalf("%s: transaction_id %s, the original was %s", what, got.id, want.eventRef.eventID)
	}
}

func (r *run) checkBalances() {
	for _, p := range r.players {
		o := r.api.Call(r.ctx, stack.DefaultRetry, http.MethodGet, "/api/v1/wallet/balance?player_id="+p, nil)
		got, err := stack.WalletBalances(o.Body)
		if err != nil || o.Status != http.StatusOK {
			r.t.Fatalf("balance of %s: %v %d %s", p, err, o.Status, o.Body)
		}
		for _, c := range currencies {
			if exp := stack.FormatMinor(r.m.bal[wallet(p, c)], c.exp); got[c.code] != exp {
				r.t.Errorf("balance of %s in %s: %s, the model says %s", p, c.code, got[c.code], exp)
			}
		}
	}
}

// checkHistoryAndGGR compares the read models (after they reached the
// head) with the model: every booked transaction in the history with its
// type, signed amount, status and balance after; the GGR per currency.
func (r *run) checkHistoryAndGGR() {
	var head int64
	if err := r.s.db.QueryRow(r.ctx, `SELECT max(position) FROM events`).Scan(&head); err != nil {
		r.t.Fatal(err)
	}
	retry := stack.Retry{First: 100 * time.Millisecond, Max: time.Second, GiveUp: 2 * time.Minute}
	type item struct {
		ID           string      `json:"id"`
		Type         string      `json:"type"`
		Amount       json.Number `json:"amount"`
		Currency     string      `json:"currency"`
		Status       string      `json:"status"`
		BalanceAfter json.Number `json:"balance_after"`
		PlayerID     *string     `json:"player_id"`
	}
	got := map[string]item{}
	for page := 1; ; page++ {
		o := r.api.Call(r.ctx, retry, http.MethodGet,
			fmt.Sprintf("/api/v1/transactions?per_page=500&page=%d&min_position=%d", page, head), nil)
		var v struct {
			Data       []item `json:"data"`
			Pagination struct {
				Total int64 `json:"total"`
			} `json:"pagination"`
		}
		d := json.NewDecoder(strings.NewReader(string(o.Body)))
		d.UseNumber()
		if err := d.Decode(&v); err != nil || o.Status != http.StatusOK {
			r.t.Fatalf("history page %d: %v %d %s", page, err, o.Status, o.Body)
		}
		for _, it := range v.Data {
			if it.Type != "launch" && it.Type != "game_result" {
				got[it.ID] = it
			}
		}
		if len(v.Data) < 500 {
			break
		}
	}
	var bad []string
	for _, b := range r.m.booked {
		it, ok := got[b.eventID]
		exp := item{ID: b.eventID, Type: b.histType, Amount: json.Number(stack.FormatMinor(b.signed, b.cur.exp)),
			Currency: b.cur.code, Status: b.status(), BalanceAfter: json.Number(stack.FormatMinor(b.balance, b.cur.exp))}
		it.PlayerID = nil
		if !ok || it != exp {
			bad = append(bad, fmt.Sprintf("%s %s: history %+v, the model says %+v", b.kind, b.id, it, exp))
		}
		delete(got, b.eventID)
	}
	for id, it := range got {
		bad = append(bad, fmt.Sprintf("history has %s %+v the model never booked", id, it))
	}
	if len(bad) > 0 {
		r.t.Errorf("%d history rows differ:\n  %s", len(bad), strings.Join(bad[:min(len(bad), 10)], "\n  "))
	}

	o := r.api.Call(r.ctx, retry, http.MethodGet, fmt.Sprintf("/api/v1/reports/ggr?min_position=%d", head), nil)
	var v struct {
		Data []struct {
			Currency     string      `json:"currency"`
			Bets         json.Number `json:"bets"`
			BetRefunds   json.Number `json:"bet_refunds"`
			Wins         json.Number `json:"wins"`
			WinReversals json.Number `json:"win_reversals"`
			GGR          json.Number `json:"ggr"`
			Rounds       int64       `json:"rounds"`
			Players      int64       `json:"players"`
		} `json:"data"`
	}
	d := json.NewDecoder(strings.NewReader(string(o.Body)))
	d.UseNumber()
	if err := d.Decode(&v); err != nil || o.Status != http.StatusOK {
		r.t.Fatalf("ggr: %v %d %s", err, o.Status, o.Body)
	}
	seen := map[string]bool{}
	for _, row := range v.Data {
		seen[row.Currency] = true
		var c currency
		for _, x := range currencies {
			if x.code == row.Currency {
				c = x
			}
		}
		g := r.m.g(c)
		f := func(n int64) string { return stack.FormatMinor(n, c.exp) }
		gotS := fmt.Sprintf("bets %s refunds %s wins %s reversals %s ggr %s rounds %d players %d", row.Bets, row.BetRefunds,
			row.Wins, row.WinReversals, row.GGR, row.Rounds, row.Players)
		want := fmt.Sprintf("bets %s refunds %s wins %s reversals %s ggr %s rounds %d players %d", f(g.bets), f(g.refunds),
			f(g.wins), f(g.reversals), f(g.bets-g.refunds-(g.wins-g.reversals)), len(r.m.roundsW[c.code]),
			len(r.m.betters[c.code]))
		if gotS != want {
			r.t.Errorf("GGR %s: %s\n            the model says %s", row.Currency, gotS, want)
		}
	}
	for code, g := range r.m.ggr {
		if !seen[code] && (g.bets != 0 || g.wins != 0) {
			r.t.Errorf("GGR has no row for %s", code)
		}
	}
}
