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
	var doc map[string]any
	if err := json.Unmarshal(oaDocument(t), &doc); err != nil {
		t.Fatal(err)
	}
	validBodies := map[string]string{
		"POST /admin/v1/clients/{client_id}/statements": `{"provider":"fzprov","period":"day","start":"2025-01-01"}`,
		"PUT /admin/v1/fx-rates":                        `{"rates":[{"day":"2025-01-01","base":"EUR","quote":"USD","rate":"1.1"}]}`,
		"POST /admin/v1/deals": `{"provider":"fzprov","currency":"EUR","valid_from":"2099-01-01","kind":"tiered","mode":"whole",` +
			`"bands":[{"from":"0","to":"10","rate":"0.1"},{"from":"10","rate":"0.2"}],"carry_forward":true}`,
		"POST /admin/v1/clients/{client_id}/keys":                 `{"scopes":["wallet:read"],"label":"dates"}`,
		"POST /admin/v1/clients/{client_id}/keys/{key_id}/rotate": `{}`,
	}
	pathValues := map[string]string{"client_id": s.client, "key_id": s.keyID, "webhook_id": s.webhookID,
		"provider": s.provider, "day": "2025-01-01", "id": "x"}
	paths := doc["paths"].(map[string]any)
	sent := 0
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		item := paths[p].(map[string]any)
		for _, method := range []string{"get", "post", "put", "patch", "delete"} {
			op, ok := item[method].(map[string]any)
			if !ok {
				continue
			}
			m := strings.ToUpper(method)
			key := m + " " + p
			auth := oaAuth(op)
			params := append(oaList(item["parameters"]), oaList(op["parameters"])...)
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
				path := p
				for _, q := range params {
					q = oaResolve(doc, q)
					if q["in"] != "path" {
						continue
					}
					name := q["name"].(string)
					v := pathValues[name]
					if o, ok := override[name]; ok {
						v = o
					}
					path = strings.Replace(path, "{"+name+"}", url.PathEscape(v), 1)
				}
				return path
			}
			var body []byte
			if m == http.MethodPost || m == http.MethodPut || m == http.MethodPatch {
				body = []byte(`{}`)
				if v, ok := validBodies[key]; ok {
					body = []byte(v)
				}
			}
			for _, q := range params {
				q = oaResolve(doc, q)
				kind := oaDateKind(doc, q["schema"])
				if kind == "" || (q["in"] != "query" && q["in"] != "path") {
					continue
				}
				name := q["name"].(string)
				for _, v := range extremeDates[kind] {
					if q["in"] == "path" {
						send(fill(map[string]string{name: v}), body)
					} else {
						send(fill(nil)+"?"+url.Values{name: {v}}.Encode(), body)
					}
				}
			}
			fields := oaBodyDates(doc, op)
			for f, kind := range datesUndeclared[key] {
				fields[f] = kind
			}
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

func oaList(v any) []map[string]any {
	var out []map[string]any
	for _, x := range asSlice(v) {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

// oaResolve follows a local $ref ("#/components/...").
func oaResolve(doc map[string]any, m map[string]any) map[string]any {
	for m != nil {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		var cur any = doc
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			cur = cur.(map[string]any)[part]
		}
		m, _ = cur.(map[string]any)
	}
	return m
}

// oaDateKind is "date" or "date-time" for a schema that is (or may be) one.
func oaDateKind(doc map[string]any, schema any) string {
	sc, _ := schema.(map[string]any)
	sc = oaResolve(doc, sc)
	if sc == nil {
		return ""
	}
	if f, ok := sc["format"].(string); ok && (f == "date" || f == "date-time") {
		return f
	}
	for _, alt := range append(asSlice(sc["anyOf"]), asSlice(sc["oneOf"])...) {
		if k := oaDateKind(doc, alt); k == "date-time" {
			return k // a time or a day: the time form covers both checks
		}
	}
	return ""
}

// oaBodyDates are the date fields of op's JSON request body, by name (an
// array's items' fields by the array's name and theirs: "rates.day").
func oaBodyDates(doc map[string]any, op map[string]any) map[string]string {
	out := map[string]string{}
	rb := oaResolve(doc, asMap(op["requestBody"]))
	content := asMap(asMap(rb["content"])["application/json"])
	var walk func(prefix string, schema map[string]any)
	walk = func(prefix string, schema map[string]any) {
		schema = oaResolve(doc, schema)
		for name, prop := range asMap(schema["properties"]) {
			p := oaResolve(doc, asMap(prop))
			if k := oaDateKind(doc, p); k != "" {
				out[prefix+name] = k
			}
			if items := asMap(p["items"]); items != nil {
				walk(prefix+name+".", items)
			}
		}
	}
	walk("", asMap(content["schema"]))
	return out
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

// oaSetField is body with field ("a" or "a.b", the first item of array a)
// set to v.
func oaSetField(t *testing.T, body, field, v string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	if outer, inner, ok := strings.Cut(field, "."); ok {
		items := asSlice(m[outer])
		if len(items) == 0 {
			t.Fatalf("valid body %s has no %s items", body, outer)
		}
		asMap(items[0])[inner] = v
	} else {
		m[field] = v
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// oaAuth is how op authenticates, in fzRoute's words.
func oaAuth(op map[string]any) string {
	for _, sec := range asSlice(op["security"]) {
		for scheme, auth := range map[string]string{"ApiKey": "bearer", "AdminToken": "admin", "ProviderSignature": "provider"} {
			if _, ok := asMap(sec)[scheme]; ok {
				return auth
			}
		}
	}
	return "none"
}
