package eventually_test

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitboss/pitboss/internal/eventually"
)

// recorder is a testing.TB whose Fatalf records the message and ends the
// goroutine, as the real one does.
type recorder struct {
	testing.TB
	msg string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls f with a recorder on a goroutine of its own (Fatalf ends it)
// and returns the failure message, "" when f passed.
func run(t *testing.T, f func(testing.TB)) string {
	t.Helper()
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r.msg
}

func TestTrue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		trueOn  int64 // the call that first returns true; 0 never
		wantErr string
	}{
		{name: "true at once", trueOn: 1},
		{name: "true on the fifth look", trueOn: 5},
		{name: "never true", wantErr: "after 30ms still waiting for the answer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int64
			msg := run(t, func(tb testing.TB) {
				eventually.True(tb, 30*time.Millisecond, "the answer", func() bool {
					n := calls.Add(1)
					return tc.trueOn != 0 && n >= tc.trueOn
				})
			})
			if msg != tc.wantErr {
				t.Fatalf("failure %q, want %q", msg, tc.wantErr)
			}
			if tc.trueOn != 0 && calls.Load() != tc.trueOn {
				t.Fatalf("%d calls, want %d (no look after the condition held)", calls.Load(), tc.trueOn)
			}
			if tc.trueOn == 0 && calls.Load() < 2 {
				t.Fatalf("%d calls before giving up: the condition was not polled", calls.Load())
			}
		})
	}
}

func TestNoError(t *testing.T) {
	t.Parallel()
	t.Run("nil after errors", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int64
		msg := run(t, func(tb testing.TB) {
			eventually.NoError(tb, time.Minute, "the row", func() error {
				if calls.Add(1) < 3 {
					return errors.New("not yet")
				}
				return nil
			})
		})
		if msg != "" || calls.Load() != 3 {
			t.Fatalf("failure %q after %d calls, want none after 3", msg, calls.Load())
		}
	})
	t.Run("the last error is reported", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int64
		msg := run(t, func(tb testing.TB) {
			eventually.NoError(tb, 20*time.Millisecond, "the row", func() error {
				return fmt.Errorf("attempt %d", calls.Add(1))
			})
		})
		want := fmt.Sprintf("after 20ms still waiting for the row: attempt %d", calls.Load())
		if msg != want {
			t.Fatalf("failure %q, want %q", msg, want)
		}
	})
}
