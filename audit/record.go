package audit

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"
)

// Record is one stored event row exactly as the event store holds it: the
// columns and the canonical body bytes the hash covers.
type Record struct {
	Position      int64
	EventID       string
	StreamID      string
	StreamVersion int64
	Type          string
	OccurredAt    time.Time
	Body          []byte
	PrevHash      []byte
	Hash          []byte
}

// Line is the exported form of a Record: one NDJSON line of `pitboss
// export`, one element of GET /api/v1/audit/events.
//
// Body is the stored body as a JSON string: its UTF-8 bytes are exactly the
// bytes the hash covers, so an outside party checks
// hash == SHA-256(hex_decode(prev_hash) || utf8(body)) with any JSON parser
// and any SHA-256. (Bodies are JSON text, so always valid UTF-8; a string
// keeps them readable where base64 would not.)
type Line struct {
	Position      int64  `json:"position"`
	EventID       string `json:"event_id"`
	StreamID      string `json:"stream_id"`
	StreamVersion int64  `json:"stream_version"`
	Type          string `json:"type"`
	OccurredAt    string `json:"occurred_at"` // the occurred_at column, RFC 3339 UTC (microseconds); the body has the exact time
	Body          string `json:"body"`
	PrevHash      string `json:"prev_hash"` // lower-case hex
	Hash          string `json:"hash"`      // lower-case hex
}

// Line returns the exported form of r. A body that is not valid UTF-8 could
// not travel as a JSON string byte for byte, so it is refused rather than
// silently altered (Postgres json columns never hold one).
func (r Record) Line() (Line, error) {
	if !utf8.Valid(r.Body) {
		return Line{}, fmt.Errorf("event at position %d: body is not valid UTF-8", r.Position)
	}
	return Line{
		Position: r.Position, EventID: r.EventID, StreamID: r.StreamID, StreamVersion: r.StreamVersion,
		Type: r.Type, OccurredAt: r.OccurredAt.UTC().Format(time.RFC3339Nano), Body: string(r.Body),
		PrevHash: hex.EncodeToString(r.PrevHash), Hash: hex.EncodeToString(r.Hash),
	}, nil
}

// MarshalJSON writes r in its exported form.
func (r Record) MarshalJSON() ([]byte, error) {
	l, err := r.Line()
	if err != nil {
		return nil, err
	}
	return json.Marshal(l)
}

// short abbreviates a hex hash for messages.
func short(b []byte) string {
	s := hex.EncodeToString(b)
	if len(s) > 16 {
		return s[:16] + "…"
	}
	if s == "" {
		return "(empty)"
	}
	return s
}
