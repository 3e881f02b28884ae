package admin

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

type keyView struct {
	ID          string   `json:"id"`
	ClientID    string   `json:"client_id"`
	Prefix      string   `json:"prefix"`
	Label       string   `json:"label"`
	Environment string   `json:"environment"`
	Scopes      []string `json:"scopes"`
	Status      string   `json:"status"`
	CreatedAt   string   `json:"created_at"`
	ExpiresAt   *string  `json:"expires_at"`
	RevokedAt   *string  `json:"revoked_at"`
	LastUsedAt  *string  `json:"last_used_at"`
	ReplacedBy  *string  `json:"replaced_by"`
	// Key is the whole key: present only in the answers of issue and
	// rotate, the one time it is shown.
	Key string `json:"key,omitempty"`
}

func viewOfKey(k gateway.APIKey, now time.Time) keyView {
	v := keyView{ID: k.ID, ClientID: k.ClientID, Prefix: k.Prefix, Label: k.Label, Environment: k.Environment,
		Scopes: k.Scopes, Status: k.State(now), CreatedAt: wire.FormatTime(k.CreatedAt), ExpiresAt: wire.OptionalTime(k.ExpiresAt),
		RevokedAt: wire.OptionalTime(k.RevokedAt), LastUsedAt: wire.OptionalTime(k.LastUsedAt)}
	if k.ReplacedBy != "" {
		v.ReplacedBy = &k.ReplacedBy
	}
	if v.Scopes == nil {
		v.Scopes = []string{}
	}
	return v
}

// keyParams reads :client and :key of a key's route; an id no client or
// key can have is not found.
func keyParams(c echo.Context) (client, key string, err error) {
	if client, err = clientParam(c); err != nil {
		return "", "", err
	}
	key = c.Param("key")
	if domain.ValidateID("key", key) != nil {
		return "", "", wire.NewError(http.StatusNotFound, wire.CodeNotFound, "no such API key")
	}
	return client, key, nil
}

// GET /admin/v1/clients/{id}/keys: every key, newest first, without
// secrets.
func (s *server) listKeys(c echo.Context) error {
	id, err := s.knownClient(c)
	if err != nil {
		return err
	}
	keys, err := s.deps.Clients.ListAPIKeys(c.Request().Context(), id)
	if err != nil {
		return err
	}
	now := s.now()
	out := make([]keyView, 0, len(keys))
	for _, k := range keys {
		out = append(out, viewOfKey(k, now))
	}
	return wire.OK(c, out)
}

// GET /admin/v1/clients/{id}/keys/{key_id}
func (s *server) getKey(c echo.Context) error {
	id, kid, err := keyParams(c)
	if err != nil {
		return err
	}
	k, err := s.deps.Clients.GetAPIKey(c.Request().Context(), id, kid)
	if err != nil {
		return err
	}
	return wire.OK(c, viewOfKey(k, s.now()))
}

type issueKeyRequest struct {
	Scopes    []string   `json:"scopes"`
	Label     string     `json:"label"`
	ExpiresAt *wire.Time `json:"expires_at"`
}

// POST /admin/v1/clients/{id}/keys {scopes, label?, expires_at?}: a new
// key of the client's environment. The answer's key is the only time the
// key is shown.
func (s *server) issueKey(c echo.Context) error {
	id, err := clientParam(c)
	if err != nil {
		return err
	}
	var req issueKeyRequest
	if err := wire.BindJSON(c, &req); err != nil {
		return err
	}
	scopes, err := gateway.CheckScopes(req.Scopes)
	if err != nil {
		return err
	}
	if err := gateway.CheckKeyLabel(req.Label); err != nil {
		return err
	}
	if err := gateway.CheckExpiry(wire.TimePtr(req.ExpiresAt), s.now()); err != nil {
		return err
	}
	k, err := s.deps.Clients.IssueAPIKey(c.Request().Context(),
		gateway.KeySpec{ClientID: id, Scopes: scopes, Label: req.Label, ExpiresAt: wire.TimePtr(req.ExpiresAt)})
	if err != nil {
		return err
	}
	s.log.InfoContext(c.Request().Context(), "admin: API key issued", "client_id", id, "key_id", k.ID,
		"scopes", k.Scopes, "request_id", wire.RequestID(c))
	v := viewOfKey(k.APIKey, s.now())
	v.Key = k.Secret
	noStore(c)
	return wire.OK(c, v)
}

// rotatedKeyView is the new key with the key it replaces.
type rotatedKeyView struct {
	keyView
	Replaced keyView `json:"replaced"`
}

type rotateKeyRequest struct {
	GracePeriodSeconds *int64     `json:"grace_period_seconds"`
	ExpiresAt          *wire.Time `json:"expires_at"`
}

// POST /admin/v1/clients/{id}/keys/{key_id}/rotate {grace_period_seconds?,
// expires_at?}: a new key with the old one's scopes and label, shown once.
// The old key keeps working for the grace period (default 24 h, 0 ends it
// now) and is then expired. A key is rotated once: rotating it again is
// 409 KEY_ALREADY_ROTATED, so a retried call never mints two keys.
func (s *server) rotateKey(c echo.Context) error {
	id, kid, err := keyParams(c)
	if err != nil {
		return err
	}
	var req rotateKeyRequest
	if err := wire.OptionalJSON(c, &req); err != nil {
		return err
	}
	grace := gateway.DefaultRotationGrace
	if req.GracePeriodSeconds != nil {
		if *req.GracePeriodSeconds < 0 || *req.GracePeriodSeconds > int64(gateway.MaxRotationGrace/time.Second) {
			return gateway.CheckGrace(-1)
		}
		grace = time.Duration(*req.GracePeriodSeconds) * time.Second
	}
	if err := gateway.CheckExpiry(wire.TimePtr(req.ExpiresAt), s.now()); err != nil {
		return err
	}
	k, old, err := s.deps.Clients.RotateAPIKey(c.Request().Context(),
		gateway.RotateSpec{ClientID: id, KeyID: kid, Grace: grace, ExpiresAt: wire.TimePtr(req.ExpiresAt)})
	if err != nil {
		return err
	}
	s.log.InfoContext(c.Request().Context(), "admin: API key rotated", "client_id", id, "old_key_id", kid,
		"key_id", k.ID, "grace", grace.String(), "request_id", wire.RequestID(c))
	now := s.now()
	v := viewOfKey(k.APIKey, now)
	v.Key = k.Secret
	noStore(c)
	return wire.OK(c, rotatedKeyView{keyView: v, Replaced: viewOfKey(old, now)})
}

// POST /admin/v1/clients/{id}/keys/{key_id}/revoke: the key stops working
// at once (every API process looks keys up per request). Revoking a
// revoked key answers it unchanged.
func (s *server) revokeKey(c echo.Context) error {
	id, kid, err := keyParams(c)
	if err != nil {
		return err
	}
	k, err := s.deps.Clients.RevokeAPIKey(c.Request().Context(), id, kid)
	if err != nil {
		return err
	}
	s.log.InfoContext(c.Request().Context(), "admin: API key revoked", "client_id", id, "key_id", kid, "request_id", wire.RequestID(c))
	return wire.OK(c, viewOfKey(k, s.now()))
}
