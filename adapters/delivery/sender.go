package delivery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pitboss/pitboss/gateway"
)

// Headers of every delivery besides SignatureHeader.
const (
	// IdempotencyKeyHeader is "<event id>:<endpoint id>": the same on every
	// retry and re-send of one event to one endpoint, so a receiver that
	// has seen it can answer 2xx without applying it again.
	IdempotencyKeyHeader = "Idempotency-Key"
	DeliveryIDHeader     = "X-Pitboss-Delivery-Id"
	EventIDHeader        = "X-Pitboss-Event-Id"
	EventTypeHeader      = "X-Pitboss-Event-Type"
	KindHeader           = "X-Pitboss-Kind"
	AttemptHeader        = "X-Pitboss-Attempt"
	UserAgent            = "Pitboss-Delivery/1"
)

// MaxExcerpt bounds the part of a response body kept in the delivery log.
const MaxExcerpt = 1024

// drainLimit is how much of a response body is read past the excerpt so
// the connection can be reused; a longer body closes it.
const drainLimit = 64 << 10

// DefaultTimeout bounds one attempt: connect, send, response headers and
// the excerpt.
const DefaultTimeout = 10 * time.Second

// SenderConfig configures a Sender.
type SenderConfig struct {
	// Timeout bounds one attempt; DefaultTimeout when zero.
	Timeout time.Duration
	// PrivateTargets says whose deliveries may reach loopback and private
	// addresses (gateway.PrivateTargets.Allows, by Request.Environment);
	// link-local ones (cloud metadata) stay refused whatever it says. The
	// zero value, none, is production's; `make run` allows sandbox
	// clients, tests all (PITBOSS_PRIVATE_CALLBACKS).
	PrivateTargets gateway.PrivateTargets
	// Now is the clock the signature's t comes from; time.Now when nil.
	Now func() time.Time
}

// Sender makes one signed HTTP attempt of a delivery.
type Sender struct {
	cfg SenderConfig
	// public connects to public addresses only; inside to inside ones
	// too (nil when no client may reach them). Two clients with a
	// transport each, not one with a per-request check: a kept-alive
	// connection is checked once, when it is dialled, so a connection to
	// a loopback receiver made for a sandbox client must never be in a
	// pool a production client's delivery can take.
	public, inside *http.Client
}

// NewSender returns a sender with its own HTTP clients: no proxy (a proxy
// would hide the target's address from the dial-time check), no redirects
// (a 3xx is a failed attempt, and following it could leave the checked
// host), and the address check on every connection.
func NewSender(cfg SenderConfig) *Sender {
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Sender{cfg: cfg, public: newClient(cfg.Timeout, false)}
	if cfg.PrivateTargets != gateway.PrivateTargetsNone {
		s.inside = newClient(cfg.Timeout, true)
	}
	return s
}

// newClient returns an HTTP client whose dialer refuses what
// gateway.ClassifyAddress does not allow (allowInside: inside addresses
// are allowed).
func newClient(timeout time.Duration, allowInside bool) *http.Client {
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           newDialer(allowInside).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
	}
	return &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// client is the HTTP client for a delivery of a client of environment env.
func (s *Sender) client(env string) *http.Client {
	if s.inside != nil && s.cfg.PrivateTargets.Allows(env) {
		return s.inside
	}
	return s.public
}

// Timeout is the time limit of one attempt.
func (s *Sender) Timeout() time.Duration { return s.cfg.Timeout }

// Request is one attempt to send.
type Request struct {
	URL            string
	Body           []byte
	Secret         string
	DeliveryID     string
	IdempotencyKey string
	EventID        string
	EventType      string
	Kind           string
	Attempt        int
	// Environment is the environment of the client the delivery is for:
	// SenderConfig.PrivateTargets decides by it whether inside addresses
	// may be reached.
	Environment string
}

// Send makes the attempt. It never returns an error: every failure is a
// gateway.AttemptResult for the delivery log.
func (s *Sender) Send(ctx context.Context, r Request) gateway.AttemptResult {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	start := time.Now()
	res := gateway.AttemptResult{StartedAt: start}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		res.Error = clipText("invalid url: "+err.Error(), 500)
		return res
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", UserAgent)
	h.Set(SignatureHeader, Sign(r.Secret, s.cfg.Now(), r.Body))
	h.Set(IdempotencyKeyHeader, r.IdempotencyKey)
	h.Set(DeliveryIDHeader, r.DeliveryID)
	h.Set(EventIDHeader, r.EventID)
	h.Set(EventTypeHeader, r.EventType)
	h.Set(KindHeader, r.Kind)
	h.Set(AttemptHeader, strconv.Itoa(r.Attempt))

	resp, err := s.client(r.Environment).Do(req)
	if err != nil {
		res.Latency = time.Since(start)
		res.Error = s.describe(err)
		return res
	}
	defer resp.Body.Close()
	res.StatusCode = resp.StatusCode
	excerpt, rerr := io.ReadAll(io.LimitReader(resp.Body, MaxExcerpt))
	res.Excerpt = validPrefix(excerpt)
	if rerr == nil && len(excerpt) == MaxExcerpt {
		_, rerr = io.Copy(io.Discard, io.LimitReader(resp.Body, drainLimit))
	}
	res.Latency = time.Since(start)
	if !res.Succeeded() {
		res.Error = "HTTP " + strconv.Itoa(resp.StatusCode) + " is not 2xx"
	} else if rerr != nil && errors.Is(rerr, context.DeadlineExceeded) {
		// The 2xx came in time; a body that trickles on is the receiver's
		// business, the acknowledgement stands.
		res.Excerpt += "…"
	}
	return res
}

func (s *Sender) describe(err error) string {
	switch {
	case errors.Is(err, ErrForbiddenAddress):
		// The outermost error that starts with the sentinel's text names
		// the address without the dial's noise.
		for e := err; e != nil; e = errors.Unwrap(e) {
			if strings.HasPrefix(e.Error(), ErrForbiddenAddress.Error()) {
				return clipText(e.Error(), 500)
			}
		}
		return clipText(err.Error(), 500)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("timeout: no response within %v", s.cfg.Timeout)
	case errors.Is(err, context.Canceled):
		return "canceled: the forwarder was stopping"
	}
	return clipText(err.Error(), 500)
}

// validPrefix returns b as text for the log: a character split by the cut
// at MaxExcerpt is dropped, invalid bytes become U+FFFD, NUL (which a
// Postgres text cannot hold) is removed, and the result stays within
// MaxExcerpt bytes.
func validPrefix(b []byte) string {
	i := len(b) - 1
	for i > 0 && len(b)-i < utf8.UTFMax && !utf8.RuneStart(b[i]) {
		i--
	}
	if i >= 0 && !utf8.FullRune(b[i:]) {
		b = b[:i]
	}
	s := strings.ReplaceAll(strings.ToValidUTF8(string(b), "\uFFFD"), "\x00", "")
	for len(s) > MaxExcerpt {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
