package forwarder_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/internal/eventually"
	"github.com/pitboss/pitboss/schemas"
)

func TestForwardedCallbacksAreRetriedSignedAndInOrder(t *testing.T) {
	t.Parallel()
	h := startHarness(t, harnessConfig{schedule: fast(10), timeout: 2 * time.Second, private: gateway.PrivateTargetsAll})
	// given a receiver that fails the first three deliveries, then accepts
	rs := newReceiver(t, func(n int, _ request) (int, time.Duration) {
		if n <= 3 {
			return http.StatusInternalServerError, 0
		}
		return http.StatusOK, 0
	})
	secret := h.client(t, "acme", rs.URL+"/pitboss/callback")

	// when a player deposits (not game activity), bets, wins, bets and has
	// the second bet rolled back
	h.deposit(t, "acme", "p1", "dep-1", "100.00")
	bet := h.bet(t, "acme", "p1", "b1", "r1", "10.00")
	win := h.win(t, "acme", "p1", "w1", "r1", "25.50", "b1")
	h.bet(t, "acme", "p1", "b2", "r2", "5.00")
	rb := h.rollback(t, "acme", "p1", "rb1", "r2", "b2")
	// and, as an end marker, one more bet: a player's callbacks are sent in
	// order, so once the marker is delivered everything before it has come
	h.bet(t, "acme", "p1", "end", "r3", "1.00")

	// then four callbacks arrive, in the order they happened, and nothing more
	eventually.True(t, 60*time.Second, "the end marker delivered", func() bool {
		ok := rs.succeeded()
		return len(ok) > 0 && ok[len(ok)-1].json(t)["external_transaction_id"] == "end"
	})
	all, ok := rs.requests(), rs.succeeded()
	all, ok = all[:len(all)-1], ok[:len(ok)-1] // without the marker
	if len(ok) != 4 || len(all) != 7 {
		t.Fatalf("%d requests, %d succeeded before the end marker; want 7 and 4 (three failures first)", len(all), len(ok))
	}
	wantOrder := []string{"b1", "w1", "b2", "rb1"}
	for i, r := range ok {
		if got := r.json(t)["external_transaction_id"]; got != wantOrder[i] {
			t.Fatalf("callback %d is for %v, want %s (order %v)", i+1, got, wantOrder[i], wantOrder)
		}
	}
	// and the three failures were the first callback, retried with the same idempotency key
	for i, r := range all[:4] {
		if got := r.json(t)["external_transaction_id"]; got != "b1" {
			t.Fatalf("request %d is for %v before b1 succeeded", i+1, got)
		}
		if r.header.Get("Idempotency-Key") != bet.EventID+":callback" {
			t.Fatalf("request %d Idempotency-Key %q, want %s:callback", i+1, r.header.Get("Idempotency-Key"), bet.EventID)
		}
		if r.header.Get("X-Pitboss-Attempt") != fmt.Sprint(i+1) {
			t.Fatalf("request %d X-Pitboss-Attempt %q", i+1, r.header.Get("X-Pitboss-Attempt"))
		}
	}
	// and every request is signed with the client's callback secret and
	// matches the published schema
	for _, r := range all {
		verifySignature(t, r, secret)
		conforms(t, schemas.Callback, r.body)
	}

	// and the payloads carry exact amounts as JSON numbers
	tests := []struct {
		name                                 string
		r                                    request
		bet, win, credit, balance, reference string
		txID                                 string
	}{
		{"bet", ok[0], "10.00", "0.00", "-10.00", "90.00", "", bet.EventID},
		{"win", ok[1], "0.00", "25.50", "25.50", "115.50", "b1", win.EventID},
		{"bet 2", ok[2], "5.00", "0.00", "-5.00", "110.50", "", ""},
		{"rollback of bet 2", ok[3], "-5.00", "0.00", "5.00", "115.50", "b2", rb.EventID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for field, want := range map[string]string{"bet_amount": tc.bet, "win_amount": tc.win,
				"credit_amount": tc.credit, "balance_after": tc.balance} {
				if got := tc.r.raw(t, field); got != want {
					t.Fatalf("%s = %s, want the JSON number %s", field, got, want)
				}
			}
			m := tc.r.json(t)
			if m["member_account"] != "p1" || m["game_uid"] != "book-of-tests" || m["currency"] != "EUR" ||
				m["provider"] != "demo" || m["stream_id"] != "player:acme:p1:EUR" {
				t.Fatalf("payload %s", tc.r.body)
			}
			if tc.reference != "" && m["reference_transaction_id"] != tc.reference {
				t.Fatalf("reference_transaction_id %v, want %s", m["reference_transaction_id"], tc.reference)
			}
			if tc.txID != "" && (m["transaction_id"] != tc.txID || m["event_id"] != tc.txID) {
				t.Fatalf("transaction_id %v event_id %v, want %s", m["transaction_id"], m["event_id"], tc.txID)
			}
		})
	}

	// and the delivery log shows three failed attempts and one success
	list, total, err := h.store.ListDeliveries(h.ctx, "acme", gateway.DeliveryFilter{EventID: bet.EventID, PerPage: 10})
	if err != nil || total != 1 {
		t.Fatalf("deliveries of the first bet: %d, %v", total, err)
	}
	d := list[0]
	if d.State != gateway.DeliverySucceeded || d.Attempts != 4 || len(d.Log) != 4 || d.DeliveredAt == nil {
		t.Fatalf("delivery %+v", d)
	}
	for i, a := range d.Log {
		wantStatus := 500
		if i == 3 {
			wantStatus = 200
		}
		if a.Attempt != i+1 || a.StatusCode != wantStatus || a.URL != rs.URL+"/pitboss/callback" ||
			(wantStatus == 500) != (a.Error != "") || a.Excerpt == "" || a.Latency <= 0 {
			t.Fatalf("log entry %d: %+v", i+1, a)
		}
	}
	// The receiver has the end marker as soon as it answered; the worker
	// records the delivery as succeeded right after: wait for that.
	var succeeded []gateway.Delivery
	eventually.True(t, 60*time.Second, "the end marker's delivery recorded", func() bool {
		succeeded, _, _ = h.store.ListDeliveries(h.ctx, "acme", gateway.DeliveryFilter{State: gateway.DeliverySucceeded, PerPage: 10})
		return len(succeeded) >= 5
	})
	if len(succeeded) != 5 {
		t.Fatalf("%d succeeded deliveries, want 4 and the end marker (the deposit is not forwarded)", len(succeeded))
	}
}

