package admin

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/netip"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/gateway"
)

// The tokens area (docs/keys-and-admin.md#tokens-area): the client secret
// of the signed launch is sealed at rest, not hashed, so the admin API can
// show it again; every showing is recorded in the reveal trail.

// adminActor names the admin token in the reveal trail: "admin-token:"
// and the first 12 hex digits of a SHA-256 of the token (domain-separated
// from the digest auth compares). It tells which token asked — a trail
// spanning a change of token shows the change — without storing anything
// that authenticates. There is one admin token, so it does not tell
// people apart.
func adminActor(token string) string {
	d := sha256.Sum256([]byte("pitboss admin token fingerprint v1\x00" + token))
	return "admin-token:" + hex.EncodeToString(d[:6])
}

type revealView struct {
	ID         int64  `json:"id"`
	ClientID   string `json:"client_id"`
	RevealedAt string `json:"revealed_at"`
	Actor      string `json:"actor"`
	RemoteAddr string `json:"remote_addr"`
	UserAgent  string `json:"user_agent"`
	Reason     string `json:"reason"`
}

func viewOfReveal(r gateway.SecretReveal) revealView {
	return revealView{ID: r.ID, ClientID: r.ClientID, RevealedAt: wire.FormatTime(r.RevealedAt), Actor: r.Actor,
		RemoteAddr: r.RemoteAddr, UserAgent: r.UserAgent, Reason: r.Reason}
}

type revealRequest struct {
	Reason string `json:"reason"`
}

// requireReveals answers 503 when the reveal trail's store is missing.
func (s *server) requireReveals() error {
	if s.deps.Reveals == nil {
		return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "the client secret's reveal trail is not configured")
	}
	return nil
}

// remoteAddr is the requester's address for the trail: Deps.ClientIP's
// judgement (trusted proxies considered), else the direct peer; "" when
// it cannot be read.
func (s *server) remoteAddr(r *http.Request) string {
	var a netip.Addr
	if s.deps.ClientIP != nil {
		a = s.deps.ClientIP(r)
	} else if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		a = ap.Addr().Unmap()
	}
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

// POST /admin/v1/clients/{id}/client-secret/reveal {reason?}: the client's
// signed-launch secret, unchanged, with the record of this reveal. The
// record is committed before the answer is written, and the answer is
// never cached (Cache-Control: no-store).
func (s *server) revealClientSecret(c echo.Context) error {
	id, err := clientParam(c)
	if err != nil {
		return err
	}
	if err := s.requireReveals(); err != nil {
		return err
	}
	var req revealRequest
	if err := wire.OptionalJSON(c, &req); err != nil {
		return err
	}
	if err := gateway.CheckRevealReason(req.Reason); err != nil {
		return err
	}
	r := c.Request()
	secret, rec, err := s.deps.Reveals.RevealClientSecret(r.Context(), gateway.SecretReveal{
		ClientID: id, RevealedAt: s.now(), Actor: s.actor, RemoteAddr: s.remoteAddr(r),
		UserAgent: gateway.CleanText(r.UserAgent(), gateway.MaxRecordedUserAgentLength), Reason: req.Reason})
	if err != nil {
		return err
	}
	s.log.InfoContext(r.Context(), "admin: client secret revealed", "client_id", id, "reveal_id", rec.ID,
		"actor", rec.Actor, "remote_addr", rec.RemoteAddr, "request_id", wire.RequestID(c))
	noStore(c)
	return wire.OK(c, map[string]any{"client_id": id, "client_secret": secret, "reveal": viewOfReveal(rec)})
}

// GET /admin/v1/clients/{id}/client-secret/reveals?page=&per_page=: the
// reveal trail, newest first.
func (s *server) listReveals(c echo.Context) error {
	id, err := clientParam(c)
	if err != nil {
		return err
	}
	if err := s.requireReveals(); err != nil {
		return err
	}
	page, perPage, err := pageParams(c)
	if err != nil {
		return err
	}
	list, total, err := s.deps.Reveals.ClientSecretReveals(c.Request().Context(), id, page, perPage)
	if err != nil {
		return err
	}
	out := make([]revealView, 0, len(list))
	for _, r := range list {
		out = append(out, viewOfReveal(r))
	}
	return wire.OKPage(c, out, page, perPage, total)
}

// noStore keeps an answer that carries a secret out of every cache.
func noStore(c echo.Context) {
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
}
