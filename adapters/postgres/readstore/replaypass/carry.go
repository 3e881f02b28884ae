package replaypass

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/pitboss/pitboss/projections"
)

// Kinds of carried rows.
const (
	kindBalance    = "balance"
	kindGGR        = "ggr"
	kindCheckpoint = "checkpoint"
)

// Tracker finds the carried state a pass changed: balances and checkpoints
// by their position (above the previous pass's), GGR groups (which have
// none) against a copy of what was recorded last.
type Tracker struct {
	since int64
	ggr   map[projections.GGRKey]projections.GGRDelta
}

// NewTracker returns a tracker of a rebuild whose recorded passes end at
// position since (0 for a fresh one).
func NewTracker(since int64) *Tracker {
	return &Tracker{since: since, ggr: map[projections.GGRKey]projections.GGRDelta{}}
}

type checkpointJSON struct {
	Projection projections.Name `json:"projection"`
	Stream     string           `json:"stream"`
	Version    int64            `json:"version"`
	Position   int64            `json:"position"`
}

// Delta returns the carried rows of mem changed since the last Delta (or
// NewTracker), the pass ending at position upTo, and moves on to it.
func (t *Tracker) Delta(mem *projections.Memory, upTo int64) ([]Carry, error) {
	var out []Carry
	add := func(kind string, key, value any) error {
		k, err := json.Marshal(key)
		if err != nil {
			return fmt.Errorf("encode a carried %s: %w", kind, err)
		}
		v, err := json.Marshal(value)
		if err != nil {
			return fmt.Errorf("encode a carried %s: %w", kind, err)
		}
		out = append(out, Carry{Kind: kind, Key: string(k), Value: v})
		return nil
	}
	for id, b := range mem.Balances {
		if b.Position > t.since {
			if err := add(kindBalance, id, b); err != nil {
				return nil, err
			}
		}
	}
	for k, c := range mem.Checkpoints {
		if c.Position > t.since {
			if err := add(kindCheckpoint, []string{string(k.Projection), k.StreamID},
				checkpointJSON{Projection: k.Projection, Stream: k.StreamID, Version: c.Version, Position: c.Position}); err != nil {
				return nil, err
			}
		}
	}
	for k, g := range mem.GGR {
		if was, ok := t.ggr[k]; !ok || was != *g {
			if err := add(kindGGR, k, g); err != nil {
				return nil, err
			}
			t.ggr[k] = *g
		}
	}
	t.since = upTo
	return out, nil
}

// Restore puts a carried row back into mem.
func (t *Tracker) Restore(mem *projections.Memory, c Carry) error {
	switch c.Kind {
	case kindBalance:
		var b projections.Balance
		if err := json.Unmarshal(c.Value, &b); err != nil {
			return fmt.Errorf("decode a carried balance: %w", err)
		}
		mem.Balances[b.Account] = &b
	case kindCheckpoint:
		var cp checkpointJSON
		if err := json.Unmarshal(c.Value, &cp); err != nil {
			return fmt.Errorf("decode a carried checkpoint: %w", err)
		}
		mem.Checkpoints[projections.StreamKey{Projection: cp.Projection, StreamID: cp.Stream}] =
			projections.StreamCheckpoint{Version: cp.Version, Position: cp.Position}
	case kindGGR:
		var g projections.GGRDelta
		if err := json.Unmarshal(c.Value, &g); err != nil {
			return fmt.Errorf("decode a carried GGR group: %w", err)
		}
		// The day as the projections make it (a UTC midnight), so the key
		// equals theirs.
		d := g.Day.UTC()
		g.Day = time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
		mem.GGR[g.GGRKey] = &g
		t.ggr[g.GGRKey] = g
	default:
		return fmt.Errorf("a carried row of unknown kind %q", c.Kind)
	}
	return nil
}
