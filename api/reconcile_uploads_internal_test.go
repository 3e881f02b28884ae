package api

import (
	"errors"
	"net/http"
	"testing"

	"github.com/pitboss/pitboss/api/wire"
)

// TestUploadSlots: one upload per client, ReconcileUploadsInFlight
// comparisons per process; a slot released is free again.
func TestUploadSlots(t *testing.T) {
	var u uploadSlots
	status := func(err error) int {
		var we *wire.Error
		if !errors.As(err, &we) || we.Details["retry_after_seconds"] == nil {
			t.Fatalf("refusal %v without retry_after_seconds", err)
		}
		return we.Status
	}
	relA, err := u.client("a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.client("a"); status(err) != http.StatusTooManyRequests {
		t.Fatal("a second upload of client a was let in")
	}
	relB, err := u.client("b")
	if err != nil {
		t.Fatal("client b waits for client a's upload")
	}
	var done []func()
	for range ReconcileUploadsInFlight {
		rel, err := u.compare()
		if err != nil {
			t.Fatal(err)
		}
		done = append(done, rel)
	}
	if _, err := u.compare(); status(err) != http.StatusServiceUnavailable {
		t.Fatalf("comparison %d let in", ReconcileUploadsInFlight+1)
	}
	done[0]()
	if rel, err := u.compare(); err != nil {
		t.Fatal("a released comparison slot is not free")
	} else {
		rel()
	}
	relA()
	relB()
	if rel, err := u.client("a"); err != nil {
		t.Fatal("client a's released slot is not free")
	} else {
		rel()
	}
	if len(u.perClient) != 0 {
		t.Fatalf("clients left counted: %v", u.perClient)
	}
}
