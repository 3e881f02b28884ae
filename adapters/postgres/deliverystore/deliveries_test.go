package deliverystore_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres/deliverystore"
	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/secretbox"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

type dlEnv struct {
	pool  *pgxpool.Pool
	store *deliverystore.Deliveries
	ctx   context.Context
}

func newDLEnv(t *testing.T) *dlEnv {
	t.Helper()
	pool, _ := pgtest.NewDatabase(t)
	key := make([]byte, secretbox.KeySize)
	_, _ = rand.Read(key)
	box, err := secretbox.New(key)
	if err != nil {
		t.Fatal(err)
	}
	store, err := deliverystore.NewDeliveries(pool, box)
	if err != nil {
		t.Fatal(err)
	}
	return &dlEnv{pool: pool, store: store, ctx: t.Context()}
}

// client creates a client with a forward callback URL (empty: none).
func (e *dlEnv) client(t *testing.T, id, callbackURL string) {
	t.Helper()
	if _, err := gatewaystore.NewGateway(e.pool).CreateClient(e.ctx, id, id, "sandbox"); err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetForwardCallbackURL(e.ctx, id, callbackURL); err != nil {
		t.Fatal(err)
	}
}

func (e *dlEnv) webhook(t *testing.T, client string, kinds ...string) gateway.WebhookEndpoint {
	t.Helper()
	w, secret, err := e.store.CreateWebhook(e.ctx, gateway.WebhookEndpoint{ClientID: client, URL: "https://example.com/hook",
		Kinds: kinds, Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(secret) < 40 || secret[:6] != gateway.SigningSecretPrefix {
		t.Fatalf("secret %q: want whsec_ and 43 characters", secret)
	}
	return w
}

var dlVersion atomic.Int64

// outgoing is a bet-like event of client on stream; callback set.
func outgoing(client, stream, kind string) gateway.Outgoing {
	v := dlVersion.Add(1)
	id := uuid.NewString()
	o := gateway.Outgoing{EventID: id, EventType: "wallet.bet_placed.v1", Kind: kind, ClientID: client, StreamID: stream,
		StreamVersion: v, Position: v, OccurredAt: time.Now(),
		Callback: []byte(`{"event_id":"` + id + `","n":` + fmt.Sprint(v) + `}`),
		Webhook:  []byte(`{"id":"` + id + `"}`)}
	if kind != gateway.KindBet && kind != gateway.KindWin && kind != gateway.KindRollback {
		o.Callback = nil
	}
	return o
}

func (e *dlEnv) enqueue(t *testing.T, o gateway.Outgoing, want int) {
	t.Helper()
	n, err := e.store.Enqueue(e.ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if n != want {
		t.Fatalf("enqueue %s (%s): %d deliveries added, want %d", o.EventID, o.Kind, n, want)
	}
}

// states returns endpoint -> states of o's deliveries.
func (e *dlEnv) states(t *testing.T, client string, eventIDs ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, id := range eventIDs {
		list, _, err := e.store.ListDeliveries(e.ctx, client, gateway.DeliveryFilter{EventID: id, PerPage: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range list {
			out[d.EventID[:8]+"/"+d.EndpointID] = d.State
		}
	}
	return out
}

func TestDeliveriesEnqueue(t *testing.T) {
	t.Parallel()
	e := newDLEnv(t)
	e.client(t, "acme", "https://acme.example/cb")
	e.client(t, "nocb", "")
	betHook := e.webhook(t, "acme", gateway.KindBet)
	allHook := e.webhook(t, "acme", gateway.KindAll)
	depositHook := e.webhook(t, "acme", gateway.KindDeposit, gateway.KindWithdrawal)
	other := e.webhook(t, "nocb", gateway.KindBet)

	tests := []struct {
		name      string
		o         gateway.Outgoing
		endpoints []string
	}{
		{"a bet goes to the callback, the bet and the * endpoints", outgoing("acme", "player:acme:p1:EUR", gateway.KindBet),
			[]string{"callback", betHook.ID, allHook.ID}},
		{"a deposit is not forwarded as a callback", outgoing("acme", "client:acme:EUR", gateway.KindDeposit),
			[]string{allHook.ID, depositHook.ID}},
		{"a launch reaches only *", outgoing("acme", "player:acme:p2:EUR", gateway.KindGameLaunched), []string{allHook.ID}},
		{"a client without a callback URL gets webhooks only", outgoing("nocb", "player:nocb:p1:EUR", gateway.KindBet),
			[]string{other.ID}},
		{"an event of an unknown client makes nothing", outgoing("ghost", "player:ghost:p1:EUR", gateway.KindBet), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// when the event is enqueued twice (a redelivered record)
			e.enqueue(t, tc.o, len(tc.endpoints))
			e.enqueue(t, tc.o, 0)
			// then there is one delivery per endpoint, each the head of its queue
			got := e.states(t, tc.o.ClientID, tc.o.EventID)
			want := map[string]string{}
			for _, ep := range tc.endpoints {
				want[tc.o.EventID[:8]+"/"+ep] = gateway.DeliveryPending
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("deliveries %v, want %v", got, want)
			}
		})
	}

	t.Run("an endpoint created after the event occurred does not get it", func(t *testing.T) {
		o := outgoing("acme", "player:acme:p9:EUR", gateway.KindWin)
		o.OccurredAt = time.Now().Add(-time.Hour)
		e.enqueue(t, o, 1) // the callback only: every endpoint is younger than the event
		if got := e.states(t, "acme", o.EventID); got[o.EventID[:8]+"/"+allHook.ID] != "" {
			t.Fatalf("deliveries %v: the * endpoint was created after the event", got)
		}
	})
}

func TestDeliveriesEnqueueBatch(t *testing.T) {
	t.Parallel()
	e := newDLEnv(t)
	e.client(t, "acme", "https://acme.example/cb")
	e.client(t, "nocb", "")
	allHook := e.webhook(t, "acme", gateway.KindAll)
	nocbHook := e.webhook(t, "nocb", gateway.KindDeposit)
	// given one partition's batch: two clients, three streams interleaved
	a1 := outgoing("acme", "player:acme:a:EUR", gateway.KindBet)
	b1 := outgoing("nocb", "player:nocb:b:EUR", gateway.KindBet) // no callback URL, hook takes deposits only
	a2 := outgoing("acme", "player:acme:a:EUR", gateway.KindWin)
	c1 := outgoing("acme", "player:acme:c:EUR", gateway.KindGameLaunched) // webhook only
	d1 := outgoing("nocb", "client:nocb:EUR", gateway.KindDeposit)
	a3 := outgoing("acme", "player:acme:a:EUR", gateway.KindBet)
	old := outgoing("acme", "player:acme:a:EUR", gateway.KindRollback)
	old.OccurredAt = time.Now().Add(-time.Hour) // before the hook: the callback only
	batch := []gateway.Outgoing{a1, b1, a2, c1, d1, a3, old}

	// when it is enqueued, then again (a redelivered batch), then a part of it
	for i, want := range []int{2 + 0 + 2 + 1 + 1 + 2 + 1, 0} {
		r, err := e.store.EnqueueBatch(e.ctx, batch)
		if err != nil || r.Added != want {
			t.Fatalf("round %d: %d added, %v; want %d", i, r.Added, err, want)
		}
		// and it reports which (client, kind) pairs have a target: every
		// one of acme (a callback URL), nocb's deposits (its hook) but not
		// its bets
		wantTargeted := map[gateway.TargetKey]bool{
			{ClientID: "acme", Kind: gateway.KindBet}: true, {ClientID: "acme", Kind: gateway.KindWin}: true,
			{ClientID: "acme", Kind: gateway.KindGameLaunched}: true, {ClientID: "acme", Kind: gateway.KindRollback}: true,
			{ClientID: "nocb", Kind: gateway.KindDeposit}: true,
		}
		if !maps.Equal(r.Targeted, wantTargeted) || r.AsOf.IsZero() {
			t.Fatalf("round %d: targeted %v as of %v; want %v", i, r.Targeted, r.AsOf, wantTargeted)
		}
	}
	if r, err := e.store.EnqueueBatch(e.ctx, batch[2:4]); err != nil || r.Added != 0 {
		t.Fatalf("a part again: %d added, %v", r.Added, err)
	}
	// then each endpoint's queue of a stream holds its events in batch
	// order, only the first one pending
	want := map[string]string{
		a1.EventID[:8] + "/callback": gateway.DeliveryPending, a1.EventID[:8] + "/" + allHook.ID: gateway.DeliveryPending,
		a2.EventID[:8] + "/callback": gateway.DeliveryQueued, a2.EventID[:8] + "/" + allHook.ID: gateway.DeliveryQueued,
		a3.EventID[:8] + "/callback": gateway.DeliveryQueued, a3.EventID[:8] + "/" + allHook.ID: gateway.DeliveryQueued,
		old.EventID[:8] + "/callback":     gateway.DeliveryQueued,
		c1.EventID[:8] + "/" + allHook.ID: gateway.DeliveryPending,
	}
	if got := e.states(t, "acme", a1.EventID, a2.EventID, a3.EventID, old.EventID, c1.EventID); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("acme deliveries\n got %v\nwant %v", got, want)
	}
	if got := e.states(t, "nocb", b1.EventID, d1.EventID); fmt.Sprint(got) != fmt.Sprint(map[string]string{
		d1.EventID[:8] + "/" + nocbHook.ID: gateway.DeliveryPending}) {
		t.Fatalf("nocb deliveries %v: want the deposit hook only", got)
	}
	// and the queue is claimed in batch order
	var order []string
	for range 4 {
		jobs := e.claim(t, 10)
		for _, j := range jobs {
			if j.EndpointID == gateway.CallbackEndpointID && j.EventID != c1.EventID {
				order = append(order, j.EventID)
			}
			e.finish(t, j, gateway.DeliveryOutcome{Result: gateway.AttemptResult{StatusCode: 200}, URL: j.URL, Succeeded: true})
		}
	}
	if !slices.Equal(order, []string{a1.EventID, a2.EventID, a3.EventID, old.EventID}) {
		t.Fatalf("callbacks of stream a sent in order %v, want a1 a2 a3 old", order)
	}

	// and an empty batch, or one of clients with nothing to deliver, adds nothing
	if r, err := e.store.EnqueueBatch(e.ctx, nil); err != nil || r.Added != 0 || len(r.Targeted) != 0 {
		t.Fatalf("empty batch: %d, %v", r.Added, err)
	}
	ghost := outgoing("ghost", "player:ghost:p:EUR", gateway.KindBet)
	r, err := e.store.EnqueueBatch(e.ctx, []gateway.Outgoing{ghost, outgoing("nocb", "player:nocb:x:EUR", gateway.KindWin)})
	if err != nil || r.Added != 0 || len(r.Targeted) != 0 {
		t.Fatalf("nothing to deliver: %d added, targeted %v, %v", r.Added, r.Targeted, err)
	}
}

func TestDeliveriesQueueOrder(t *testing.T) {
	t.Parallel()
	e := newDLEnv(t)
	e.client(t, "acme", "https://acme.example/cb")
	a1 := outgoing("acme", "player:acme:a:EUR", gateway.KindBet)
	a2 := outgoing("acme", "player:acme:a:EUR", gateway.KindWin)
	a3 := outgoing("acme", "player:acme:a:EUR", gateway.KindBet)
	b1 := outgoing("acme", "player:acme:b:EUR", gateway.KindBet)
	for _, o := range []gateway.Outgoing{a1, a2, a3, b1} {
		e.enqueue(t, o, 1)
	}
	// given player a's three callbacks and player b's one
	// then only the head of each player's queue is due
	jobs := e.claim(t, 10)
	if got := eventIDs(jobs); !sameSet(got, []string{a1.EventID, b1.EventID}) {
		t.Fatalf("claimed %v, want the heads %s and %s", got, a1.EventID, b1.EventID)
	}
	// and a claimed head is leased: not claimed again
	if again := e.claim(t, 10); len(again) != 0 {
		t.Fatalf("claimed %v while leased", eventIDs(again))
	}
	ja1 := findJob(t, jobs, a1.EventID)
	if ja1.URL != "https://acme.example/cb" || ja1.Attempt != 1 || ja1.RoundAttempt != 1 || ja1.Gone != "" || ja1.Fault != "" {
		t.Fatalf("job %+v", ja1)
	}
	if !bytes.Equal(ja1.Payload, a1.Callback) {
		t.Fatalf("payload %s, want the exact bytes %s", ja1.Payload, a1.Callback)
	}

	// when a's head fails and is retried later, a2 stays behind it
	e.finish(t, ja1, gateway.DeliveryOutcome{Result: gateway.AttemptResult{StatusCode: 500, Error: "HTTP 500"}, URL: ja1.URL,
		RetryAfter: time.Hour})
	if got := e.states(t, "acme", a2.EventID)[a2.EventID[:8]+"/callback"]; got != gateway.DeliveryQueued {
		t.Fatalf("a2 is %s behind a failing head, want queued", got)
	}
	// when a's head is parked, a2 becomes the head at once
	e.resetDue(t, a1.EventID)
	ja1 = findJob(t, e.claim(t, 10), a1.EventID)
	if ja1.Attempt != 2 || ja1.RoundAttempt != 2 {
		t.Fatalf("second attempt numbered %d/%d", ja1.Attempt, ja1.RoundAttempt)
	}
	e.finish(t, ja1, gateway.DeliveryOutcome{Result: gateway.AttemptResult{StatusCode: 500, Error: "HTTP 500"}, URL: ja1.URL, Park: true})
	ja2 := findJob(t, e.claim(t, 10), a2.EventID)
	// when a2 succeeds, a3 follows
	e.finish(t, ja2, gateway.DeliveryOutcome{Result: gateway.AttemptResult{StatusCode: 200}, URL: ja2.URL, Succeeded: true})
	ja3 := findJob(t, e.claim(t, 10), a3.EventID)

	// then the log shows every attempt
	d, err := e.store.Delivery(e.ctx, "acme", ja1.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.State != gateway.DeliveryParked || d.Attempts != 2 || len(d.Log) != 2 || d.Log[1].StatusCode != 500 || d.ParkedAt == nil {
		t.Fatalf("parked delivery %+v", d)
	}

	t.Run("re-send of a parked delivery goes behind the queue's head", func(t *testing.T) {
		r, err := e.store.ResendDelivery(e.ctx, "acme", ja1.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.State != gateway.DeliveryQueued {
			t.Fatalf("re-sent delivery is %s while a3 is the head, want queued", r.State)
		}
		e.finish(t, ja3, gateway.DeliveryOutcome{Result: gateway.AttemptResult{StatusCode: 204}, URL: ja3.URL, Succeeded: true})
		j := findJob(t, e.claim(t, 10), a1.EventID)
		if j.Attempt != 3 || j.RoundAttempt != 1 {
			t.Fatalf("re-sent attempt numbered %d (round %d), want 3 (round 1)", j.Attempt, j.RoundAttempt)
		}
		if _, err := e.store.ResendDelivery(e.ctx, "acme", j.ID); !errors.Is(err, gateway.ErrDeliveryInProgress) {
			t.Fatalf("re-send of a pending delivery: %v, want ErrDeliveryInProgress", err)
		}
	})

	t.Run("a finish after the lease was taken over does not move the delivery", func(t *testing.T) {
		o := outgoing("acme", "player:acme:c:EUR", gateway.KindBet)
		e.enqueue(t, o, 1)
		first := findJob(t, e.claimLease(t, 10, time.Millisecond), o.EventID)
		time.Sleep(20 * time.Millisecond)
		second := findJob(t, e.claim(t, 10), o.EventID)
		e.finish(t, first, gateway.DeliveryOutcome{Result: gateway.AttemptResult{StatusCode: 200}, URL: first.URL, Succeeded: true})
		d, _ := e.store.Delivery(e.ctx, "acme", first.ID)
		if d.State != gateway.DeliveryPending || len(d.Log) != 1 {
			t.Fatalf("stale finish: state %s with %d log entries, want pending with 1", d.State, len(d.Log))
		}
		e.finish(t, second, gateway.DeliveryOutcome{Result: gateway.AttemptResult{StatusCode: 200}, URL: second.URL, Succeeded: true})
		d, _ = e.store.Delivery(e.ctx, "acme", first.ID)
		if d.State != gateway.DeliverySucceeded || len(d.Log) != 2 {
			t.Fatalf("state %s with %d log entries, want succeeded with 2", d.State, len(d.Log))
		}
	})

	t.Run("re-send of an unknown or another client's delivery is not found", func(t *testing.T) {
		e.client(t, "other", "")
		for _, tc := range []struct{ client, id string }{{"acme", "dl_nope"}, {"other", ja1.ID}} {
			if _, err := e.store.ResendDelivery(e.ctx, tc.client, tc.id); !errors.Is(err, domain.ErrNotFound) {
				t.Fatalf("resend %s as %s: %v, want ErrNotFound", tc.id, tc.client, err)
			}
		}
	})
}

func TestDeliveriesConcurrentClaimsTakeEachHeadOnce(t *testing.T) {
	t.Parallel()
	e := newDLEnv(t)
	e.client(t, "acme", "https://acme.example/cb")
	const players = 40
	for i := range players {
		e.enqueue(t, outgoing("acme", fmt.Sprintf("player:acme:p%d:EUR", i), gateway.KindBet), 1)
		e.enqueue(t, outgoing("acme", fmt.Sprintf("player:acme:p%d:EUR", i), gateway.KindWin), 1)
	}
	var (
		mu   sync.Mutex
		seen = map[string]int{}
		wg   sync.WaitGroup
	)
	for range 8 {
		wg.Go(func() {
			for range 5 {
				jobs, err := e.store.Claim(e.ctx, 7, time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, j := range jobs {
					seen[j.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != players {
		t.Fatalf("%d deliveries claimed, want the %d heads", len(seen), players)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("delivery %s claimed %d times", id, n)
		}
	}
}

func TestDeliveriesWebhookEndpoints(t *testing.T) {
	t.Parallel()
	e := newDLEnv(t)
	e.client(t, "acme", "")
	e.client(t, "other", "")
	w := e.webhook(t, "acme", gateway.KindBet)

	t.Run("the secret is stored sealed and opens for the worker", func(t *testing.T) {
		secret, err := e.store.RotateWebhookSecret(e.ctx, "acme", w.ID)
		if err != nil {
			t.Fatal(err)
		}
		var sealed []byte
		if err := e.pool.QueryRow(e.ctx, `SELECT secret FROM webhook_endpoints WHERE id = $1`, w.ID).Scan(&sealed); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(sealed, []byte(secret)) || bytes.Contains(sealed, []byte(secret[6:])) {
			t.Fatal("the webhook secret is stored in plain text")
		}
		o := outgoing("acme", "player:acme:s:EUR", gateway.KindBet)
		e.enqueue(t, o, 1)
		j := findJob(t, e.claim(t, 10), o.EventID)
		if j.Secret != secret || j.URL != "https://example.com/hook" {
			t.Fatalf("job secret %q url %q, want the rotated secret", j.Secret, j.URL)
		}
	})

	t.Run("update changes only the given fields", func(t *testing.T) {
		url := "https://example.com/v2"
		got, err := e.store.UpdateWebhook(e.ctx, "acme", w.ID, gateway.WebhookChange{URL: &url, Kinds: []string{gateway.KindWin}})
		if err != nil {
			t.Fatal(err)
		}
		if got.URL != url || !slices.Equal(got.Kinds, []string{gateway.KindWin}) || !got.Enabled || got.Description != "" {
			t.Fatalf("updated endpoint %+v", got)
		}
	})

	t.Run("disabling parks what waits for the endpoint", func(t *testing.T) {
		o := outgoing("acme", "player:acme:d:EUR", gateway.KindWin)
		e.enqueue(t, o, 1)
		off := false
		if _, err := e.store.UpdateWebhook(e.ctx, "acme", w.ID, gateway.WebhookChange{Enabled: &off}); err != nil {
			t.Fatal(err)
		}
		if got := e.states(t, "acme", o.EventID)[o.EventID[:8]+"/"+w.ID]; got != gateway.DeliveryParked {
			t.Fatalf("delivery to a disabled endpoint is %s, want parked", got)
		}
		e.enqueue(t, outgoing("acme", "player:acme:d:EUR", gateway.KindWin), 0)
	})

	t.Run("another client sees nothing", func(t *testing.T) {
		if _, err := e.store.Webhook(e.ctx, "other", w.ID); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("get: %v", err)
		}
		if err := e.store.DeleteWebhook(e.ctx, "other", w.ID); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("delete: %v", err)
		}
		if list, _ := e.store.ListWebhooks(e.ctx, "other"); len(list) != 0 {
			t.Fatalf("list: %v", list)
		}
	})

	t.Run("delete hides the endpoint and a head in flight is parked on its next claim", func(t *testing.T) {
		on := true
		if _, err := e.store.UpdateWebhook(e.ctx, "acme", w.ID, gateway.WebhookChange{Enabled: &on}); err != nil {
			t.Fatal(err)
		}
		if err := e.store.DeleteWebhook(e.ctx, "acme", w.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := e.store.Webhook(e.ctx, "acme", w.ID); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("get after delete: %v", err)
		}
		if err := e.store.DeleteWebhook(e.ctx, "acme", w.ID); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("second delete: %v", err)
		}
	})

	t.Run("a client has at most 20 endpoints", func(t *testing.T) {
		e.client(t, "many", "")
		for range gateway.MaxWebhooksPerClient {
			e.webhook(t, "many", gateway.KindAll)
		}
		_, _, err := e.store.CreateWebhook(e.ctx, gateway.WebhookEndpoint{ClientID: "many", URL: "https://x.example",
			Kinds: []string{gateway.KindAll}, Enabled: true})
		if !errors.Is(err, domain.ErrInvalidArgument) {
			t.Fatalf("21st endpoint: %v, want ErrInvalidArgument", err)
		}
	})
}

func TestDeliveriesCallbackSecret(t *testing.T) {
	t.Parallel()
	e := newDLEnv(t)
	e.client(t, "acme", "https://acme.example/cb")
	fc, err := e.store.ForwardCallback(e.ctx, "acme")
	if err != nil || fc.URL != "https://acme.example/cb" || fc.SecretCreatedAt != nil {
		t.Fatalf("before any delivery: %+v, %v", fc, err)
	}
	// given no secret, the first claim makes one (nothing is sent unsigned)
	o := outgoing("acme", "player:acme:p:EUR", gateway.KindBet)
	e.enqueue(t, o, 1)
	j := findJob(t, e.claim(t, 10), o.EventID)
	if len(j.Secret) < 40 || j.Fault != "" {
		t.Fatalf("lazily created secret %q (fault %q)", j.Secret, j.Fault)
	}
	// when the client rotates, the next attempt is signed with the new one
	secret, err := e.store.RotateCallbackSecret(e.ctx, "acme")
	if err != nil || secret == j.Secret {
		t.Fatalf("rotate: %q, %v", secret, err)
	}
	e.finish(t, j, gateway.DeliveryOutcome{Result: gateway.AttemptResult{Error: "timeout"}, URL: j.URL})
	e.resetDue(t, o.EventID)
	if j2 := findJob(t, e.claim(t, 10), o.EventID); j2.Secret != secret {
		t.Fatal("the retry is not signed with the rotated secret")
	}
	if _, err := e.store.RotateCallbackSecret(e.ctx, "ghost"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("rotate for an unknown client: %v", err)
	}
	// when the callback URL is removed, the head is gone: parked without a request
	if err := e.store.SetForwardCallbackURL(e.ctx, "acme", ""); err != nil {
		t.Fatal(err)
	}
	e.resetDue(t, o.EventID)
	if j3 := findJob(t, e.claimLease(t, 10, 0), o.EventID); j3.Gone == "" {
		t.Fatalf("job %+v: want Gone", j3)
	}
}

// TestDeliveriesClaimCarriesClientEnvironment: the sender allows inside
// targets by the client's environment (gateway.PrivateTargets), so every
// claimed job, callback or webhook, carries it.
func TestDeliveriesClaimCarriesClientEnvironment(t *testing.T) {
	t.Parallel()
	e := newDLEnv(t)
	e.client(t, "sbx", "http://127.0.0.1:9999/callback") // sandbox
	if _, err := gatewaystore.NewGateway(e.pool).CreateClient(e.ctx, "prod", "prod", gateway.EnvironmentProduction); err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetForwardCallbackURL(e.ctx, "prod", "https://prod.example/cb"); err != nil {
		t.Fatal(err)
	}
	e.webhook(t, "sbx", gateway.KindBet)
	e.webhook(t, "prod", gateway.KindBet)
	sbx := outgoing("sbx", "player:sbx:p:EUR", gateway.KindBet)
	prod := outgoing("prod", "player:prod:p:EUR", gateway.KindBet)
	e.enqueue(t, sbx, 2)
	e.enqueue(t, prod, 2)

	jobs := e.claim(t, 10)
	if len(jobs) != 4 {
		t.Fatalf("claimed %d jobs, want 4", len(jobs))
	}
	for _, j := range jobs {
		want := map[string]string{"sbx": gateway.EnvironmentSandbox, "prod": gateway.EnvironmentProduction}[j.ClientID]
		if j.Environment != want {
			t.Errorf("%s job of %s: environment %q, want %q", j.Target, j.ClientID, j.Environment, want)
		}
	}
}

func (e *dlEnv) claim(t *testing.T, n int) []gateway.DeliveryJob {
	return e.claimLease(t, n, time.Minute)
}

func (e *dlEnv) claimLease(t *testing.T, n int, lease time.Duration) []gateway.DeliveryJob {
	t.Helper()
	jobs, err := e.store.Claim(e.ctx, n, lease)
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

func (e *dlEnv) finish(t *testing.T, j gateway.DeliveryJob, o gateway.DeliveryOutcome) {
	t.Helper()
	if err := e.store.Finish(e.ctx, j, o); err != nil {
		t.Fatal(err)
	}
}

// resetDue makes the event's pending deliveries due now.
func (e *dlEnv) resetDue(t *testing.T, eventID string) {
	t.Helper()
	if _, err := e.pool.Exec(e.ctx, `UPDATE deliveries SET next_attempt_at = now() WHERE event_id = $1 AND state = 'pending'`,
		eventID); err != nil {
		t.Fatal(err)
	}
}

func eventIDs(jobs []gateway.DeliveryJob) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.EventID)
	}
	return out
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func findJob(t *testing.T, jobs []gateway.DeliveryJob, eventID string) gateway.DeliveryJob {
	t.Helper()
	for _, j := range jobs {
		if j.EventID == eventID {
			return j
		}
	}
	t.Fatalf("event %s not among the claimed %v", eventID, eventIDs(jobs))
	return gateway.DeliveryJob{}
}

// TestRegisteringATargetWaitsForEnqueuesInFlight: an enqueue holds its
// clients' target locks shared (EnqueueBatch's first statement); setting a
// callback URL, creating an endpoint and enabling one wait for it, so the
// targets an enqueue reads cannot grow between its statements.
func TestRegisteringATargetWaitsForEnqueuesInFlight(t *testing.T) {
	t.Parallel()
	e := newDLEnv(t)
	e.client(t, "acme", "")
	off := e.webhook(t, "acme", gateway.KindBet)
	disabled := false
	if _, err := e.store.UpdateWebhook(e.ctx, "acme", off.ID, gateway.WebhookChange{Enabled: &disabled}); err != nil {
		t.Fatal(err)
	}
	enabled := true
	for name, register := range map[string]func() error{
		"callback URL": func() error { return e.store.SetForwardCallbackURL(e.ctx, "acme", "https://acme.example/cb") },
		"new endpoint": func() error {
			_, _, err := e.store.CreateWebhook(e.ctx, gateway.WebhookEndpoint{ClientID: "acme",
				URL: "https://acme.example/wh", Kinds: []string{gateway.KindBet}, Enabled: true})
			return err
		},
		"endpoint enabled": func() error {
			_, err := e.store.UpdateWebhook(e.ctx, "acme", off.ID, gateway.WebhookChange{Enabled: &enabled})
			return err
		},
	} {
		// given an enqueue of acme's events in flight
		tx, err := e.pool.Begin(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		// (a failing test ends the enqueue, or the database cannot be dropped)
		t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
		if _, err := tx.Exec(e.ctx, `SELECT pg_advisory_xact_lock_shared($1, hashtext($2))`,
			int32(0x504C5654), "acme"); err != nil {
			t.Fatal(err)
		}
		// when a target is registered
		done := make(chan error, 1)
		go func() { done <- register() }()
		// then the registration waits for the enqueue's lock
		for waiting := false; !waiting; {
			select {
			case err := <-done:
				t.Fatalf("%s: registered (%v) while an enqueue held the client's target lock", name, err)
			default:
			}
			if err := e.pool.QueryRow(e.ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks
				WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))`).
				Scan(&waiting); err != nil {
				t.Fatal(err)
			}
		}
		// and completes once the enqueue ends
		_ = tx.Rollback(e.ctx)
		if err := <-done; err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

// TestRedeliveredBatchWithNewEventsAfterDoneOnes: a batch redelivered with
// new records after ones whose deliveries are done already (Kafka batches
// are cut differently the second time) makes the first new one the head of
// its queue, not a queued delivery behind nothing.
func TestRedeliveredBatchWithNewEventsAfterDoneOnes(t *testing.T) {
	t.Parallel()
	e := newDLEnv(t)
	e.client(t, "acme", "https://acme.example/cb")
	a1 := outgoing("acme", "player:acme:a:EUR", gateway.KindBet)
	a2 := outgoing("acme", "player:acme:a:EUR", gateway.KindWin)
	a3 := outgoing("acme", "player:acme:a:EUR", gateway.KindBet)
	if r, err := e.store.EnqueueBatch(e.ctx, []gateway.Outgoing{a1}); err != nil || r.Added != 1 {
		t.Fatalf("first batch: %+v, %v", r, err)
	}
	if _, err := e.pool.Exec(e.ctx, `UPDATE deliveries SET state = 'succeeded' WHERE event_id = $1`, a1.EventID); err != nil {
		t.Fatal(err)
	}
	if r, err := e.store.EnqueueBatch(e.ctx, []gateway.Outgoing{a1, a2, a3}); err != nil || r.Added != 2 {
		t.Fatalf("redelivered batch: %+v, %v", r, err)
	}
	states := map[string]string{}
	rows, _ := e.pool.Query(e.ctx, `SELECT event_id::text, state FROM deliveries`)
	var id, state string
	if _, err := pgx.ForEachRow(rows, []any{&id, &state}, func() error { states[id] = state; return nil }); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{a1.EventID: gateway.DeliverySucceeded, a2.EventID: gateway.DeliveryPending,
		a3.EventID: gateway.DeliveryQueued}
	if !maps.Equal(states, want) {
		t.Fatalf("states %v, want %v", states, want)
	}
}
