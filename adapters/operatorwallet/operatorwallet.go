package operatorwallet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/wallet"
)

// The protocols New knows.
const (
	ProtocolValkyriePAM = "valkyrie-pam"
	ProtocolTBB         = "tbb"
)

// DefaultTimeout bounds one call to the operator's wallet when the
// configuration names none.
const DefaultTimeout = 5 * time.Second

// MaxIdleConnsPerWallet is how many connections to one operator's wallet
// the default client keeps open between calls: as many as calls to it may
// be in flight at once, so the connections of a busy moment are reused
// rather than closed after their call and dialled again for the next
// (docs/benchmarks.md, the seamless step).
const MaxIdleConnsPerWallet = 256

// maxAnswerBytes bounds what we read of an answer: a transaction lookup
// is the longest, a handful of transactions.
const maxAnswerBytes = 1 << 20

// ErrUnreadableAnswer: the operator answered, but not in its protocol's
// shape (not JSON, a field missing, an amount more precise than the
// currency). A movement's unreadable answer also wraps
// wallet.ErrOutcomeUnknown.
var ErrUnreadableAnswer = errors.New("the operator wallet's answer cannot be read")

// operatorRefused is the verdict of an operator's refusal for a reason of
// its own (the player blocked, a responsible-gaming limit, a bet not
// allowed): both protocols' tables use it.
const operatorRefused = wallet.OperatorRefused

// Config configures an operator wallet client.
type Config struct {
	// Protocol is the operator's wallet protocol: "valkyrie-pam" or "tbb".
	Protocol string
	// BaseURL is where the operator's wallet answers: valkyrie-pam's
	// server (the paths are appended), tbb's WALLET_ENDPOINT itself
	// (every call is a POST to it).
	BaseURL string
	// Credential authenticates us: valkyrie-pam's bearer API token, tbb's
	// shared HMAC secret.
	Credential string
	// Operator is the operator's id where its protocol sends one; neither
	// valkyrie-pam nor tbb's wallet calls carry one, so it is unused.
	Operator string
	// Timeout bounds each call (DefaultTimeout when zero).
	Timeout time.Duration
	// Client sends the calls. The default follows no redirect: a money
	// call is never re-sent elsewhere, nor our credential with it.
	Client *http.Client
}

func (c *Config) setDefaults() {
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Client == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost, t.MaxIdleConns = MaxIdleConnsPerWallet, 4*MaxIdleConnsPerWallet
		c.Client = &http.Client{Transport: t,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
}

// Validate reports every problem of the configuration.
func (c Config) Validate() error {
	var errs []error
	if c.Protocol != ProtocolValkyriePAM && c.Protocol != ProtocolTBB {
		errs = append(errs, fmt.Errorf("protocol %q: want %s or %s", clip(c.Protocol), ProtocolValkyriePAM, ProtocolTBB))
	}
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.Fragment != "" {
		// The URL itself is not quoted: it might carry a credential.
		errs = append(errs, errors.New("base URL is not an absolute http(s) URL without user, query or fragment"))
	}
	if c.Credential == "" {
		errs = append(errs, errors.New("credential is empty"))
	} else if strings.ContainsFunc(c.Credential, func(r rune) bool { return r < 0x21 || r == 0x7f }) {
		errs = append(errs, errors.New("credential has a space or a control character"))
	}
	if c.Timeout < 0 {
		errs = append(errs, errors.New("timeout must not be negative"))
	}
	return errors.Join(errs...)
}

// New returns the client of cfg.Protocol.
func New(cfg Config) (wallet.OperatorWallet, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("operator wallet: %w", err)
	}
	h := transport{client: cfg.Client, timeout: cfg.Timeout}
	if cfg.Protocol == ProtocolTBB {
		return &tbbClient{http: h, endpoint: cfg.BaseURL, secret: cfg.Credential}, nil
	}
	return &pamClient{http: h, base: strings.TrimRight(cfg.BaseURL, "/"), token: cfg.Credential}, nil
}

// transport sends one call, bounded by the timeout.
type transport struct {
	client  *http.Client
	timeout time.Duration
}

