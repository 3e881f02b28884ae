package api_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
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
	var doc map[string]any
	if err := json.Unmarshal(oaDocument(t), &doc); err != nil {
		t.Fatal(err)
	}
	pathValues := map[string]string{"client_id": s.client}
	paths := doc["paths"].(map[string]any)
	checked := 0
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		item := paths[p].(map[string]any)
		op, ok := item["get"].(map[string]any)
		if !ok {
			continue
		}
		params := append(oaList(item["parameters"]), oaList(op["parameters"])...)
		path := p
		for _, q := range params {
			q = oaResolve(doc, q)
			if q["in"] == "path" {
				name := q["name"].(string)
				path = strings.Replace(path, "{"+name+"}", url.PathEscape(pathValues[name]), 1)
			}
		}
		for _, q := range params {
			q = oaResolve(doc, q)
			name, _ := q["name"].(string)
			if q["in"] != "query" || (name != "per_page" && name != "limit") {
				continue
			}
			max, ok := oaResolve(doc, asMap(q["schema"]))["maximum"].(float64)
			if !ok {
				t.Errorf("GET %s: %s has no maximum in the document", p, name)
				continue
			}
			r := fzRoute{method: http.MethodGet, auth: oaAuth(op)}
			t.Run("GET "+p+" "+name, func(t *testing.T) {
				r.path = path + "?" + name + "=" + strconv.Itoa(int(max)+1)
				e := apitest.WantError(t, s.send(t, r, nil), http.StatusBadRequest, wire.CodeInvalidRequest)
				if e.Error.Details["field"] != name {
					t.Errorf("details %v, want field %s", e.Error.Details, name)
				}
				r.path = path + "?" + name + "=" + strconv.Itoa(int(max))
				if rec := s.send(t, r, nil); rec.Code >= 400 && rec.Code != http.StatusServiceUnavailable {
					t.Errorf("the maximum %d: %d %s", int(max), rec.Code, rec.Body)
				}
			})
			checked++
		}
	}
	if checked < 10 {
		t.Fatalf("only %d page sizes found in the document", checked)
	}
}
