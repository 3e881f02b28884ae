package roundclose_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/roundclose"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
)

// store hands out the rounds still open, in batches, as the Postgres
// finder does (a closed round is not found again).
type store struct {
	open   []string
	locked bool
	asked  []time.Time
}

func (s *store) Exclusive(ctx context.Context, fn func(context.Context) error) (bool, error) {
	if s.locked {
		return false, nil
	}
	return true, fn(ctx)
}

func (s *store) StaleRounds(_ context.Context, ages map[string]time.Duration, now time.Time, limit int) ([]commands.StaleRound, error) {
	s.asked = append(s.asked, now)
	var out []commands.StaleRound
	for _, r := range s.open {
		if len(out) == limit {
			break
		}
		out = append(out, commands.StaleRound{RoundClose: domain.RoundClose{Client: "c", Provider: "cal", Round: r,
			After: ages["caleta"]}})
	}
	return out, nil
}

// closer closes a round by taking it off the store's open list, unless
// the round is in refuse.
type closer struct {
	s      *store
	refuse map[string]error
	closed []string
}

func (c *closer) CloseRound(_ context.Context, r commands.StaleRound) (commands.Result, error) {
	if err := c.refuse[r.Round]; err != nil {
		return commands.Result{}, fmt.Errorf("close: %w", err)
	}
	for i, o := range c.s.open {
		if o == r.Round {
			c.s.open = append(c.s.open[:i], c.s.open[i+1:]...)
			break
		}
	}
	c.closed = append(c.closed, r.Round)
	return commands.Result{EventID: "ev-" + r.Round}, nil
}

func TestTick(t *testing.T) {
	now := time.Date(2026, 3, 3, 12, 0, 0, 0, time.UTC)
	boom := errors.New("boom")
	tests := []struct {
		name       string
		open       []string
		locked     bool
		refuse     map[string]error
		want       roundclose.Result
		wantErr    error
		wantClosed int
		wantAsked  int
	}{
		{name: "nothing stale", want: roundclose.Result{Ran: true}, wantAsked: 1},
		{name: "fewer than a batch", open: []string{"r1"}, want: roundclose.Result{Ran: true, Closed: 1},
			wantClosed: 1, wantAsked: 1},
		{name: "a full batch asks again", open: []string{"r1", "r2"}, want: roundclose.Result{Ran: true, Closed: 2},
			wantClosed: 2, wantAsked: 2},
		{name: "several batches", open: []string{"r1", "r2", "r3", "r4", "r5"}, want: roundclose.Result{Ran: true, Closed: 5},
			wantClosed: 5, wantAsked: 3},
		{name: "a round a call closed meanwhile ends the tick", open: []string{"r1", "r2", "r3"},
			refuse: map[string]error{"r1": domain.ErrRoundNotOpen}, want: roundclose.Result{Ran: true, Closed: 1},
			wantClosed: 1, wantAsked: 1},
		{name: "another instance holds the lock", open: []string{"r1"}, locked: true, want: roundclose.Result{}},
		{name: "a round the ledger refuses does not hold back the others", open: []string{"r1", "r2"},
			refuse: map[string]error{"r1": domain.ErrInvalidArgument}, want: roundclose.Result{Ran: true, Closed: 1},
			wantClosed: 1, wantAsked: 1},
		{name: "a failure stops the tick", open: []string{"r1", "r2"}, refuse: map[string]error{"r2": boom},
			want: roundclose.Result{Ran: true, Closed: 1}, wantErr: boom, wantClosed: 1, wantAsked: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &store{open: tt.open, locked: tt.locked}
			c := &closer{s: s, refuse: tt.refuse}
			j, err := roundclose.New(s, c, roundclose.Config{Ages: map[string]time.Duration{"caleta": 48 * time.Hour},
				Batch: 2, Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			got, err := j.Tick(context.Background())
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if got != tt.want || len(c.closed) != tt.wantClosed || len(s.asked) != tt.wantAsked {
				t.Fatalf("result %+v, closed %v, asked %d times; want %+v, %d closed, %d asks", got, c.closed,
					len(s.asked), tt.want, tt.wantClosed, tt.wantAsked)
			}
			for _, at := range s.asked {
				if !at.Equal(now) {
					t.Fatalf("asked at %s, want the job's clock %s", at, now)
				}
			}
		})
	}
}
