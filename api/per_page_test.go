package api_test

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"testing"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
)

// TestPageSizeAboveTheCapIsRefused (issue 37, item 6): every list's page
// size parameter (per_page, or the audit routes' limit) above the maximum
// the OpenAPI document gives is one behaviour everywhere — 400
// INVALID_REQUEST naming the parameter — never clamped silently; the
// maximum itself is accepted.
func TestPageSizeAboveTheCapIsRefused(t *testing.T) {
	t.Parallel()
	s := fzHarness(t)
	spec := oaParse(t, oaDocument(t))
	pathValues := map[string]string{"client_id": s.client}
	checked := 0
	for p, item := range spec.model.Paths.PathItems.FromOldest() {
		op := item.Get
		if op == nil {
			continue
		}
		params := append(slices.Clone(item.Parameters), op.Parameters...)
		path := oaFill(p, params, pathValues, url.PathEscape)
		for _, q := range params {
			if q.In != "query" || (q.Name != "per_page" && q.Name != "limit") {
				continue
			}
			var max *float64
			if q.Schema != nil && q.Schema.Schema() != nil {
				max = q.Schema.Schema().Maximum
			}
			if max == nil {
				t.Errorf("GET %s: %s has no maximum in the document", p, q.Name)
				continue
			}
			name := q.Name
			r := fzRoute{method: http.MethodGet, auth: oaAuth(op)}
			t.Run("GET "+p+" "+name, func(t *testing.T) {
				r.path = path + "?" + name + "=" + strconv.Itoa(int(*max)+1)
				e := apitest.WantError(t, s.send(t, r, nil), http.StatusBadRequest, wire.CodeInvalidRequest)
				if e.Error.Details["field"] != name {
					t.Errorf("details %v, want field %s", e.Error.Details, name)
				}
				r.path = path + "?" + name + "=" + strconv.Itoa(int(*max))
				if rec := s.send(t, r, nil); rec.Code >= 400 && rec.Code != http.StatusServiceUnavailable {
					t.Errorf("the maximum %d: %d %s", int(*max), rec.Code, rec.Body)
				}
			})
			checked++
		}
	}
	if checked < 10 {
		t.Fatalf("only %d page sizes found in the document", checked)
	}
}
