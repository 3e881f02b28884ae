package api_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/gateway"
)

// dvFixture is the API with the delivery store holding two clients'
// callback URLs, and keys with various scopes.
type dvFixture struct {
	*apitest.Harness
	t *testing.T
	// keys: full (deliveries:read+write), readOnly, none (no deliveries
	// scope), other (client "other", full).
	full, readOnly, none, other string
}

func newDVFixture(t *testing.T) *dvFixture {
	t.Helper()
	h := &dvFixture{Harness: apitest.New(t, apitest.Options{}), t: t}
	for _, c := range []struct{ id, url string }{{"acme", "https://acme.example/cb"}, {"other", "https://other.example/cb"}} {
		h.AddClient(c.id, "sandbox")
		if err := h.Deliveries.SetForwardCallbackURL(t.Context(), c.id, c.url); err != nil {
			t.Fatal(err)
		}
	}
	h.full, _ = h.IssueKey("acme", gateway.ScopeDeliveriesRead, gateway.ScopeDeliveriesWrite)
	h.readOnly, _ = h.IssueKey("acme", gateway.ScopeDeliveriesRead)
	h.none, _ = h.IssueKey("acme", gateway.ScopeWalletRead)
	h.other, _ = h.IssueKey("other", gateway.ScopeDeliveriesRead, gateway.ScopeDeliveriesWrite)
	return h
}

type dvDelivery struct {
	ID             string            `json:"id"`
	Target         string            `json:"target"`
	EndpointID     string            `json:"endpoint_id"`
	EventID        string            `json:"event_id"`
	Kind           string            `json:"kind"`
	Status         string            `json:"status"`
	Attempts       int               `json:"attempts"`
	NextAttemptAt  *string           `json:"next_attempt_at"`
	LastStatusCode *int              `json:"last_status_code"`
	LastError      string            `json:"last_error"`
	ParkedAt       *string           `json:"parked_at"`
	Payload        json.RawMessage   `json:"payload"`
	Log            []json.RawMessage `json:"log"`
}

// seed makes three deliveries for acme (one parked after a 500, one
// pending, one for another stream) and one for other; it returns their ids.
func (h *dvFixture) seed() (parked, pending, otherClient string) {
	h.t.Helper()
	enqueue := func(client, stream string) string {
		id := uuid.NewString()
		_, err := h.Deliveries.Enqueue(h.t.Context(), gateway.Outgoing{EventID: id, EventType: "wallet.bet_placed.v1", Kind: "bet",
			ClientID: client, StreamID: stream, StreamVersion: 1, Position: 1, OccurredAt: time.Now(),
			Callback: []byte(`{"member_account":"p1","bet_amount":10.00}`), Webhook: []byte(`{}`)})
		if err != nil {
			h.t.Fatal(err)
		}
		return id
	}
	parkedEvent := enqueue("acme", "player:acme:p1:EUR")
	pendingEvent := enqueue("acme", "player:acme:p2:EUR")
	otherEvent := enqueue("other", "player:other:p1:EUR")
	jobs, err := h.Deliveries.Claim(h.t.Context(), 10, time.Minute)
	if err != nil {
		h.t.Fatal(err)
	}
	ids := map[string]string{}
	for _, j := range jobs {
		ids[j.EventID] = j.ID
		if j.EventID == parkedEvent {
			err := h.Deliveries.Finish(h.t.Context(), j, gateway.DeliveryOutcome{URL: j.URL, Park: true,
				Result: gateway.AttemptResult{StartedAt: time.Now(), Latency: 1500 * time.Microsecond, StatusCode: 500,
					Error: "HTTP 500 is not 2xx", Excerpt: "oops"}})
			if err != nil {
				h.t.Fatal(err)
			}
		}
	}
	return ids[parkedEvent], ids[pendingEvent], ids[otherEvent]
}

