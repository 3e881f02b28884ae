package api

import (
	"encoding/hex"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/audit"
	"github.com/pitboss/pitboss/gateway"
)

// Paging of GET /api/v1/audit/events.
const (
	DefaultAuditLimit = 100
	MaxAuditLimit     = 1000
)

// registerAuditRoutes adds the auditor's routes to the /api/v1 group.
func (s *Server) registerAuditRoutes(v1 *echo.Group) {
	v1.GET("/audit/events", s.auditEvents, requireScope(gateway.ScopeAuditRead))
}

// auditEventsPage is the envelope of GET /api/v1/audit/events.
type auditEventsPage struct {
	Success bool           `json:"success"`
	Data    []audit.Record `json:"data"`
	// NextAfter is the after= of the next page: the last position in data,
	// or the after given when data is empty.
	NextAfter int64 `json:"next_after"`
	// Position is the head of the whole chain in the same snapshot, and
	// HeadHash its hash: record them to anchor a later verification.
	Position int64  `json:"position"`
	HeadHash string `json:"head_hash"`
}

// auditEvents answers GET /api/v1/audit/events?after=&limit=: the calling
// client's own events (docs/audit.md), in position order, each with the
// exact stored body and its hashes.
func (s *Server) auditEvents(c echo.Context) error {
	if s.deps.Audit == nil {
		return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "the audit log is not configured on this server")
	}
	after := int64(0)
	if v, ok := wire.QueryValue(c, "after"); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidRequest,
				Message: "after must be a non-negative integer (a ledger position)", Details: map[string]any{"field": "after"}}
		}
		after = n
	}
	limit := DefaultAuditLimit
	if v, ok := wire.QueryValue(c, "limit"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxAuditLimit {
			return &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidRequest,
				Message: "limit must be an integer from 1 to " + strconv.Itoa(MaxAuditLimit), Details: map[string]any{"field": "limit"}}
		}
		limit = n
	}
	page, err := s.deps.Audit.ClientEvents(c.Request().Context(), wire.Principal(c).ClientID, after, limit)
	if err != nil {
		return err
	}
	out := auditEventsPage{Success: true, Data: page.Events, NextAfter: after, Position: page.HeadPosition,
		HeadHash: hex.EncodeToString(page.HeadHash)}
	if out.Data == nil {
		out.Data = []audit.Record{}
	}
	if n := len(page.Events); n > 0 {
		out.NextAfter = page.Events[n-1].Position
	}
	c.Response().Header().Set(HeaderLedgerPosition, strconv.FormatInt(page.HeadPosition, 10))
	return c.JSON(http.StatusOK, out)
}
