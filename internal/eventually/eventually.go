// Package eventually lets a test wait for a condition instead of sleeping:
// it polls until the condition holds and fails the test, saying what it
// waited for, when a deadline passes first. Deadlines are meant to be
// generous (tens of seconds): a test that passes waits only as long as the
// condition takes, so a loaded machine costs time, never a false failure.
package eventually

import (
	"testing"
	"time"
)

// Poll intervals: the first check is immediate, then the interval doubles
// from minPoll to maxPoll, so a quick condition is seen at once and a slow
// one does not hammer the database or broker it reads.
const (
	minPoll = time.Millisecond
	maxPoll = 50 * time.Millisecond
)

// True polls cond until it returns true, and fails t with what when within
// passes first. Call it from the test's goroutine (it may call t.Fatalf).
func True(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	if !poll(within, cond) {
		t.Fatalf("after %v still waiting for %s", within, what)
	}
}

// NoError polls cond until it returns nil, and fails t with what and the
// last error when within passes first.
func NoError(t testing.TB, within time.Duration, what string, cond func() error) {
	t.Helper()
	var last error
	if !poll(within, func() bool { last = cond(); return last == nil }) {
		t.Fatalf("after %v still waiting for %s: %v", within, what, last)
	}
}

// poll reports whether cond held before within passed. cond is checked
// once more at the deadline, so a slow poll never loses a condition that
// came true during the last interval.
func poll(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	interval := minPoll
	for !cond() {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		time.Sleep(min(interval, left))
		interval = min(2*interval, maxPoll)
	}
	return true
}
