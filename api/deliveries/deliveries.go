// Package deliveries serves what Pitboss sends to a client and the
// client's say over it (docs/callbacks-and-webhooks.md): the delivery log
// (/api/v1/deliveries), the webhook endpoints (/api/v1/webhooks, and
// /admin/v1/clients/{id}/webhooks through Endpoints) and the forwarded
// callback's setting (/api/v1/forward-callback). Package api registers the
// /api/v1 routes with their scopes; package admin calls Endpoints.
package deliveries

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// Paging of GET /api/v1/deliveries.
const (
	deliveriesDefaultPerPage = 20
	deliveriesMaxPerPage     = 100
)

// Handlers serve the delivery routes of /api/v1 for the calling client
// (wire.Principal).
type Handlers struct {
	deliveries gateway.Deliveries
	webhooks   gateway.Webhooks
	endpoints  Endpoints
}

// New returns the handlers over the delivery log and the webhook store;
// privateCallbacks says whose webhook URLs may be at loopback or private
// addresses (see api.Config).
func New(deliveries gateway.Deliveries, webhooks gateway.Webhooks, privateCallbacks gateway.PrivateTargets) *Handlers {
	return &Handlers{deliveries: deliveries, webhooks: webhooks,
		endpoints: Endpoints{Store: webhooks, PrivateCallbacks: privateCallbacks}}
}

// RequireStores answers 503 when the server was built without the
// delivery stores.
func (h *Handlers) RequireStores(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if h.deliveries == nil || h.webhooks == nil {
			return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "deliveries are not configured on this server")
		}
		return next(c)
	}
}

type deliveryAttemptView struct {
	Attempt         int         `json:"attempt"`
	URL             string      `json:"url"`
	StartedAt       string      `json:"started_at"`
	LatencyMS       wire.Number `json:"latency_ms"`
	StatusCode      *int        `json:"status_code"`
	Error           string      `json:"error"`
	ResponseExcerpt string      `json:"response_excerpt"`
}

// View is a delivery as the log shows it (and the console's overview
// lists parked ones).
type View struct {
	ID             string                `json:"id"`
	Target         string                `json:"target"`
	EndpointID     string                `json:"endpoint_id"`
	EventID        string                `json:"event_id"`
	EventType      string                `json:"event_type"`
	Kind           string                `json:"kind"`
	StreamID       string                `json:"stream_id"`
	StreamVersion  int64                 `json:"stream_version"`
	Status         string                `json:"status"`
	Attempts       int                   `json:"attempts"`
	NextAttemptAt  *string               `json:"next_attempt_at"`
	LastAttemptAt  *string               `json:"last_attempt_at"`
	LastStatusCode *int                  `json:"last_status_code"`
	LastError      string                `json:"last_error"`
	DeliveredAt    *string               `json:"delivered_at"`
	ParkedAt       *string               `json:"parked_at"`
	CreatedAt      string                `json:"created_at"`
	Log            []deliveryAttemptView `json:"log"`
	Payload        deliveryRawJSON       `json:"payload,omitempty"`
}

// deliveryRawJSON writes stored JSON bytes as they are.
type deliveryRawJSON []byte

// MarshalJSON returns the bytes verbatim.
func (r deliveryRawJSON) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	return r, nil
}

func deliveryStatusCode(code int) *int {
	if code == 0 {
		return nil
	}
	return &code
}