func TestFailingPlayerDoesNotBlockOthersThenParksAndResends(t *testing.T) {
	t.Parallel()
	h := startHarness(t, harnessConfig{schedule: fast(3), timeout: 2 * time.Second, private: gateway.PrivateTargetsAll})
	var acceptA atomic.Bool
	rs := newReceiver(t, func(_ int, r request) (int, time.Duration) {
		if strings.Contains(string(r.body), `"member_account":"alice"`) && !acceptA.Load() {
			return http.StatusServiceUnavailable, 0
		}
		return http.StatusOK, 0
	})
	h.client(t, "acme", rs.URL)
	h.deposit(t, "acme", "alice", "dep-a", "50.00")
	h.deposit(t, "acme", "bob", "dep-b", "50.00")

	// given alice's receiver keeps failing
	aliceBet := h.bet(t, "acme", "alice", "a1", "", "1.00")
	// when bob plays meanwhile
	for i := range 3 {
		h.bet(t, "acme", "bob", fmt.Sprintf("b%d", i), "", "1.00")
	}
	// then bob's callbacks are delivered
	eventually.True(t, 60*time.Second, "bob's three callbacks", func() bool {
		n := 0
		for _, r := range rs.succeeded() {
			if r.json(t)["member_account"] == "bob" {
				n++
			}
		}
		return n == 3
	})
	// and alice's is parked after three attempts
	var parkedID string
	eventually.True(t, 30*time.Second, "alice's callback parked", func() bool {
		list, _, err := h.store.ListDeliveries(h.ctx, "acme", gateway.DeliveryFilter{State: gateway.DeliveryParked, PerPage: 10})
		if err != nil || len(list) != 1 {
			return false
		}
		parkedID = list[0].ID
		return list[0].EventID == aliceBet.EventID && list[0].Attempts == 3 && len(list[0].Log) == 3
	})
	// and not tried again: her next callback, an end marker, becomes the
	// head of her queue only once the first has left it for good
	marker := h.bet(t, "acme", "alice", "a-end", "", "1.00")
	eventually.True(t, 30*time.Second, "alice's end marker parked", func() bool {
		list, _, err := h.store.ListDeliveries(h.ctx, "acme", gateway.DeliveryFilter{EventID: marker.EventID, PerPage: 10})
		return err == nil && len(list) == 1 && list[0].State == gateway.DeliveryParked
	})
	tried := map[any]int{}
	for _, r := range rs.requests() {
		if m := r.json(t); m["member_account"] == "alice" {
			tried[m["external_transaction_id"]]++
		}
	}
	if tried["a1"] != 3 || tried["a-end"] != 3 {
		t.Fatalf("alice's callback was tried %d times (the end marker %d), want 3", tried["a1"], tried["a-end"])
	}

	// when the receiver is fixed and the parked delivery re-sent
	acceptA.Store(true)
	d, err := h.store.ResendDelivery(h.ctx, "acme", parkedID)
	if err != nil || d.State != gateway.DeliveryPending {
		t.Fatalf("resend: %+v, %v", d, err)
	}
	// then it arrives, as attempt 4, and is logged as a success
	eventually.True(t, 30*time.Second, "the re-sent callback", func() bool {
		d, err := h.store.Delivery(h.ctx, "acme", parkedID)
		return err == nil && d.State == gateway.DeliverySucceeded && d.Attempts == 4 && len(d.Log) == 4 && d.Log[3].StatusCode == 200
	})
	last := rs.succeeded()[len(rs.succeeded())-1]
	if last.json(t)["member_account"] != "alice" || last.header.Get("X-Pitboss-Attempt") != "4" {
		t.Fatalf("last success %s attempt %s", last.body, last.header.Get("X-Pitboss-Attempt"))
	}
}

