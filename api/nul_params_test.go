package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"testing"
)

// TestNULByteInEveryParameter sends a NUL byte in every parameter of every
// operation the OpenAPI document lists, one parameter at a time (the others
// valid): query parameters and path segments. PostgreSQL refuses NUL in
// text, so a parameter that reaches a query unchecked answers 500
// (schemathesis found one, GET /admin/v1/fx-rates?base=). Every answer must
// be below 500, in the route's own error shape (fzCheck).
func TestNULByteInEveryParameter(t *testing.T) {
	t.Parallel()
	s := fzHarness(t)
	raw, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc oaNULDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	valid := map[string]string{
		"client_id": s.client, "key_id": s.keyID, "webhook_id": s.webhookID, "provider": s.provider,
		"day": "2025-01-01", "id": "x",
	}
	idFor := map[string]string{ // {id} by the collection it names
		"/api/v1/games/": "fzgame", "/api/v1/webhooks/": s.webhookID,
	}
	paths := make([]string, 0, len(doc.Paths))
	for p := range doc.Paths {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	sent := 0
	for _, p := range paths {
		item := doc.Paths[p]
		for method, raw := range item {
			if method == "parameters" || method == "summary" || method == "description" {
				continue
			}
			var op oaNULOp
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatalf("%s %s: %v", method, p, err)
			}
			params := append(doc.params(t, item["parameters"]), doc.params(t, op.Parameters)...)
			auth := "none"
			for _, sec := range op.Security {
				switch {
				case sec["ApiKey"] != nil:
					auth = "bearer"
				case sec["AdminToken"] != nil:
					auth = "admin"
				case sec["ProviderSignature"] != nil:
					auth = "provider"
				}
			}
			for _, bad := range params {
				if bad.In != "query" && bad.In != "path" {
					continue
				}
				for _, nul := range []string{"\x00", "a\x00b"} {
					path := p
					for _, q := range params {
						if q.In != "path" {
							continue
						}
						v := valid[q.Name]
						if q.Name == "id" {
							for prefix, id := range idFor {
								if strings.HasPrefix(p, prefix) {
									v = id
								}
							}
						}
						if q.Name == bad.Name {
							v = nul
						}
						path = strings.Replace(path, "{"+q.Name+"}", url.PathEscape(v), 1)
					}
					if bad.In == "query" {
						path += "?" + url.Values{bad.Name: {nul}}.Encode()
					}
					var body []byte
					m := strings.ToUpper(method)
					if m == http.MethodPost || m == http.MethodPut || m == http.MethodPatch {
						body = []byte(`{}`)
					}
					r := fzRoute{method: m, path: path, auth: auth}
					t.Run(m+" "+path, func(t *testing.T) {
						rec := s.send(t, r, body)
						if strings.HasPrefix(p, "/provider/") && !strings.HasPrefix(p, "/provider/v1/") {
							// A provider's own protocol answers in its own shape
							// (docs/protocols); only the status is ours to check.
							if rec.Code >= 500 {
								t.Fatalf("%s %s: %d %s", m, path, rec.Code, rec.Body)
							}
						} else {
							fzCheck(t, r, body, rec)
						}
					})
					sent++
				}
			}
		}
	}
	if strings.Contains(s.logs.String(), "panic in handler") {
		t.Fatalf("a handler panicked:\n%s", s.logs.String())
	}
	if sent < 100 {
		t.Fatalf("only %d requests: the document's parameters were not all found", sent)
	}
}

// oaNULDoc is as much of the OpenAPI document as the test reads.
type oaNULDoc struct {
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Parameters map[string]oaNULParam `json:"parameters"`
	} `json:"components"`
}

type oaNULOp struct {
	Parameters json.RawMessage       `json:"parameters"`
	Security   []map[string][]string `json:"security"`
}

type oaNULParam struct {
	Ref  string `json:"$ref"`
	Name string `json:"name"`
	In   string `json:"in"`
}

// params reads a parameters list, resolving references to components.
func (d *oaNULDoc) params(t *testing.T, raw json.RawMessage) []oaNULParam {
	t.Helper()
	if len(raw) == 0 {
		return nil
	}
	var ps []oaNULParam
	if err := json.Unmarshal(raw, &ps); err != nil {
		t.Fatal(err)
	}
	for i, p := range ps {
		if p.Ref != "" {
			c, ok := d.Components.Parameters[strings.TrimPrefix(p.Ref, "#/components/parameters/")]
			if !ok {
				t.Fatalf("unresolved parameter %s", p.Ref)
			}
			ps[i] = c
		}
	}
	return ps
}
