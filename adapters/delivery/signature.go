package delivery

import (
	"crypto/hmac"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pitboss/pitboss/gateway"
)

// SignatureHeader carries the signature of every delivery:
//
//	X-Pitboss-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>
//
// The key is the secret's text as given to the client (its UTF-8 bytes,
// "whsec_" prefix included). t is the time of the attempt, so every retry
// carries a fresh signature over the same body.
const SignatureHeader = "X-Pitboss-Signature"

// Sign returns the X-Pitboss-Signature value for body sent at t.
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + mac(secret, ts, body)
}

func mac(secret, ts string, body []byte) string {
	return gateway.Signature(secret, []byte(ts), []byte{'.'}, body)
}

// Errors of Verify.
var (
	ErrSignatureMalformed = errors.New("signature header malformed")
	ErrSignatureMismatch  = errors.New("no v1 signature matches")
	ErrSignatureExpired   = errors.New("signature timestamp outside the tolerance")
)

// Verify checks header against body and secret the way a receiver should:
// the HMAC in constant time, and t within tolerance of now (a replayed
// request is refused once it is older). Several v1 entries are allowed (any
// one matching is enough), so a receiver written against this keeps working
// if several signatures are ever sent during a secret rotation.
func Verify(header, secret string, body []byte, now time.Time, tolerance time.Duration) error {
	var (
		ts   string
		sigs []string
	)
	for part := range strings.SplitSeq(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return fmt.Errorf("%w: %q", ErrSignatureMalformed, part)
		}
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return fmt.Errorf("%w: want t=<unix seconds>,v1=<hex>", ErrSignatureMalformed)
	}
	want := mac(secret, ts, body)
	match := false
	for _, s := range sigs {
		if hmac.Equal([]byte(s), []byte(want)) {
			match = true
		}
	}
	if !match {
		return ErrSignatureMismatch
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: signed %v ago", ErrSignatureExpired, d.Round(time.Second))
	}
	return nil
}