func TestSlowReceiverIsRetried(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	h := startHarness(t, harnessConfig{schedule: fast(5), timeout: timeout, private: gateway.PrivateTargetsAll})
	// given a receiver whose first answer takes longer than the timeout
	rs := newReceiver(t, func(n int, _ request) (int, time.Duration) {
		if n == 1 {
			return http.StatusOK, 3 * timeout
		}
		return http.StatusOK, 0
	})
	h.client(t, "acme", rs.URL)
	h.deposit(t, "acme", "p1", "dep", "10.00")
	bet := h.bet(t, "acme", "p1", "b1", "", "1.00")

	// then the callback is sent again and the second answer counts
	var logged []gateway.DeliveryAttempt
	eventually.True(t, 60*time.Second, "the callback delivered on the second attempt", func() bool {
		list, _, err := h.store.ListDeliveries(h.ctx, "acme", gateway.DeliveryFilter{EventID: bet.EventID, PerPage: 10})
		if err != nil || len(list) != 1 || list[0].State != gateway.DeliverySucceeded {
			return false
		}
		logged = list[0].Log
		return true
	})
	if len(logged) != 2 || logged[0].StatusCode != 0 || !strings.Contains(logged[0].Error, "timeout") ||
		logged[0].Latency < timeout || logged[1].StatusCode != 200 {
		t.Fatalf("log %+v: want a timeout, then 200", logged)
	}
	if got := len(rs.requests()); got != 2 {
		t.Fatalf("receiver saw %d requests, want 2", got)
	}
}

