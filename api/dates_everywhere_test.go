package api_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/api/apitest"
)

// The extreme dates (issue 37, item 3): the years PostgreSQL cannot hold
// (0, 10000) and the first and last days it can, in every form a date or
// time takes here.
var extremeDates = map[string][]string{
	"date":      {"0000-01-01", "0001-01-01", "9999-12-31", "10000-01-01"},
	"date-time": {"0000-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59Z", "9999-12-31T23:30:00-01:00", "10000-01-01T00:00:00Z"},
	"month":     {"0000-01", "0001-01", "9999-12", "10000-01"},
}

// datesUndeclared are the date fields of request bodies that the document
// types as plain strings (a day or a month), by operation.
var datesUndeclared = map[string]map[string]string{
	"POST /admin/v1/clients/{client_id}/statements": {"start": "date"},
}

// TestExtremeDatesEverywhere sends each extreme date to every date and
// time parameter and request body field of the OpenAPI document, one at a
// time, the rest of the request valid: the answer is a 4xx or a correct
// answer, never a 5xx (a date the database cannot hold used to reach a
// query: SQLSTATE 22008). A body with a date field needs its valid body
// in validBodies; the test fails naming one that has none.
func TestExtremeDatesEverywhere(t *testing.T) {
	t.Parallel()
	// The read models run, so a statement's close reaches its queries.
	s := fzHarness(t, func(o *apitest.Options) { o.ReadModels = true })
	s.WaitHistory(s.key, s.Head())
	spec := oaParse(t, oaDocument(t))
	validBodies := map[string]string{
		"POST /admin/v1/clients/{client_id}/statements": `{"provider":"fzprov","period":"day","start":"2025-01-01"}`,
		"PUT /admin/v1/fx-rates":                        `{"rates":[{"day":"2025-01-01","base":"EUR","quote":"USD","rate":"1.1"}]}`,
		"POST /admin/v1/deals": `{"provider":"fzprov","currency":"EUR","valid_from":"2099-01-01","kind":"tiered","mode":"whole",` +
			`"bands":[{"from":"0","to":"10","rate":"0.1"},{"from":"10","rate":"0.2"}],"carry_forward":true}`,
		"POST /admin/v1/clients/{client_id}/keys":                 `{"scopes":["wallet:read"],"label":"dates"}`,
		"POST /admin/v1/clients/{client_id}/keys/{key_id}/rotate": `{}`,
		"POST /api/v1/campaigns": `{"campaign_id":"fz-dates","provider":"fzprov","games":["fzgame"],"currency":"EUR",` +
			`"bet_value":"0.10","free_bets":1,"valid_from":"2099-01-01T00:00:00Z","valid_until":"2099-02-01T00:00:00Z"}`,
	}
	pathValues := map[string]string{"client_id": s.client, "key_id": s.keyID, "webhook_id": s.webhookID,
		"provider": s.provider, "day": "2025-01-01", "id": "x"}
	sent := 0
	for p, item := range spec.model.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			m := strings.ToUpper(method)
			key := m + " " + p
			auth := oaAuth(op)
			params := append(slices.Clone(item.Parameters), op.Parameters...)
			send := func(path string, body []byte) {
				t.Helper()
				r := fzRoute{method: m, path: path, auth: auth}
				t.Run(m+" "+path+" "+string(body), func(t *testing.T) {
					rec := s.send(t, r, body)
					if rec.Code >= 500 {
						t.Fatalf("%d %s", rec.Code, rec.Body)
					}
				})
				sent++
			}
			fill := func(override map[string]string) string {
				values := maps.Clone(pathValues)
				maps.Copy(values, override)
				return oaFill(p, params, values, url.PathEscape)
			}
			var body []byte
			if m == http.MethodPost || m == http.MethodPut || m == http.MethodPatch {
				body = []byte(`{}`)
				if v, ok := validBodies[key]; ok {
					body = []byte(v)
				}
			}
			for _, q := range params {
				kind := oaDateKind(q.Schema)
				if kind == "" || (q.In != "query" && q.In != "path") {
					continue
				}
				for _, v := range extremeDates[kind] {
					if q.In == "path" {
						send(fill(map[string]string{q.Name: v}), body)
					} else {
						send(fill(nil)+"?"+url.Values{q.Name: {v}}.Encode(), body)
					}
				}
			}
			fields := oaBodyDates(op)
			maps.Copy(fields, datesUndeclared[key])
			if len(fields) == 0 {
				continue
			}
			valid, ok := validBodies[key]
			if !ok {
				t.Errorf("%s has date fields %v: add its valid body to validBodies", key, fields)
				continue
			}
			for field, kind := range fields {
				for _, v := range extremeDates[kind] {
					send(fill(nil), oaSetField(t, valid, field, v))
				}
				if key == "POST /admin/v1/clients/{client_id}/statements" && field == "start" {
					// A month period's start is a month.
					month := string(oaSetField(t, valid, "period", "month"))
					for _, v := range extremeDates["month"] {
						send(fill(nil), oaSetField(t, month, field, v))
					}
				}
			}
		}
	}
	if strings.Contains(s.logs.String(), "panic in handler") {
		t.Fatalf("a handler panicked:\n%s", s.logs.String())
	}
	if sent < 60 {
		t.Fatalf("only %d requests: the document's dates were not all found", sent)
	}
}

// oaSetField is body with field ("a" or "a.b", the first item of array a)
// set to v.
func oaSetField(t *testing.T, body, field, v string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	if outer, inner, ok := strings.Cut(field, "."); ok {
		items, _ := m[outer].([]any)
		if len(items) == 0 {
			t.Fatalf("valid body %s has no %s items", body, outer)
		}
		items[0].(map[string]any)[inner] = v
	} else {
		m[field] = v
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
