// Package vlog serves the verifiable log (ledgerlog; docs/audit.md, "The
// verifiable log") over HTTP: each log as C2SP tlog-tiles — the latest
// signed checkpoint, the hash tiles and the entry bundles, at the spec's
// own paths under a prefix — its verifier keys, and inclusion and
// consistency proofs against its checkpoints. One implementation serves a
// client's own log (/api/v1/audit/log, its audit:read key) and the
// platform's (/admin/v1/log, the admin token).
package vlog

import (
	"context"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/audit"
	"github.com/pitboss/pitboss/ledgerlog"
)

// Store reads the logs (adapters/postgres/logstore). Log names are
// ledgerlog's: ledgerlog.PlatformLog or ledgerlog.ClientLog(id).
type Store interface {
	// LatestNote is log's newest signed checkpoint note;
	// domain.ErrNotFound when it has none.
	LatestNote(ctx context.Context, log string) ([]byte, error)
	// NoteOfSize is the signed note of log's checkpoint of exactly size
	// leaves; domain.ErrNotFound when none has that size.
	NoteOfSize(ctx context.Context, log string, size int64) ([]byte, error)
	// Tiles reads log's stored tiles (unverified: the routes check them
	// against a signed root with tlog.TileHashReader before proving).
	Tiles(ctx context.Context, log string) tlog.TileReader
	// Entries are the canonical bodies of log's leaves from .. from+count-1.
	Entries(ctx context.Context, log string, from int64, count int) ([][]byte, error)
	// LeafOf is the leaf index of the event at position in log;
	// domain.ErrNotFound when the log does not hold it (yet).
	LeafOf(ctx context.Context, log string, position int64) (int64, error)
	// EventOf is the position of the event eventID (or, eventID "", the
	// event at position) when it is one of log's, held yet or not;
	// domain.ErrNotFound for another client's event or none.
	EventOf(ctx context.Context, log, eventID string, position int64) (int64, error)
}

// Keys lists the checkpoint keys' public halves (the keys that sign the
// logs' checkpoints are the ledger's checkpoint keys).
type Keys interface {
	Keys(ctx context.Context) ([]audit.CheckpointKey, error)
}

// Handlers serve one kind of log: a client's or the platform's.
type Handlers struct {
	// Store reads the logs; nil answers 503.
	Store Store
	// Keys lists the checkpoint keys; nil answers 503 on the keys route.
	Keys Keys
	// OriginBase is the installation's origin (ledgerlog.Origin's base).
	OriginBase string
	// LogOf is the log of a request (the caller's client's, or the
	// platform's).
	LogOf func(echo.Context) string
}

// Cache-Control of the tile routes: a full tile or bundle never changes;
// a partial one and the checkpoint do as the log grows. Private, not
// public: the client routes answer the same path with each caller's own
// log, so a shared cache must never keep them.
const (
	CacheImmutable = "private, max-age=31536000, immutable"
	CacheMutable   = "private, max-age=5"
)

// Register adds the log's routes under prefix to g, each behind mw:
// prefix/checkpoint, prefix/tile/<L>/<N>[.p/<W>],
// prefix/tile/entries/<N>[.p/<W>], prefix/keys,
// prefix/proofs/inclusion and prefix/proofs/consistency.
func (h Handlers) Register(g *echo.Group, prefix string, mw ...echo.MiddlewareFunc) {
	g.GET(prefix+"/checkpoint", h.checkpoint, mw...)
	// The spec's paths with a tile index below 1000 (one path element),
	// as the OpenAPI document lists them, and every longer index
	// ("x001/x234/067") through the wildcard: one handler reads them all.
	tile := func(c echo.Context) error { return h.tile(c, prefix) }
	for _, p := range []string{"/tile/:level/:index", "/tile/:level/:index.p/:width", "/tile/entries/:index",
		"/tile/entries/:index.p/:width", "/tile/*"} {
		g.GET(prefix+p, tile, mw...)
	}
	g.GET(prefix+"/keys", h.keys, mw...)
	g.GET(prefix+"/proofs/inclusion", h.inclusion, mw...)
	g.GET(prefix+"/proofs/consistency", h.consistency, mw...)
}

// unavailable is the 503 of a server without the log.
func unavailable() error {
	return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "the verifiable log is not configured on this server")
}

// checkpoint answers prefix/checkpoint: the latest signed note as is.
func (h Handlers) checkpoint(c echo.Context) error {
	if h.Store == nil {
		return unavailable()
	}
	msg, err := h.Store.LatestNote(c.Request().Context(), h.LogOf(c))
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderCacheControl, CacheMutable)
	return c.Blob(http.StatusOK, "text/plain; charset=utf-8", msg)
}

// VerifierKey is one element of prefix/keys.
type VerifierKey struct {
	KeyID string `json:"key_id"` // the checkpoint key's id (GET /api/v1/audit/checkpoint-keys)
	// VerifierKey is the note verifier key of the log: its origin as the
	// key name, "<origin>+<hash>+<base64(0x01 || public key)>"
	// (golang.org/x/mod/sumdb/note.NewVerifier reads it).
	VerifierKey string `json:"verifier_key"`
	Active      bool   `json:"active"` // the key new checkpoints are signed with
}

// KeysAnswer is the answer of prefix/keys.
type KeysAnswer struct {
	Origin string        `json:"origin"` // the log's checkpoint origin line
	Keys   []VerifierKey `json:"keys"`   // oldest first
}

// keys answers prefix/keys: the log's origin and one verifier key per
// checkpoint key, under the origin's name as every checkpoint of the log
// is signed.
func (h Handlers) keys(c echo.Context) error {
	if h.Keys == nil {
		return unavailable()
	}
	ks, err := h.Keys.Keys(c.Request().Context())
	if err != nil {
		return err
	}
	origin := ledgerlog.Origin(h.OriginBase, h.LogOf(c))
	out := KeysAnswer{Origin: origin, Keys: make([]VerifierKey, len(ks))}
	for i, k := range ks {
		vk, err := ledgerlog.VerifierKey(origin, k.PublicKey)
		if err != nil {
			return fmt.Errorf("verifier key of %s: %w", k.KeyID, err)
		}
		out.Keys[i] = VerifierKey{KeyID: k.KeyID, VerifierKey: vk, Active: k.Active}
	}
	return wire.OK(c, out)
}
