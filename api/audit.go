package api

import (
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/vlog"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/audit"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/ledgerlog"
)

// Paging of GET /api/v1/audit/events.
const (
	DefaultAuditLimit = 100
	MaxAuditLimit     = 1000
)

// registerAuditRoutes adds the auditor's routes to the /api/v1 group.
func (s *Server) registerAuditRoutes(v1 *echo.Group) {
	v1.GET("/audit/events", s.auditEvents, requireScope(gateway.ScopeAuditRead))
	v1.GET("/audit/checkpoints", s.auditCheckpoints, requireScope(gateway.ScopeAuditRead))
	v1.GET("/audit/checkpoint-keys", s.auditCheckpointKeys, requireScope(gateway.ScopeAuditRead))
	vlog.Handlers{Store: s.deps.Log, Keys: s.deps.Checkpoints, OriginBase: s.cfg.LogOrigin,
		LogOf: func(c echo.Context) string { return ledgerlog.ClientLog(wire.Principal(c).ClientID) },
	}.Register(v1, "/audit/log", requireScope(gateway.ScopeAuditRead))
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
	after, limit, err := auditPaging(c, "a ledger position")
	if err != nil {
		return err
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

// auditPaging reads after= (a non-negative integer: what names) and limit=
// (1 to MaxAuditLimit) of the audit routes.
func auditPaging(c echo.Context, names string) (after int64, limit int, err error) {
	if v, ok := wire.QueryValue(c, "after"); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return 0, 0, &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidRequest,
				Message: "after must be a non-negative integer (" + names + ")", Details: map[string]any{"field": "after"}}
		}
		after = n
	}
	limit = DefaultAuditLimit
	if v, ok := wire.QueryValue(c, "limit"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxAuditLimit {
			return 0, 0, &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidRequest,
				Message: "limit must be an integer from 1 to " + strconv.Itoa(MaxAuditLimit), Details: map[string]any{"field": "limit"}}
		}
		limit = n
	}
	return after, limit, nil
}

// checkpointsPage is the envelope of GET /api/v1/audit/checkpoints.
type checkpointsPage struct {
	Success bool                     `json:"success"`
	Data    []audit.CheckpointRecord `json:"data"`
	// NextAfter is the after= of the next page: the last id in data, or
	// the after given when data is empty.
	NextAfter int64 `json:"next_after"`
}

// auditCheckpoints answers GET /api/v1/audit/checkpoints?after=&limit=:
// the calling client's own signed checkpoints, oldest first
// (docs/audit.md, "Signed checkpoints").
func (s *Server) auditCheckpoints(c echo.Context) error {
	if s.deps.Checkpoints == nil {
		return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "signed checkpoints are not configured on this server")
	}
	after, limit, err := auditPaging(c, "a checkpoint id")
	if err != nil {
		return err
	}
	cps, err := s.deps.Checkpoints.ClientCheckpoints(c.Request().Context(), wire.Principal(c).ClientID, after, limit)
	if err != nil {
		return err
	}
	out := checkpointsPage{Success: true, Data: make([]audit.CheckpointRecord, len(cps)), NextAfter: after}
	for i, cp := range cps {
		out.Data[i] = cp.Record()
	}
	if n := len(cps); n > 0 {
		out.NextAfter = cps[n-1].ID
	}
	return c.JSON(http.StatusOK, out)
}

// checkpointKey is one element of GET /api/v1/audit/checkpoint-keys.
type checkpointKey struct {
	KeyID        string `json:"key_id"`
	PublicKey    string `json:"public_key"`     // standard base64 of the raw 32 bytes
	PublicKeyPEM string `json:"public_key_pem"` // SubjectPublicKeyInfo PEM
	CreatedAt    string `json:"created_at"`
	Active       bool   `json:"active"`
}

// auditCheckpointKeys answers GET /api/v1/audit/checkpoint-keys: every
// checkpoint signing key's public half, oldest first.
func (s *Server) auditCheckpointKeys(c echo.Context) error {
	if s.deps.Checkpoints == nil {
		return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "signed checkpoints are not configured on this server")
	}
	keys, err := s.deps.Checkpoints.Keys(c.Request().Context())
	if err != nil {
		return err
	}
	out := make([]checkpointKey, len(keys))
	for i, k := range keys {
		out[i] = checkpointKey{KeyID: k.KeyID, PublicKey: base64.StdEncoding.EncodeToString(k.PublicKey),
			PublicKeyPEM: audit.PublicKeyPEM(k.PublicKey), CreatedAt: k.CreatedAt.UTC().Format(time.RFC3339Nano), Active: k.Active}
	}
	return c.JSON(http.StatusOK, struct {
		Success bool            `json:"success"`
		Data    []checkpointKey `json:"data"`
	}{true, out})
}