func TestWebhookSubscriptionsFilterByKind(t *testing.T) {
	t.Parallel()
	h := startHarness(t, harnessConfig{schedule: fast(5), timeout: 2 * time.Second, private: gateway.PrivateTargetsAll})
	ok := func(int, request) (int, time.Duration) { return http.StatusOK, 0 }
	bets, money, all := newReceiver(t, ok), newReceiver(t, ok), newReceiver(t, ok)
	h.client(t, "acme", "") // no forwarded callbacks: webhooks only
	type endpoint struct {
		rs     *receiverServer
		kinds  []string
		secret string
		id     string
	}
	eps := []*endpoint{
		{rs: bets, kinds: []string{gateway.KindBet}},
		{rs: money, kinds: []string{gateway.KindDeposit, gateway.KindWithdrawal}},
		{rs: all, kinds: []string{gateway.KindAll}},
	}
	for _, ep := range eps {
		w, secret, err := h.store.CreateWebhook(h.ctx, gateway.WebhookEndpoint{ClientID: "acme", URL: ep.rs.URL, Kinds: ep.kinds,
			Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		ep.secret, ep.id = secret, w.ID
	}
	// when a deposit, a bet, a win and a withdrawal happen for one player
	h.deposit(t, "acme", "p1", "dep", "20.00")
	h.bet(t, "acme", "p1", "b1", "", "2.00")
	h.win(t, "acme", "p1", "w1", "", "3.00", "b1")
	if _, err := h.h.Withdraw(h.ctx, clientCall("acme", "p1", "wd"), h.money(t, "4.00")); err != nil {
		t.Fatal(err)
	}
	// and, as end markers, a bet and a deposit: each endpoint's webhooks
	// of a player are sent in order, so once an endpoint has its markers
	// it has everything that came before them
	h.bet(t, "acme", "p1", "b-end", "", "1.00")
	h.deposit(t, "acme", "p1", "dep-end", "1.00")
	// then each endpoint gets exactly its kinds, in order
	want := map[*receiverServer][]string{
		bets:  {"bet", "bet"},
		money: {"deposit", "withdrawal", "deposit"},
		all:   {"deposit", "bet", "win", "withdrawal", "bet", "deposit"},
	}
	eventually.True(t, 60*time.Second, "every webhook delivered, up to the end markers", func() bool {
		return len(bets.succeeded()) >= 2 && len(money.succeeded()) >= 3 && len(all.succeeded()) >= 6
	})
	for _, ep := range eps {
		var kinds []string
		for _, r := range ep.rs.requests() {
			verifySignature(t, r, ep.secret)
			m := r.json(t)
			kinds = append(kinds, fmt.Sprint(m["type"]))
			// the envelope: {id, type, event_type, created_at, client_id, data}
			var env struct {
				ID        string          `json:"id"`
				Type      string          `json:"type"`
				EventType string          `json:"event_type"`
				CreatedAt string          `json:"created_at"`
				ClientID  string          `json:"client_id"`
				Data      json.RawMessage `json:"data"`
			}
			if err := json.Unmarshal(r.body, &env); err != nil {
				t.Fatal(err)
			}
			var data struct {
				ID   string `json:"id"`
				Type string `json:"type"`
			}
			_ = json.Unmarshal(env.Data, &data)
			conforms(t, schemas.Webhook, r.body)
			conforms(t, schemas.Event(env.EventType), env.Data)
			if env.ClientID != "acme" || data.ID != env.ID || data.Type != env.EventType || env.CreatedAt == "" ||
				r.header.Get("Idempotency-Key") != env.ID+":"+ep.id || r.header.Get("X-Pitboss-Kind") != env.Type {
				t.Fatalf("webhook %s with headers %v", r.body, r.header)
			}
		}
		if !slices.Equal(kinds, want[ep.rs]) {
			t.Fatalf("endpoint %v received %v, want %v", ep.kinds, kinds, want[ep.rs])
		}
	}
}

func TestPrivateCallbackTargetsAreRefused(t *testing.T) {
	t.Parallel()
	// given private targets are not allowed
	h := startHarness(t, harnessConfig{schedule: fast(2), timeout: time.Second, private: gateway.PrivateTargetsNone})
	rs := newReceiver(t, func(int, request) (int, time.Duration) { return http.StatusOK, 0 })
	h.client(t, "acme", rs.URL) // http://127.0.0.1:port
	h.deposit(t, "acme", "p1", "dep", "10.00")
	bet := h.bet(t, "acme", "p1", "b1", "", "1.00")

	// then the callback is never sent, each refusal is logged, and it is parked
	var d gateway.Delivery
	eventually.True(t, 60*time.Second, "the refused callback parked", func() bool {
		list, _, err := h.store.ListDeliveries(h.ctx, "acme", gateway.DeliveryFilter{EventID: bet.EventID, PerPage: 10})
		if err != nil || len(list) != 1 || list[0].State != gateway.DeliveryParked {
			return false
		}
		d = list[0]
		return true
	})
	if len(d.Log) != 2 {
		t.Fatalf("log %+v, want two attempts", d.Log)
	}
	for _, a := range d.Log {
		if a.StatusCode != 0 || !strings.Contains(a.Error, "non-public address: 127.0.0.1") {
			t.Fatalf("attempt %+v: want a refusal of 127.0.0.1", a)
		}
	}
	if n := len(rs.requests()); n != 0 {
		t.Fatalf("%d requests reached 127.0.0.1", n)
	}
}

// TestPrivateCallbackTargetsForSandboxClients is `make run`'s setting end
// to end: under PrivateTargetsSandbox the sandbox client's callback reaches
// its receiver on loopback, the production client's callback to a loopback
// receiver is refused at every attempt and parked.
func TestPrivateCallbackTargetsForSandboxClients(t *testing.T) {
	t.Parallel()
	// given private targets are allowed for sandbox clients
	h := startHarness(t, harnessConfig{schedule: fast(2), timeout: 2 * time.Second, private: gateway.PrivateTargetsSandbox})
	ok := func(int, request) (int, time.Duration) { return http.StatusOK, 0 }
	sbxRS, prodRS := newReceiver(t, ok), newReceiver(t, ok)
	h.clientIn(t, "sbx", gateway.EnvironmentSandbox, sbxRS.URL)
	h.clientIn(t, "prod", gateway.EnvironmentProduction, prodRS.URL)
	for _, c := range []string{"sbx", "prod"} {
		h.deposit(t, c, "p1", "dep", "10.00")
	}
	sbxBet := h.bet(t, "sbx", "p1", "b1", "", "1.00")
	prodBet := h.bet(t, "prod", "p1", "b1", "", "1.00")

	// then the sandbox client's callback arrives
	eventually.True(t, 60*time.Second, "the sandbox callback delivered", func() bool {
		list, _, err := h.store.ListDeliveries(h.ctx, "sbx", gateway.DeliveryFilter{EventID: sbxBet.EventID, PerPage: 10})
		return err == nil && len(list) == 1 && list[0].State == gateway.DeliverySucceeded
	})
	if n := len(sbxRS.requests()); n != 1 {
		t.Fatalf("the sandbox receiver got %d requests, want 1", n)
	}
	// and the production client's is refused and parked, never sent
	var d gateway.Delivery
	eventually.True(t, 60*time.Second, "the production callback parked", func() bool {
		list, _, err := h.store.ListDeliveries(h.ctx, "prod", gateway.DeliveryFilter{EventID: prodBet.EventID, PerPage: 10})
		if err != nil || len(list) != 1 || list[0].State != gateway.DeliveryParked {
			return false
		}
		d = list[0]
		return true
	})
	for _, a := range d.Log {
		if a.StatusCode != 0 || !strings.Contains(a.Error, "non-public address: 127.0.0.1") {
			t.Fatalf("attempt %+v: want a refusal of 127.0.0.1", a)
		}
	}
	if n := len(prodRS.requests()); n != 0 {
		t.Fatalf("%d production requests reached 127.0.0.1", n)
	}
}
