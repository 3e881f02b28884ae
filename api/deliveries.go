package api

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// Paging of GET /api/v1/deliveries.
const (
	deliveriesDefaultPerPage = 20
	deliveriesMaxPerPage     = 100
)

// registerDeliveryRoutes adds the delivery log, webhook endpoints and the
// forwarded-callback setting to the authenticated /api/v1 group.
func (s *Server) registerDeliveryRoutes(v1 *echo.Group) {
	// The scope is checked before the stores: a key without it is 403 on
	// any server.
	read := []echo.MiddlewareFunc{requireScope(gateway.ScopeDeliveriesRead), s.requireDeliveryStores}
	write := []echo.MiddlewareFunc{requireScope(gateway.ScopeDeliveriesWrite), s.requireDeliveryStores}
	v1.GET("/deliveries", s.listDeliveries, read...)
	v1.GET("/deliveries/:id", s.getDelivery, read...)
	v1.POST("/deliveries/:id/resend", s.resendDelivery, write...)
	v1.GET("/webhooks", s.listWebhooks, read...)
	v1.POST("/webhooks", s.createWebhook, write...)
	v1.GET("/webhooks/:id", s.getWebhook, read...)
	v1.PATCH("/webhooks/:id", s.updateWebhook, write...)
	v1.DELETE("/webhooks/:id", s.deleteWebhook, write...)
	v1.POST("/webhooks/:id/rotate-secret", s.rotateWebhookSecret, write...)
	v1.GET("/forward-callback", s.getForwardCallback, read...)
	v1.POST("/forward-callback/rotate-secret", s.rotateForwardCallbackSecret, write...)
}

// requireDeliveryStores answers 503 when the server was built without the
// delivery stores.
func (s *Server) requireDeliveryStores(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.deps.Deliveries == nil || s.deps.Webhooks == nil {
			return apiError(http.StatusServiceUnavailable, CodeUnavailable, "deliveries are not configured on this server")
		}
		return next(c)
	}
}

// deliveryTimeLayout writes log times with milliseconds.
const deliveryTimeLayout = "2006-01-02T15:04:05.000Z07:00"

type deliveryAttemptView struct {
	Attempt         int    `json:"attempt"`
	URL             string `json:"url"`
	StartedAt       string `json:"started_at"`
	LatencyMS       rawNum `json:"latency_ms"`
	StatusCode      *int   `json:"status_code"`
	Error           string `json:"error"`
	ResponseExcerpt string `json:"response_excerpt"`
}

type deliveryView struct {
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

func deliveryTime(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := t.UTC().Format(deliveryTimeLayout)
	return &s
}

func deliveryStatusCode(code int) *int {
	if code == 0 {
		return nil
	}
	return &code
}

func viewOfDelivery(d gateway.Delivery, withPayload bool) deliveryView {
	v := deliveryView{ID: d.ID, Target: d.Target, EndpointID: d.EndpointID, EventID: d.EventID, EventType: d.EventType,
		Kind: d.Kind, StreamID: d.StreamID, StreamVersion: d.StreamVersion, Status: d.State, Attempts: d.Attempts,
		NextAttemptAt: deliveryTime(d.NextAttemptAt), LastAttemptAt: deliveryTime(d.LastAttemptAt),
		LastStatusCode: deliveryStatusCode(d.LastStatusCode), LastError: d.LastError,
		DeliveredAt: deliveryTime(d.DeliveredAt), ParkedAt: deliveryTime(d.ParkedAt),
		CreatedAt: d.CreatedAt.UTC().Format(deliveryTimeLayout), Log: []deliveryAttemptView{}}
	for _, a := range d.Log {
		us := a.Latency.Microseconds()
		v.Log = append(v.Log, deliveryAttemptView{Attempt: a.Attempt, URL: a.URL,
			StartedAt: a.StartedAt.UTC().Format(deliveryTimeLayout),
			LatencyMS: rawNum(fmt.Sprintf("%d.%03d", us/1000, us%1000)), StatusCode: deliveryStatusCode(a.StatusCode),
			Error: a.Error, ResponseExcerpt: a.Excerpt})
	}
	if withPayload {
		v.Payload = deliveryRawJSON(d.Payload)
	}
	return v
}

// deliveryQueryInt reads an optional positive integer query parameter.
func deliveryQueryInt(c echo.Context, name string, def, max int) (int, error) {
	raw, ok := queryValue(c, name)
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 || n > max {
		return 0, &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest,
			Message: fmt.Sprintf("%s must be an integer from 1 to %d", name, max), Details: map[string]any{"field": name}}
	}
	return n, nil
}

