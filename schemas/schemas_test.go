package schemas_test

import (
	"encoding/json"
	"maps"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/schemas"
)

// ledger applies real domain decisions to a view and numbers the events as
// the event store does, so the bodies are the ones Kafka carries.
type ledger struct {
	t   *testing.T
	v   *domain.View
	pos int64
}

func (l *ledger) apply(ch domain.Change, err error) []byte {
	l.t.Helper()
	if err != nil {
		l.t.Fatal(err)
	}
	e, err := l.v.Apply(ch)
	if err != nil {
		l.t.Fatal(err)
	}
	l.pos++
	e.Position = l.pos
	body, err := domain.EncodeBody(e)
	if err != nil {
		l.t.Fatal(err)
	}
	return body
}

func env() domain.Env {
	return domain.Env{Now: time.Now(), EventID: uuid.Must(uuid.NewV7()).String(),
		Meta: domain.Metadata{RequestID: "req-1", CorrelationID: "corr-1"}}
}

func money(t *testing.T, s string, c domain.Currency) domain.Money {
	t.Helper()
	m, err := domain.ParseMoney(s, c)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// realBodies makes at least one body of every event type, in each of its
// shapes (client or player wallet, with or without optional fields).
func realBodies(t *testing.T) []struct {
	name string
	body []byte
} {
	var out []struct {
		name string
		body []byte
	}
	for _, code := range []string{"EUR", "JPY", "BTC"} {
		c := domain.MustCurrency(code)
		l := &ledger{t: t, v: domain.NewView()}
		add := func(name string, body []byte) {
			out = append(out, struct {
				name string
				body []byte
			}{code + " " + name, body})
		}
		client := domain.ClientTx{Client: "acme", ExternalTxID: "d-client", Currency: c}
		player := func(tx string) domain.ClientTx {
			return domain.ClientTx{Client: "acme", Player: "p.17@x", ExternalTxID: tx, Currency: c, Reason: "test"}
		}
		game := func(tx, round string) domain.GameTx {
			return domain.GameTx{Client: "acme", Player: "p.17@x", Provider: "demo", Game: "book-1", Round: round,
				Session: "gs_1", ExternalTxID: tx, Currency: c}
		}
		add("deposit to the client wallet", l.apply(domain.DecideDeposit(l.v, client, money(t, "1000", c), env())))
		add("deposit to a player", l.apply(domain.DecideDeposit(l.v, player("d-player"), money(t, "100", c), env())))
		add("transfer to the player", l.apply(domain.DecideTransfer(l.v, player("t1"), money(t, "50", c), domain.ToPlayer, env())))
		add("transfer from the player", l.apply(domain.DecideTransfer(l.v, player("t2"), money(t, "20", c), domain.FromPlayer, env())))
		add("withdrawal", l.apply(domain.DecideWithdrawal(l.v, player("w1"), money(t, "1", c), env())))
		add("adjustment up", l.apply(domain.DecideAdjustment(l.v, player("a1"), money(t, "3", c), env())))
		add("adjustment down", l.apply(domain.DecideAdjustment(l.v, player("a2"), money(t, "-2", c), env())))
		add("launch", l.apply(domain.DecideLaunch(l.v, domain.Launch{Client: "acme", Player: "p.17@x", Provider: "demo",
			Game: "book-1", Session: "gs_1", ExternalTxID: "ln_1", Currency: c, ExpiresAt: time.Now().Add(time.Hour)}, env())))
		add("balance sync", l.apply(domain.DecideBalanceSync(l.v, player("s1"), money(t, "200", c),
			domain.GameTx{Provider: "demo", Game: "book-1", Session: "gs_1"}, env())))
		add("balance sync to the same balance", l.apply(domain.DecideBalanceSync(l.v, player("s2"), money(t, "200", c),
			domain.GameTx{}, env())))
		add("bet", l.apply(domain.DecideBet(l.v, game("b1", "r1"), money(t, "10", c), env())))
		promo := game("b-free", "")
		promo.Promo = true
		add("promo bet of zero", l.apply(domain.DecideBet(l.v, promo, domain.Zero(c), env())))
		closing := game("w1", "r1")
		closing.RoundClosed = true
		add("win that names its bet and closes the round", l.apply(domain.DecideWin(l.v, closing, money(t, "25", c), "b1", env())))
		add("win without a round", l.apply(domain.DecideWin(l.v, game("w2", ""), money(t, "0", c), "", env())))
		add("bet 2", l.apply(domain.DecideBet(l.v, game("b2", "r2"), money(t, "5", c), env())))
		add("bet rollback", l.apply(domain.DecideRollback(l.v, game("rb1", "r2"), "b2", env())))
		add("win reversal", l.apply(domain.DecideRollback(l.v, game("rb2", "r1"), "w1", env())))
		add("rollback of a transaction never seen", l.apply(domain.DecideRollback(l.v, game("rb3", ""), "ghost", env())))
		l.apply(domain.DecideBet(l.v, game("b3", "r3"), money(t, "1", c), env()))
		stale := env()
		stale.Now = stale.Now.Add(49 * time.Hour)
		add("the ledger's close of a stale round", l.apply(domain.DecideRoundClose(l.v,
			domain.RoundClose{Client: "acme", Provider: "demo", Round: "r3", After: 48 * time.Hour}, stale)))
		free := game("fb1", "r4")
		free.Promo, free.Campaign, free.Reward = true, "camp-1", "reward-1"
		add("free bet with its campaign and reward", l.apply(domain.DecideBet(l.v, free, domain.Zero(c), env())))
		free.ExternalTxID = "fw1"
		add("free bet's win with its campaign and reward", l.apply(domain.DecideWin(l.v, free, money(t, "3", c), "fb1", env())))
		grant := func(reward string) domain.RewardGrant {
			return domain.RewardGrant{Client: "acme", Player: "p.17@x", Campaign: "spring", Reward: reward,
				Provider: "demo", Game: "book-1", BetValue: money(t, "1", c), FreeBets: 3,
				ValidFrom: env().Now.Add(-time.Hour), ValidUntil: env().Now.Add(time.Hour)}
		}
		withRef := grant("rw-1")
		withRef.ProviderRef = "bonus-54636"
		add("reward granted", l.apply(domain.DecideRewardGrant(l.v, withRef, env())))
		add("reward granted without a provider ref", l.apply(domain.DecideRewardGrant(l.v, grant("rw-2"), env())))
		add("reward cancelled", l.apply(domain.DecideRewardEnd(l.v, domain.RewardEnd{Client: "acme", Reward: "rw-2",
			Reason: "player asked"}, env())))
		spend := game("fb2", "r5")
		spend.Promo, spend.Reward = true, "rw-1"
		add("free bet spending a granted reward", l.apply(domain.DecideBet(l.v, spend, domain.Zero(c), env())))
		later := env()
		later.Now = later.Now.Add(2 * time.Hour)
		add("reward expired", l.apply(domain.DecideRewardEnd(l.v, domain.RewardEnd{Client: "acme", Reward: "rw-1",
			Expire: true, Reason: "expired"}, later)))
		jp := game("jw1", "")
		jp.Jackpot = money(t, "40", c)
		add("win with a jackpot part", l.apply(domain.DecideWin(l.v, jp, money(t, "45", c), "", env())))
		add("reversal of a jackpot win", l.apply(domain.DecideRollback(l.v, game("rb4", ""), "jw1", env())))
	}
	return out
}

func typeOf(t *testing.T, body []byte) string {
	t.Helper()
	var x struct{ Type string }
	if err := json.Unmarshal(body, &x); err != nil {
		t.Fatal(err)
	}
	return x.Type
}

func TestRealEventBodiesMatchTheirSchemas(t *testing.T) {
	t.Parallel()
	set, err := schemas.Compile()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, b := range realBodies(t) {
		typ := typeOf(t, b.body)
		seen[typ] = true
		t.Run(b.name, func(t *testing.T) {
			if err := set.Validate(schemas.Event(typ), b.body); err != nil {
				t.Fatalf("%s\n%s", err, b.body)
			}
		})
	}
	// then every event type has a schema, every event schema a type, and
	// every type a webhook kind
	var files []string
	for _, p := range set.Paths() {
		if strings.HasPrefix(p, "events/") && p != "events/common.schema.json" {
			files = append(files, strings.TrimSuffix(path.Base(p), ".schema.json"))
		}
	}
	slices.Sort(files)
	types := slices.Sorted(maps.Keys(seen))
	if !slices.Equal(files, types) {
		t.Fatalf("schemas for %v, events made of types %v", files, types)
	}
	for _, typ := range types {
		if _, ok := gateway.KindOfEvent(domain.EventType(typ)); !ok {
			t.Fatalf("event type %s has no webhook kind", typ)
		}
	}
}

// TestSchemasRefuseWrongBodies shows the schemas are not vacuous: each
// change to a valid body that breaks the contract is caught.
func TestSchemasRefuseWrongBodies(t *testing.T) {
	t.Parallel()
	set, err := schemas.Compile()
	if err != nil {
		t.Fatal(err)
	}
	var bet, deposit []byte
	for _, b := range realBodies(t) {
		switch b.name {
		case "EUR bet":
			bet = b.body
		case "EUR deposit to the client wallet":
			deposit = b.body
		}
	}
	edit := func(body []byte, f func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		out, _ := json.Marshal(m)
		return out
	}
	data := func(m map[string]any) map[string]any { return m["data"].(map[string]any) }
	tests := []struct {
		name   string
		schema string
		body   []byte
	}{
		{"amount as a JSON number", "wallet.bet_placed.v1", edit(bet, func(m map[string]any) { data(m)["amount"] = 10.0 })},
		{"amount with an exponent", "wallet.bet_placed.v1", edit(bet, func(m map[string]any) { data(m)["amount"] = "1e3" })},
		{"a bet of zero outside promo play", "wallet.bet_placed.v1", edit(bet, func(m map[string]any) { data(m)["amount"] = "0.00" })},
		{"bet without a player", "wallet.bet_placed.v1", edit(bet, func(m map[string]any) { delete(data(m), "player_id") })},
		{"an undocumented field", "wallet.bet_placed.v1", edit(bet, func(m map[string]any) { data(m)["jackpot"] = true })},
		{"a bet on a house account", "wallet.bet_placed.v1", edit(bet, func(m map[string]any) { m["stream_id"] = "house:acme:demo:EUR" })},
		{"one posting", "wallet.bet_placed.v1", edit(bet, func(m map[string]any) { data(m)["postings"] = data(m)["postings"].([]any)[:1] })},
		{"a bet validated as a win", "wallet.win_credited.v1", bet},
		{"no position", "wallet.bet_placed.v1", edit(bet, func(m map[string]any) { delete(m, "position") })},
		{"an event id that is not a UUID", "wallet.bet_placed.v1", edit(bet, func(m map[string]any) { m["id"] = "42" })},
		{"a time that is not UTC RFC 3339", "wallet.bet_placed.v1", edit(bet, func(m map[string]any) { m["occurred_at"] = "yesterday" })},
		{"a negative deposit", "wallet.deposited.v1", edit(deposit, func(m map[string]any) { data(m)["amount"] = "-5.00" })},
		{"a deposit with a direction", "wallet.deposited.v1", edit(deposit, func(m map[string]any) { data(m)["direction"] = "to_player" })},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := set.Validate(schemas.Event(tc.schema), tc.body); err == nil {
				t.Fatalf("accepted: %s", tc.body)
			}
		})
	}
}
