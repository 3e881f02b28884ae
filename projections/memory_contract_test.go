package projections_test

import (
	"context"
	"slices"
	"testing"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/projections"
	"github.com/pitboss/pitboss/projections/projectionstest"
)

// The in-memory read models (what a rebuild fills) keep the read-model
// store contract.
func TestMemoryContract(t *testing.T) {
	t.Parallel()
	projectionstest.Run(t, func(*testing.T) projectionstest.Store {
		return &memoryStore{m: projections.NewMemory()}
	})
}

// memoryStore drives a projections.Memory as the suite's Store. Memory
// takes its watermark from its caller (a rebuild sets it at the head it
// replayed to): Settle sets it at the last event given to the store.
type memoryStore struct {
	m    *projections.Memory
	head int64
}

func (s *memoryStore) Apply(_ context.Context, p projections.Projection, e domain.Event) (bool, error) {
	applied, err := s.m.Apply(p, e)
	if err == nil {
		s.head = max(s.head, e.Position)
	}
	return applied, err
}

func (s *memoryStore) DeadLetter(_ context.Context, p projections.Name, e domain.Event) error {
	s.m.Skip(p, string(e.StreamID), e.Version, e.Position)
	s.head = max(s.head, e.Position)
	return nil
}

func (s *memoryStore) Settle(_ context.Context, p projections.Name) (int64, error) {
	s.m.SetWatermark(p, s.head)
	return s.m.Positions[p], nil
}

func (s *memoryStore) State(context.Context) (projectionstest.State, error) {
	st := projectionstest.NewState()
	s.m.Transactions(func(t *projections.Transaction) { st.Rows[t.ID] = *t })
	for k, b := range s.m.Balances {
		st.Balances[k] = *b
	}
	for k, g := range s.m.GGR {
		st.GGR[k] = *g
	}
	for k := range s.m.Players {
		st.Players[k] = true
	}
	for k, v := range s.m.PlayerMonths {
		st.PlayerMonths[k] = v
	}
	for k, v := range s.m.Rounds {
		st.Rounds[k] = v
	}
	for k, v := range s.m.Checkpoints {
		if v.Version > 0 {
			st.Checkpoints[k] = v
		}
	}
	for k, v := range s.m.Positions {
		if v > 0 {
			st.Positions[k] = v
		}
	}
	for k, v := range s.m.Order {
		st.Order[k] = slices.Clone(v)
	}
	for k, v := range s.m.FilterCounts {
		st.FilterCounts[k] = v
	}
	for k, v := range s.m.Days {
		st.Days[k] = v
	}
	return st, nil
}
