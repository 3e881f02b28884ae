package api

import (
	"fmt"
	"net/http"
	"sync"

	"github.com/pitboss/pitboss/api/wire"
)

// The reconciliation upload in flight: a comparison holds the day's
// ledger and the ids of the file read so far (the file itself streams,
// compared a row at a time), so the comparisons are bounded in each API
// process:
//
//   - a client has ReconcileUploadsPerClient upload in flight: another is
//     429, so one key cannot run many at once (the review ran 12 in
//     parallel with one key);
//   - ReconcileUploadsInFlight comparisons run at once: past them the
//     upload is 503. A slow sender holds its slot at most the server's
//     read timeout (30 s, cmd/pitboss/serve.go).
//
// Both are decided before the body is read, and both answers carry
// Retry-After. The rate limit bounds how many uploads a key sends; this
// bounds how many hold memory at once.
const (
	// ReconcileUploadsPerClient is how many uploads of one client run at
	// once in one API process.
	ReconcileUploadsPerClient = 1
	// ReconcileUploadsInFlight is how many comparisons run at once in one
	// API process.
	ReconcileUploadsInFlight = 2
	// reconcileRetryAfter is the answers' Retry-After, in seconds: the
	// largest file is compared in about a second on its own.
	reconcileRetryAfter = 2
)

// uploadSlots counts the uploads in flight.
type uploadSlots struct {
	mu        sync.Mutex
	perClient map[string]int
	comparing int
}

// client takes client's slot, or refuses the upload (429); release gives
// it back.
func (u *uploadSlots) client(client string) (release func(), err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.perClient[client] >= ReconcileUploadsPerClient {
		return nil, &wire.Error{Status: http.StatusTooManyRequests, Code: wire.CodeRateLimited,
			Details: map[string]any{"retry_after_seconds": reconcileRetryAfter, "limit": ReconcileUploadsPerClient},
			Message: fmt.Sprintf("%d reconciliation upload of this client is already in flight: retry once it has answered",
				ReconcileUploadsPerClient)}
	}
	if u.perClient == nil {
		u.perClient = map[string]int{}
	}
	u.perClient[client]++
	return func() {
		u.mu.Lock()
		defer u.mu.Unlock()
		if u.perClient[client]--; u.perClient[client] <= 0 {
			delete(u.perClient, client)
		}
	}, nil
}

// compare takes one of the process's comparison slots, or refuses the
// upload (503); release gives it back.
func (u *uploadSlots) compare() (release func(), err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.comparing >= ReconcileUploadsInFlight {
		return nil, &wire.Error{Status: http.StatusServiceUnavailable, Code: wire.CodeUnavailable,
			Details: map[string]any{"retry_after_seconds": reconcileRetryAfter, "limit": ReconcileUploadsInFlight},
			Message: "the server is comparing as many reconciliation files as it takes at once: retry shortly"}
	}
	u.comparing++
	return func() {
		u.mu.Lock()
		defer u.mu.Unlock()
		u.comparing--
	}, nil
}