// do sends the request build makes and reads at most maxAnswerBytes of
// the answer. A transport error wraps wallet.ErrOutcomeUnknown (the
// request may have reached the operator); a longer answer is unreadable
// (for a movement, an unknown outcome too).
func (t transport) do(ctx context.Context, move bool,
	build func(ctx context.Context) (*http.Request, error)) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	req, err := build(ctx)
	if err != nil {
		// A request we cannot even build was never sent.
		return 0, nil, err
	}
	resp, err := t.client.Do(req)
	if err != nil {
		// Not the *url.Error itself: it quotes the URL.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = fmt.Errorf("%s: %w", ue.Op, ue.Err)
		}
		return 0, nil, fmt.Errorf("%w: %w", wallet.ErrOutcomeUnknown, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return 0, nil, fmt.Errorf("%w: read the answer: %w", wallet.ErrOutcomeUnknown, err)
	}
	if len(raw) > maxAnswerBytes {
		return 0, nil, unreadable(move, "the answer is over %d bytes", maxAnswerBytes)
	}
	return resp.StatusCode, raw, nil
}

// unreadable is the error of an answer that cannot be read: for a
// movement its outcome is unknown too; for a read it is just an error.
func unreadable(move bool, format string, args ...any) error {
	err := fmt.Errorf("%w: %s", ErrUnreadableAnswer, fmt.Sprintf(format, args...))
	if move {
		return fmt.Errorf("%w: %w", wallet.ErrOutcomeUnknown, err)
	}
	return err
}

// undecided is the error of an operator's answer that is no decision: an
// error code by which it did not say no for good, or a 5xx.
func undecided(code, message string) error {
	return fmt.Errorf("%w: the operator answered %s %s", wallet.ErrOutcomeUnknown, clip(code), clip(message))
}

// refusedBefore is a movement refused before anything was sent: the
// protocol cannot carry it faithfully.
func refusedBefore(v wallet.Verdict, code, message string) *wallet.OperatorRefusal {
	return &wallet.OperatorRefusal{Verdict: v, Code: code, Message: message}
}

// parseAmount reads a JSON number (or a string holding one) into c
// exactly: digits beyond c's precision are refused, never rounded.
// Exponent notation ("1e-06", what some encoders write for small floats)
// is expanded to plain decimal text first, digit by digit.
func parseAmount(n json.Number, c domain.Currency) (domain.Money, error) {
	s := string(n)
	if s == "" {
		return domain.Money{}, errors.New("no amount")
	}
	if strings.ContainsAny(s, "eE") {
		plain, err := expandExponent(s)
		if err != nil {
			return domain.Money{}, fmt.Errorf("amount %s: %w", clip(s), err)
		}
		s = plain
	}
	return domain.ParseMoney(s, c)
}

// expandExponent writes a JSON number in exponent notation ("-1.5e-3")
// as plain decimal text ("-0.0015") without any rounding.
func expandExponent(s string) (string, error) {
	mant, e, _ := strings.Cut(strings.ToLower(s), "e")
	exp, err := strconv.Atoi(e)
	if err != nil || exp < -40 || exp > 40 {
		return "", errors.New("exponent out of range")
	}
	sign := ""
	if strings.HasPrefix(mant, "-") {
		sign, mant = "-", mant[1:]
	}
	whole, frac, _ := strings.Cut(mant, ".")
	digits := whole + frac
	if whole == "" || strings.ContainsFunc(digits, func(r rune) bool { return r < '0' || r > '9' }) {
		return "", errors.New("not a number")
	}
	point := len(whole) + exp
	switch {
	case point <= 0:
		digits = "0." + strings.Repeat("0", -point) + digits
	case point >= len(digits):
		digits += strings.Repeat("0", point-len(digits))
	default:
		digits = digits[:point] + "." + digits[point:]
	}
	w, f, hasPoint := strings.Cut(digits, ".")
	if w = strings.TrimLeft(w, "0"); w == "" {
		w = "0"
	}
	if hasPoint {
		return sign + w + "." + f, nil
	}
	return sign + w, nil
}

// correlationID is the call's correlation id: the provider's, or a new
// random one.
func correlationID(given string) string {
	if given != "" {
		return given
	}
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// clip shortens operator text for our errors and logs.
func clip(s string) string {
	s = strings.ToValidUTF8(s, "?")
	if r := []rune(s); len(r) > 200 {
		return string(r[:200]) + "..."
	}
	return s
}

// asRefusal is err's operator refusal, when it is one.
func asRefusal(err error) (*wallet.OperatorRefusal, bool) {
	var r *wallet.OperatorRefusal
	ok := errors.As(err, &r)
	return r, ok
}