// deliveryIsUUID reports whether s is a UUID in its canonical text form.
func deliveryIsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, r := range s {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if r != '-' {
				return false
			}
		case (r < '0' || r > '9') && (r < 'a' || r > 'f') && (r < 'A' || r > 'F'):
			return false
		}
	}
	return true
}

// GET /api/v1/deliveries?status=&endpoint_id=&event_id=&page=&per_page=
func (s *Server) listDeliveries(c echo.Context) error {
	f := gateway.DeliveryFilter{State: c.QueryParam("status"), EndpointID: c.QueryParam("endpoint_id"), EventID: c.QueryParam("event_id")}
	if f.State != "" && !slices.Contains(gateway.DeliveryStates, f.State) {
		return &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest,
			Message: "status must be one of " + strings.Join(gateway.DeliveryStates, ", "), Details: map[string]any{"field": "status"}}
	}
	if f.EventID != "" && !deliveryIsUUID(f.EventID) {
		return &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest, Message: "event_id must be a UUID",
			Details: map[string]any{"field": "event_id"}}
	}
	if f.EndpointID != "" {
		if err := domain.ValidateID("endpoint_id", f.EndpointID); err != nil {
			return err
		}
	}
	var err error
	if f.Page, err = deliveryQueryInt(c, "page", 1, 1_000_000); err != nil {
		return err
	}
	if f.PerPage, err = deliveryQueryInt(c, "per_page", deliveriesDefaultPerPage, deliveriesMaxPerPage); err != nil {
		return err
	}
	list, total, err := s.deps.Deliveries.ListDeliveries(c.Request().Context(), principal(c).ClientID, f)
	if err != nil {
		return err
	}
	out := make([]deliveryView, 0, len(list))
	for _, d := range list {
		out = append(out, viewOfDelivery(d, false))
	}
	return c.JSON(http.StatusOK, envelope{Success: true, Data: out,
		Pagination: &pagination{Page: f.Page, PerPage: f.PerPage, Total: total}})
}

// deliveryID reads the :id path parameter; an id no delivery can have is
// simply not found.
func deliveryID(c echo.Context) (string, error) {
	id := c.Param("id")
	if domain.ValidateID("id", id) != nil {
		return "", apiError(http.StatusNotFound, CodeNotFound, "no such delivery")
	}
	return id, nil
}

// GET /api/v1/deliveries/{id}: the delivery, its log and its payload.
func (s *Server) getDelivery(c echo.Context) error {
	id, err := deliveryID(c)
	if err != nil {
		return err
	}
	d, err := s.deps.Deliveries.Delivery(c.Request().Context(), principal(c).ClientID, id)
	if err != nil {
		return err
	}
	return ok(c, viewOfDelivery(d, true))
}

// POST /api/v1/deliveries/{id}/resend: a parked (or succeeded) delivery
// goes back to its queue with a fresh round of attempts.
func (s *Server) resendDelivery(c echo.Context) error {
	id, err := deliveryID(c)
	if err != nil {
		return err
	}
	d, err := s.deps.Deliveries.ResendDelivery(c.Request().Context(), principal(c).ClientID, id)
	if err != nil {
		return err
	}
	return ok(c, viewOfDelivery(d, false))
}