func TestDeliveriesEndpoints(t *testing.T) {
	t.Parallel()
	h := newDVFixture(t)
	parked, pending, otherClient := h.seed()

	t.Run("list", func(t *testing.T) {
		tests := []struct {
			name      string
			query     string
			key       string
			status    int
			code      string
			wantIDs   []string
			wantTotal int64
		}{
			{"every delivery of the client, newest first", "", h.full, 200, "", []string{pending, parked}, 2},
			{"filtered by status", "?status=parked", h.readOnly, 200, "", []string{parked}, 1},
			{"second page", "?page=2&per_page=1", h.full, 200, "", []string{parked}, 2},
			{"beyond the last page", "?page=3&per_page=1", h.full, 200, "", []string{}, 2},
			{"unknown status", "?status=lost", h.full, 400, wire.CodeInvalidRequest, nil, 0},
			{"per_page above 100", "?per_page=101", h.full, 400, wire.CodeInvalidRequest, nil, 0},
			{"page zero", "?page=0", h.full, 400, wire.CodeInvalidRequest, nil, 0},
			{"page not a number", "?page=two", h.full, 400, wire.CodeInvalidRequest, nil, 0},
			{"event_id not a UUID", "?event_id=abc", h.full, 400, wire.CodeInvalidRequest, nil, 0},
			{"no key", "", "", 401, wire.CodeUnauthorized, nil, 0},
			{"unknown key", "", "pb_test_nope_nope", 401, wire.CodeUnauthorized, nil, 0},
			{"key without deliveries:read", "", h.none, 403, wire.CodeForbidden, nil, 0},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				env := apitest.Expect(t, h.Call("GET", "/api/v1/deliveries"+tc.query, tc.key, ""), tc.status, tc.code)
				if tc.code != "" {
					return
				}
				var list []dvDelivery
				if err := json.Unmarshal(env.Data, &list); err != nil {
					t.Fatal(err)
				}
				var ids []string
				for _, d := range list {
					ids = append(ids, d.ID)
				}
				if strings.Join(ids, ",") != strings.Join(tc.wantIDs, ",") || env.Pagination == nil ||
					env.Pagination.Total != tc.wantTotal {
					t.Fatalf("ids %v total %+v, want %v and %d", ids, env.Pagination, tc.wantIDs, tc.wantTotal)
				}
			})
		}
	})

	t.Run("a parked delivery shows its log", func(t *testing.T) {
		env := apitest.Expect(t, h.Call("GET", "/api/v1/deliveries/"+parked, h.readOnly, ""), 200, "")
		var d dvDelivery
		if err := json.Unmarshal(env.Data, &d); err != nil {
			t.Fatal(err)
		}
		if d.Status != "parked" || d.Attempts != 1 || len(d.Log) != 1 || d.ParkedAt == nil || d.NextAttemptAt != nil ||
			d.LastStatusCode == nil || *d.LastStatusCode != 500 || d.Target != "callback" || d.EndpointID != "callback" {
			t.Fatalf("delivery %s", env.Data)
		}
		var entry map[string]json.RawMessage
		_ = json.Unmarshal(d.Log[0], &entry)
		if string(entry["status_code"]) != "500" || string(entry["latency_ms"]) != "1.500" ||
			string(entry["response_excerpt"]) != `"oops"` || string(entry["url"]) != `"https://acme.example/cb"` {
			t.Fatalf("log entry %s", d.Log[0])
		}
		if string(d.Payload) != `{"member_account":"p1","bet_amount":10.00}` {
			t.Fatalf("payload %s, want the exact bytes sent", d.Payload)
		}
	})

	for _, tc := range []struct {
		name, path, key string
		status          int
		code            string
	}{
		{"get an unknown delivery", "/api/v1/deliveries/dl_nope", h.full, 404, wire.CodeNotFound},
		{"get another client's delivery", "/api/v1/deliveries/" + otherClient, h.full, 404, wire.CodeNotFound},
		{"get with an id no delivery has", "/api/v1/deliveries/%20%3B", h.full, 404, wire.CodeNotFound},
		{"get without a key", "/api/v1/deliveries/" + parked, "", 401, wire.CodeUnauthorized},
		{"get without the scope", "/api/v1/deliveries/" + parked, h.none, 403, wire.CodeForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) { apitest.Expect(t, h.Call("GET", tc.path, tc.key, ""), tc.status, tc.code) })
	}

	t.Run("resend", func(t *testing.T) {
		tests := []struct {
			name   string
			id     string
			key    string
			status int
			code   string
		}{
			{"without a key", parked, "", 401, wire.CodeUnauthorized},
			{"with a read-only key", parked, h.readOnly, 403, wire.CodeForbidden},
			{"an unknown delivery", "dl_nope", h.full, 404, wire.CodeNotFound},
			{"another client's delivery", otherClient, h.full, 404, wire.CodeNotFound},
			{"a pending delivery", pending, h.full, 409, wire.CodeDeliveryInProgress},
			{"a parked delivery", parked, h.full, 200, ""},
			{"the same delivery again, now pending", parked, h.full, 409, wire.CodeDeliveryInProgress},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				env := apitest.Expect(t, h.Call("POST", "/api/v1/deliveries/"+tc.id+"/resend", tc.key, ""), tc.status, tc.code)
				if tc.code != "" {
					return
				}
				var d dvDelivery
				_ = json.Unmarshal(env.Data, &d)
				if d.ID != parked || d.Status != "pending" || d.ParkedAt != nil || d.NextAttemptAt == nil {
					t.Fatalf("re-sent delivery %s", env.Data)
				}
			})
		}
	})
}

func TestDeliveriesUnconfigured(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{})
	c := h.NewClient(gateway.AllScopes...)
	bare := h.Bare()
	apitest.Expect(t, bare.Get("/api/v1/deliveries", c.Key), 503, wire.CodeUnavailable)
	apitest.Expect(t, bare.Get("/api/v1/webhooks", c.Key), 503, wire.CodeUnavailable)
}
