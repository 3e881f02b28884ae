// Package usage answers usage reports (docs/keys-and-admin.md): a
// client's requests per period and status class, to the client (GET
// /api/v1/usage) and to the admin (GET /admin/v1/clients/{id}/usage) with
// one implementation. The counts are made by api.UsageMeter.
package usage

import (
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// Reports answers usage reports: GET /api/v1/usage for the calling client
// and GET /admin/v1/clients/{id}/usage for any client, with the same
// parameters and answers.
type Reports struct {
	// Store reads the counts; nil answers 503 (usage monitoring is not
	// configured).
	Store gateway.UsageStore
	// Now is the clock of the default range (nil: the system clock).
	Now func() time.Time
}

func (r Reports) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Answer answers the usage of clientID per period:
// ?from=&to=&granularity=minute|hour|day&key_id=, every key of the client
// unless key_id is given.
func (r Reports) Answer(c echo.Context, clientID string) error {
	if r.Store == nil {
		return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "usage monitoring is not configured")
	}
	q, err := r.query(c, clientID)
	if err != nil {
		return err
	}
	buckets, err := r.Store.Usage(c.Request().Context(), q)
	if err != nil {
		return err
	}
	v := view{ClientID: clientID, From: q.From.Format(timeLayout), To: q.To.Format(timeLayout),
		Granularity: q.Granularity, Buckets: make([]bucketView, 0, len(buckets))}
	if q.KeyID != "" {
		v.KeyID = &q.KeyID
	}
	for _, b := range buckets {
		cl := classesView{Class2xx: b.ByClass[2], Class3xx: b.ByClass[3], Class4xx: b.ByClass[4], Class5xx: b.ByClass[5]}
		v.Buckets = append(v.Buckets, bucketView{Start: b.Start.UTC().Format(timeLayout), Requests: b.Requests,
			classesView: cl})
		v.Requests += b.Requests
		v.ByStatus.Class2xx += cl.Class2xx
		v.ByStatus.Class3xx += cl.Class3xx
		v.ByStatus.Class4xx += cl.Class4xx
		v.ByStatus.Class5xx += cl.Class5xx
	}
	return wire.OK(c, v)
}

type classesView struct {
	Class2xx int64 `json:"2xx"`
	Class3xx int64 `json:"3xx"`
	Class4xx int64 `json:"4xx"`
	Class5xx int64 `json:"5xx"`
}

type bucketView struct {
	Start    string `json:"start"`
	Requests int64  `json:"requests"`
	classesView
}

type view struct {
	ClientID    string       `json:"client_id"`
	KeyID       *string      `json:"key_id"`
	From        string       `json:"from"`
	To          string       `json:"to"`
	Granularity string       `json:"granularity"`
	Requests    int64        `json:"requests"`
	ByStatus    classesView  `json:"by_status"`
	Buckets     []bucketView `json:"buckets"`
}

const timeLayout = time.RFC3339

// parseTime reads an RFC 3339 time or a date (midnight UTC).
func parseTime(field, v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t.UTC(), wire.CheckTimeRange(field, t)
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, wire.CheckTimeRange(field, t)
	}
	return time.Time{}, &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidRequest,
		Message: field + " must be an RFC 3339 time (2026-03-14T15:00:00Z) or a date (2026-03-14)",
		Details: map[string]any{"field": field}}
}

// query reads ?from=&to=&granularity=&key_id= for clientID. Defaults:
// granularity hour, to now, from 24 hours before to. from is rounded down
// and to up to the granularity (UTC).
func (r Reports) query(c echo.Context, clientID string) (gateway.UsageQuery, error) {
	q := gateway.UsageQuery{ClientID: clientID, Granularity: c.QueryParam("granularity"), KeyID: c.QueryParam("key_id")}
	if q.Granularity == "" {
		q.Granularity = gateway.GranularityHour
	}
	step, ok := gateway.GranularityStep(q.Granularity)
	if !ok {
		return q, &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidRequest,
			Message: "granularity must be minute, hour or day", Details: map[string]any{"field": "granularity"}}
	}
	if q.KeyID != "" && domain.ValidateID("key_id", q.KeyID) != nil {
		return q, &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidRequest,
			Message: "key_id is not a key id", Details: map[string]any{"field": "key_id"}}
	}
	var err error
	q.To = r.now()
	if v := c.QueryParam("to"); v != "" {
		if q.To, err = parseTime("to", v); err != nil {
			return q, err
		}
	}
	q.From = q.To.Add(-24 * time.Hour)
	if v := c.QueryParam("from"); v != "" {
		if q.From, err = parseTime("from", v); err != nil {
			return q, err
		}
	}
	q.From = q.From.UTC().Truncate(step)
	if t := q.To.UTC().Truncate(step); t.Before(q.To) {
		q.To = t.Add(step)
	} else {
		q.To = t
	}
	if !q.From.Before(q.To) {
		return q, &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidRequest,
			Message: "from must be before to", Details: map[string]any{"field": "from"}}
	}
	if n := q.To.Sub(q.From) / step; n > gateway.MaxUsageBuckets {
		return q, &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidRequest,
			Message: fmt.Sprintf("the range spans %d %ss; at most %d per query: narrow it or use a coarser granularity",
				n, q.Granularity, gateway.MaxUsageBuckets),
			Details: map[string]any{"field": "from", "max_buckets": gateway.MaxUsageBuckets}}
	}
	return q, nil
}
