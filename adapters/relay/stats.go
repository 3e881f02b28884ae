package relay

import (
	"sync/atomic"
	"time"
)

// Stats is a snapshot of what a relay has done since it was built.
type Stats struct {
	// Leader is true while this instance holds the leader lock.
	Leader bool
	// Terms counts the times this instance became the leader.
	Terms uint64
	// TxID and Position are the checkpoint this instance last stored: every
	// event up to them is on Kafka.
	TxID     uint64
	Position int64
	// PublishedAt is when that checkpoint was stored; zero if never.
	PublishedAt time.Time
	// Published counts events published (a republished batch counts
	// again); Batches the batches among them.
	Published uint64
	Batches   uint64
	// PublishErrors counts failed tries to publish a batch.
	PublishErrors uint64
	// Polls counts reads of the event store, empty ones included.
	Polls uint64
	// Lingers counts the waits of Config.Linger before a read.
	Lingers uint64
	// LockTries counts the answers to a try of the leader lock, granted
	// or not: a standby's count grows every StandbyRetry, so a test can
	// see a standby keep trying (and being refused) while another leads.
	LockTries uint64
}

// Stats returns the relay's counters. Lag in time is
// time.Since(PublishedAt) while there is work; lag in events is the
// store's last position minus Position.
func (r *Relay) Stats() Stats {
	s := Stats{
		Leader:        r.stats.leader.Load(),
		Terms:         r.stats.terms.Load(),
		TxID:          r.stats.txID.Load(),
		Position:      r.stats.position.Load(),
		Published:     r.stats.events.Load(),
		Batches:       r.stats.batches.Load(),
		PublishErrors: r.stats.publishErrors.Load(),
		Polls:         r.stats.polls.Load(),
		Lingers:       r.stats.lingers.Load(),
		LockTries:     r.stats.lockTries.Load(),
	}
	if ns := r.stats.publishedAt.Load(); ns != 0 {
		s.PublishedAt = time.Unix(0, ns)
	}
	return s
}

type stats struct {
	leader        atomic.Bool
	terms         atomic.Uint64
	txID          atomic.Uint64
	position      atomic.Int64
	publishedAt   atomic.Int64 // unix nanoseconds
	events        atomic.Uint64
	batches       atomic.Uint64
	publishErrors atomic.Uint64
	polls         atomic.Uint64
	lingers       atomic.Uint64
	lockTries     atomic.Uint64
}

func (s *stats) published(n int, last row, at time.Time) {
	s.events.Add(uint64(n))
	s.batches.Add(1)
	s.txID.Store(last.txID)
	s.position.Store(last.position)
	s.publishedAt.Store(at.UnixNano())
}
