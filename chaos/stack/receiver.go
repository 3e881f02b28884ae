package stack

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/pitboss/pitboss/adapters/delivery"
)

// Receiver is a client's callback endpoint: a real HTTP server on loopback
// that verifies each forwarded callback's signature and records it. A test
// makes it slow or failing.
type Receiver struct {
	srv *httptest.Server

	mu       sync.Mutex
	secrets  []string
	delay    time.Duration
	status   int
	receipts []Receipt
}

// Receipt is one request the receiver got.
type Receipt struct {
	Seq            int
	At             time.Time
	IdempotencyKey string
	EventIDHeader  string
	EventID        string // from the payload
	StreamID       string
	StreamVersion  int64
	Member         string
	EventType      string
	SignatureOK    bool
	// Acked: the receiver answered 2xx (and the sender was still there
	// to read it as far as the receiver can tell).
	Acked  bool
	Status int
}

// NewReceiver starts a receiver answering 200 at once.
func NewReceiver() *Receiver {
	r := &Receiver{status: http.StatusOK}
	r.srv = httptest.NewServer(http.HandlerFunc(r.handle))
	return r
}

// URL is the callback URL.
func (r *Receiver) URL() string { return r.srv.URL + "/callback" }

// Close stops the server.
func (r *Receiver) Close() { r.srv.CloseClientConnections(); r.srv.Close() }

// SetSecret sets the signing secrets the signatures are checked with (the
// callback's, the webhooks'): one of them must match.
func (r *Receiver) SetSecret(s ...string) { r.mu.Lock(); r.secrets = s; r.mu.Unlock() }

// Behave sets how the next requests are answered: after delay, with status.
func (r *Receiver) Behave(delay time.Duration, status int) {
	r.mu.Lock()
	r.delay, r.status = delay, status
	r.mu.Unlock()
}

// Receipts is a copy of everything received so far, in arrival order.
func (r *Receiver) Receipts() []Receipt {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Receipt(nil), r.receipts...)
}

func (r *Receiver) handle(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	secrets, delay, status := r.secrets, r.delay, r.status
	r.mu.Unlock()
	var p struct {
		EventID       string `json:"event_id"`
		StreamID      string `json:"stream_id"`
		StreamVersion int64  `json:"stream_version"`
		Member        string `json:"member_account"`
		EventType     string `json:"event_type"`
	}
	valid := json.Unmarshal(body, &p) == nil
	rc := Receipt{At: time.Now(), IdempotencyKey: req.Header.Get("Idempotency-Key"),
		EventIDHeader: req.Header.Get("X-Pitboss-Event-Id"), EventID: p.EventID, StreamID: p.StreamID,
		StreamVersion: p.StreamVersion, Member: p.Member, EventType: p.EventType,
		SignatureOK: valid && verifyAny(req.Header.Get("X-Pitboss-Signature"), secrets, body, time.Now())}
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-req.Context().Done():
			rc.Status = -1 // the sender gave up first
			r.record(rc)
			return
		}
	}
	rc.Status = status
	rc.Acked = status >= 200 && status < 300 && req.Context().Err() == nil
	r.record(rc)
	w.WriteHeader(status)
}

func (r *Receiver) record(rc Receipt) {
	r.mu.Lock()
	rc.Seq = len(r.receipts)
	r.receipts = append(r.receipts, rc)
	r.mu.Unlock()
}

func verifyAny(header string, secrets []string, body []byte, now time.Time) bool {
	for _, s := range secrets {
		// As docs/callbacks-and-webhooks.md tells receivers: the HMAC, and
		// t within five minutes.
		if s != "" && delivery.Verify(header, s, body, now, 5*time.Minute) == nil {
			return true
		}
	}
	return false
}
