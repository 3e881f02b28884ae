package wire

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/pitboss/pitboss/wallet"
)

// Verdict is err's wallet verdict for a provider dialect, and whether it
// is a known one (an unknown one is a fault of ours: log it). The body
// reader's and the strict decoder's errors are the caller's: a body that
// is not the protocol's syntax (not JSON, too large, another Content-Type)
// is wallet.Malformed, any other of their refusals wallet.InvalidRequest.
// The rest is the core's (wallet.VerdictOf).
func Verdict(err error) (wallet.Verdict, bool) {
	var r *wallet.Refusal
	if errors.As(err, &r) {
		return r.Verdict, true
	}
	var we *Error
	if errors.As(err, &we) && we.Status >= 400 && we.Status < 500 {
		switch {
		case we.Code == CodeInvalidJSON || we.Code == CodeBodyTooLarge || we.Status == http.StatusUnsupportedMediaType:
			return wallet.Malformed, true
		default:
			return wallet.InvalidRequest, true
		}
	}
	return wallet.VerdictOf(err)
}

// DialectDeps are what a provider wallet dialect uses: the wallet core
// that answers its calls, and the logger of the faults it answers with its
// protocol's generic error.
type DialectDeps struct {
	Core   *wallet.Core
	Logger *slog.Logger
}

// WithDefaults is d with the default logger when it names none.
func (d DialectDeps) WithDefaults() DialectDeps {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	return d
}
