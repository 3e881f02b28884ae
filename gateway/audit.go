package gateway

import (
	"context"

	"github.com/pitboss/pitboss/audit"
)

// AuditLog pages the event log for GET /api/v1/audit/events.
type AuditLog interface {
	// ClientEvents returns up to limit events of clientID (its streams, and
	// data.client_id is clientID) with a position above after, in position
	// order, and the head of the whole chain, all read in one snapshot.
	ClientEvents(ctx context.Context, clientID string, after int64, limit int) (AuditPage, error)
}

// AuditPage is one page of a client's events.
type AuditPage struct {
	Events       []audit.Record
	HeadPosition int64  // the last position in the store, every client's events counted
	HeadHash     []byte // its hash; nil for an empty store
}
