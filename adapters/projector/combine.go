package projector

import (
	"context"
	"sync"
	"time"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/projections"
)

// combiner merges the rounds that partitions' batches bring at about the
// same time into one read-model transaction (flat combining). A partition
// is handled by its own goroutine, and one Kafka fetch brings several
// partitions' records at once; at a light load each brings a round of one
// or two events, and each round was a transaction of its own: a commit
// (a WAL flush) per event. Now the goroutine that takes the transaction
// lock applies every queued round whose streams no round already taken
// has (a stream keeps one partition, so they rarely meet; a round that
// meets one waits for the next transaction, keeping its stream's order),
// and the others find their results when they wake.
//
// A round smaller than small waits gather first, holding the lock, so
// that the partitions woken by the same fetch join it; under load the
// rounds are large, or queue while a transaction runs, and nothing waits.
type combiner struct {
	lock   chan struct{} // the transaction lock (Worker.lockApply)
	apply  func(ctx context.Context, events []domain.Event) ([][]projections.ApplyResult, error)
	gather time.Duration
	small  int

	mu    sync.Mutex
	queue []*round
	// Transactions and rounds applied (the tests read them).
	txs, rounds int64
}

// round is one partition's round of distinct streams and its outcome.
type round struct {
	events  []domain.Event
	results [][]projections.ApplyResult // per projection, per event
	err     error
	done    chan struct{}
}

// Apply applies events (distinct streams) in a transaction, alone or with
// other rounds, and returns their results as Store.ApplyProjections does.
func (c *combiner) Apply(ctx context.Context, events []domain.Event) ([][]projections.ApplyResult, error) {
	r := &round{events: events, done: make(chan struct{})}
	c.mu.Lock()
	c.queue = append(c.queue, r)
	c.mu.Unlock()
	for {
		select {
		case <-r.done:
			return r.results, r.err
		case c.lock <- struct{}{}:
		}
		select {
		case <-r.done: // applied by the goroutine that held the lock
			<-c.lock
			return r.results, r.err
		default:
		}
		c.combine(ctx)
		<-c.lock
	}
}

// combine runs one transaction of the queued rounds; the caller holds the
// lock, and its own round is queued.
func (c *combiner) combine(ctx context.Context) {
	if c.gather > 0 && c.queued() < c.small {
		t := time.NewTimer(c.gather)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	taken := c.take()
	var events []domain.Event
	for _, r := range taken {
		events = append(events, r.events...)
	}
	results, err := c.apply(ctx, events)
	c.mu.Lock()
	c.txs++
	c.rounds += int64(len(taken))
	c.mu.Unlock()
	off := 0
	for _, r := range taken {
		r.err = err
		if err == nil {
			r.results = make([][]projections.ApplyResult, len(results))
			for j := range results {
				r.results[j] = results[j][off : off+len(r.events)]
			}
		}
		off += len(r.events)
		close(r.done)
	}
}

// queued is the events waiting.
func (c *combiner) queued() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, r := range c.queue {
		n += len(r.events)
	}
	return n
}

// take removes from the queue, in order, the rounds that have none of the
// streams of the rounds before them (taken or left: a stream's events stay
// in order).
func (c *combiner) take() []*round {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := map[domain.AccountID]bool{}
	var taken, left []*round
	for _, r := range c.queue {
		clash := false
		for _, e := range r.events {
			if seen[e.StreamID] {
				clash = true
				break
			}
		}
		for _, e := range r.events {
			seen[e.StreamID] = true // a round left behind holds its streams back too
		}
		if clash {
			left = append(left, r)
			continue
		}
		taken = append(taken, r)
	}
	c.queue = left
	return taken
}

// stats are the transactions and rounds applied so far.
func (c *combiner) stats() (txs, rounds int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.txs, c.rounds
}