// ViewOf is d as the log shows it; withPayload adds the payload sent.
func ViewOf(d gateway.Delivery, withPayload bool) View {
	v := View{ID: d.ID, Target: d.Target, EndpointID: d.EndpointID, EventID: d.EventID, EventType: d.EventType,
		Kind: d.Kind, StreamID: d.StreamID, StreamVersion: d.StreamVersion, Status: d.State, Attempts: d.Attempts,
		NextAttemptAt: wire.OptionalTime(d.NextAttemptAt), LastAttemptAt: wire.OptionalTime(d.LastAttemptAt),
		LastStatusCode: deliveryStatusCode(d.LastStatusCode), LastError: d.LastError,
		DeliveredAt: wire.OptionalTime(d.DeliveredAt), ParkedAt: wire.OptionalTime(d.ParkedAt),
		CreatedAt: wire.FormatTime(d.CreatedAt), Log: []deliveryAttemptView{}}
	for _, a := range d.Log {
		us := a.Latency.Microseconds()
		v.Log = append(v.Log, deliveryAttemptView{Attempt: a.Attempt, URL: a.URL,
			StartedAt: wire.FormatTime(a.StartedAt),
			LatencyMS: wire.Number(fmt.Sprintf("%d.%03d", us/1000, us%1000)), StatusCode: deliveryStatusCode(a.StatusCode),
			Error: a.Error, ResponseExcerpt: a.Excerpt})
	}
	if withPayload {
		v.Payload = deliveryRawJSON(d.Payload)
	}
	return v
}

// ListDeliveries answers GET
// /api/v1/deliveries?status=&endpoint_id=&event_id=&page=&per_page=.
func (h *Handlers) ListDeliveries(c echo.Context) error {
	f := gateway.DeliveryFilter{State: c.QueryParam("status"), EndpointID: c.QueryParam("endpoint_id"), EventID: c.QueryParam("event_id")}
	if f.State != "" && !slices.Contains(gateway.DeliveryStates, f.State) {
		return &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidRequest,
			Message: "status must be one of " + strings.Join(gateway.DeliveryStates, ", "), Details: map[string]any{"field": "status"}}
	}
	if f.EventID != "" && !wire.IsUUID(f.EventID) {
		return &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidRequest, Message: "event_id must be a UUID",
			Details: map[string]any{"field": "event_id"}}
	}
	if f.EndpointID != "" {
		if err := domain.ValidateID("endpoint_id", f.EndpointID); err != nil {
			return err
		}
	}
	var err error
	if f.Page, err = wire.QueryInt(c, "page", 1, 1_000_000); err != nil {
		return err
	}
	if f.PerPage, err = wire.QueryInt(c, "per_page", deliveriesDefaultPerPage, deliveriesMaxPerPage); err != nil {
		return err
	}
	list, total, err := h.deliveries.ListDeliveries(c.Request().Context(), wire.Principal(c).ClientID, f)
	if err != nil {
		return err
	}
	out := make([]View, 0, len(list))
	for _, d := range list {
		out = append(out, ViewOf(d, false))
	}
	return wire.OKPage(c, out, f.Page, f.PerPage, total)
}

// deliveryID reads the :id path parameter; an id no delivery can have is
// simply not found.
func deliveryID(c echo.Context) (string, error) {
	id := c.Param("id")
	if domain.ValidateID("id", id) != nil {
		return "", wire.NewError(http.StatusNotFound, wire.CodeNotFound, "no such delivery")
	}
	return id, nil
}

// Delivery answers GET /api/v1/deliveries/{id}: the delivery, its log and
// its payload.
func (h *Handlers) Delivery(c echo.Context) error {
	id, err := deliveryID(c)
	if err != nil {
		return err
	}
	d, err := h.deliveries.Delivery(c.Request().Context(), wire.Principal(c).ClientID, id)
	if err != nil {
		return err
	}
	return wire.OK(c, ViewOf(d, true))
}

// ResendDelivery answers POST /api/v1/deliveries/{id}/resend: a parked (or
// succeeded) delivery goes back to its queue with a fresh round of
// attempts.
func (h *Handlers) ResendDelivery(c echo.Context) error {
	id, err := deliveryID(c)
	if err != nil {
		return err
	}
	d, err := h.deliveries.ResendDelivery(c.Request().Context(), wire.Principal(c).ClientID, id)
	if err != nil {
		return err
	}
	return wire.OK(c, ViewOf(d, false))
}
