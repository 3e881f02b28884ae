package api_test

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	vErrors "github.com/pb33f/libopenapi-validator/errors"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"

	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
)

// The OpenAPI document (api/openapi.json, served at GET
// /api/v1/openapi.json) against the code: it is a valid OpenAPI 3.1
// document, it lists every route and every error code, and every answer of
// a realistic session on the real server conforms to it
// (openapi_conformance_test.go). Helpers carry an "oa" prefix.

const oaAdminToken = "oa-admin-token-0123456789abcdef0123456789"

// oaDocument fetches the document from a server, as a client would.
func oaDocument(t testing.TB) []byte {
	t.Helper()
	srv := apitest.EmptyServer(t, "")
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/openapi.json", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /api/v1/openapi.json: %d %s", rec.Code, rec.Body.String())
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("GET /api/v1/openapi.json: Content-Type %q", ct)
	}
	return rec.Body.Bytes()
}

// oaSpec is the parsed document and a validator over it.
type oaSpec struct {
	raw       map[string]any
	model     *v3.Document
	validator validator.Validator
	opts      *config.ValidationOptions
}

// oaValidationOptions are strict: an answer field or header the document
// does not declare is a failure, and formats (date-time, uri, uuid, date)
// are asserted. Exceptions: security headers of the HTML pages and the
// redirects (hygiene, not contract); the keys of documented maps
// (additionalProperties: strict mode reports every key of a map); the
// delivery payload and the document itself, whose content is described
// elsewhere; api_key, the signed launch's security scheme, which strict
// mode does not count as a declared query parameter.
func oaValidationOptions() []config.Option {
	return []config.Option{config.WithStrictMode(), config.WithFormatAssertions(),
		config.WithStrictIgnoredHeadersExtra("referrer-policy", "content-security-policy", "x-content-type-options"),
		config.WithStrictIgnorePaths(
			"$.body.checks.*", "$.body.error.details.checks.*", // GET /readyz
			"$.body.data.payload**", // GET /api/v1/deliveries/{id}: schemas/deliveries/*.json
			// GET /api/v1/openapi.json ("**" right after the name also
			// matches keys written as ['/a.b']).
			"$.body.info**", "$.body.servers**", "$.body.paths**", "$.body.components**", "$.body.tags**",
			"$.query.api_key", // GET /v1/launch
		)}
}

func oaParse(t testing.TB, doc []byte) *oaSpec {
	t.Helper()
	s := &oaSpec{}
	if err := json.Unmarshal(doc, &s.raw); err != nil {
		t.Fatalf("the document is not JSON: %v", err)
	}
	d, err := libopenapi.NewDocument(doc)
	if err != nil {
		t.Fatalf("libopenapi: %v", err)
	}
	if info := d.GetSpecInfo(); info.VersionNumeric != 3.1 {
		t.Fatalf("the document is OpenAPI %v (%s), want 3.1", info.VersionNumeric, info.Version)
	}
	m, err := d.BuildV3Model()
	if err != nil {
		t.Fatalf("build the OpenAPI 3.1 model: %v", err)
	}
	s.model = &m.Model
	v, errs := validator.NewValidator(d, oaValidationOptions()...)
	if len(errs) > 0 {
		t.Fatalf("validator: %v", errs)
	}
	s.validator = v
	s.opts = config.NewValidationOptions(oaValidationOptions()...)
	return s
}

var oaMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// operations lists "METHOD /path/{param}" of every operation.
func (s *oaSpec) operations() []string {
	var ops []string
	for p, item := range s.raw["paths"].(map[string]any) {
		for m := range item.(map[string]any) {
			if slices.Contains(oaMethods, m) {
				ops = append(ops, strings.ToUpper(m)+" "+p)
			}
		}
	}
	slices.Sort(ops)
	return ops
}

// operation returns the raw operation object of "METHOD /path".
func (s *oaSpec) operation(op string) map[string]any {
	m, p, _ := strings.Cut(op, " ")
	return s.raw["paths"].(map[string]any)[p].(map[string]any)[strings.ToLower(m)].(map[string]any)
}

// internalRoutes are the routes the document names as not part of the API.
func (s *oaSpec) internalRoutes() []string {
	var out []string
	for _, r := range s.raw["x-pitboss-internal-routes"].([]any) {
		out = append(out, r.(string))
	}
	return out
}

// codesOf returns the code enum of a component schema: the ErrorCode enum,
// or the narrowed enum of an ErrorNNN schema.
func (s *oaSpec) codesOf(t testing.TB, schema string) []string {
	t.Helper()
	sc, ok := s.raw["components"].(map[string]any)["schemas"].(map[string]any)[schema].(map[string]any)
	if !ok {
		t.Fatalf("no schema %s", schema)
	}
	var enum []any
	if e, ok := sc["enum"].([]any); ok {
		enum = e
	} else {
		for _, part := range sc["allOf"].([]any) {
			props, _ := part.(map[string]any)["properties"].(map[string]any)
			if errObj, ok := props["error"].(map[string]any); ok {
				enum = errObj["properties"].(map[string]any)["code"].(map[string]any)["enum"].([]any)
			}
		}
	}
	var out []string
	for _, c := range enum {
		out = append(out, c.(string))
	}
	if len(out) == 0 {
		t.Fatalf("schema %s has no code enum", schema)
	}
	return out
}

func oaErrorText(errs []*vErrors.ValidationError) string {
	var b strings.Builder
	for _, e := range errs {
		b.WriteString("\n    - " + e.Message)
		if e.Reason != "" && e.Reason != e.Message {
			b.WriteString(": " + e.Reason)
		}
		for _, se := range e.SchemaValidationErrors {
			b.WriteString("\n        " + se.Reason)
			if se.FieldPath != "" {
				b.WriteString(" at " + se.FieldPath)
			}
		}
	}
	return b.String()
}

func TestOpenAPIDocumentIsValid(t *testing.T) {
	t.Parallel()
	doc := oaDocument(t)
	s := oaParse(t, doc)

	t.Run("valid against the OpenAPI 3.1 schema", func(t *testing.T) {
		if ok, errs := s.validator.ValidateDocument(); !ok {
			t.Fatalf("the document is not valid OpenAPI 3.1:%s", oaErrorText(errs))
		}
	})

	t.Run("the validator refuses a broken document", func(t *testing.T) {
		// Proves the check above can fail: the same document without
		// info and with a response lacking its description.
		var broken map[string]any
		_ = json.Unmarshal(doc, &broken)
		delete(broken, "info")
		b, _ := json.Marshal(broken)
		d, err := libopenapi.NewDocument(b)
		if err != nil {
			return // refused even earlier
		}
		v, _ := validator.NewValidator(d)
		if ok, _ := v.ValidateDocument(); ok {
			t.Fatal("a document without info passed validation")
		}
	})

	t.Run("operations are complete", func(t *testing.T) {
		ids := map[string]string{}
		for _, op := range s.operations() {
			o := s.operation(op)
			id, _ := o["operationId"].(string)
			if id == "" {
				t.Errorf("%s: no operationId", op)
			} else if other, dup := ids[id]; dup {
				t.Errorf("%s: operationId %s is also %s", op, id, other)
			}
			ids[id] = op
			if _, ok := o["security"]; !ok {
				t.Errorf("%s: no security requirement (use [] for none)", op)
			}
			responses := o["responses"].(map[string]any)
			success := false
			for code := range responses {
				if code[0] == '2' || code[0] == '3' {
					success = true
				}
			}
			if !success {
				t.Errorf("%s: no success response", op)
			}
			// Every authenticated /api/v1 operation answers these.
			_, path, _ := strings.Cut(op, " ")
			if strings.HasPrefix(path, "/api/v1/") && path != api.OpenAPIPath {
				for _, code := range []string{"200", "401", "429", "500"} {
					if _, ok := responses[code]; !ok {
						t.Errorf("%s: no %s response", op, code)
					}
				}
				sec, _ := o["security"].([]any)
				if len(sec) == 1 {
					if scopes, _ := sec[0].(map[string]any)["ApiKey"].([]any); len(scopes) > 0 {
						if _, ok := responses["403"]; !ok {
							t.Errorf("%s: needs a scope but has no 403 response", op)
						}
					}
				}
			}
		}
	})
}

// Path parameters are compared by position, not name: Echo's /a/:client
// and the document's /a/{client_id} are the same route.
var (
	oaEchoParam = regexp.MustCompile(`:[A-Za-z0-9_]+`)
	oaDocParam  = regexp.MustCompile(`\{[^}]+\}`)
)

func oaRouteKey(methodAndPath string) string {
	return oaDocParam.ReplaceAllString(oaEchoParam.ReplaceAllString(methodAndPath, "{}"), "{}")
}

func TestOpenAPIListsEveryRoute(t *testing.T) {
	t.Parallel()
	s := oaParse(t, oaDocument(t))
	// The demo game is mounted as serve mounts it; its routes are internal.
	srv := apitest.EmptyServer(t, oaAdminToken)
	routes := map[string]string{} // key -> as Echo has it
	for _, r := range srv.Echo().Routes() {
		if r.Method == "echo_route_not_found" { // a group's 404 handler, not a route
			continue
		}
		routes[oaRouteKey(r.Method+" "+r.Path)] = r.Method + " " + r.Path
	}
	internal := map[string]bool{}
	for _, r := range s.internalRoutes() {
		internal[oaRouteKey(r)] = true
		if _, ok := routes[oaRouteKey(r)]; !ok {
			t.Errorf("x-pitboss-internal-routes names %s, which the server does not have", r)
		}
	}
	documented := map[string]bool{}
	for _, op := range s.operations() {
		documented[oaRouteKey(op)] = true
		if _, ok := routes[oaRouteKey(op)]; !ok {
			t.Errorf("the document has %s, which the server does not route", op)
		}
	}
	for k, r := range routes {
		if !documented[k] && !internal[k] {
			t.Errorf("the server routes %s, which the document does not list", r)
		}
	}
	t.Logf("%d routes, %d documented operations, %d internal routes", len(routes), len(documented), len(internal))
}

// oaErrorCodes reads the Code* constants of errors.go with go/parser, so a
// code added there without documentation fails this test.
func oaErrorCodes(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "wire/errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]string{} // value -> constant name
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if !strings.HasPrefix(n.Name, "Code") || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Fatalf("%s is not a string literal", n.Name)
				}
				v, _ := strconv.Unquote(lit.Value)
				codes[v] = n.Name
			}
		}
	}
	if len(codes) < 20 {
		t.Fatalf("found only %d codes in errors.go", len(codes))
	}
	return codes
}

// oaStatusSchemas are the error schemas that narrow the codes per status.
var oaStatusSchemas = map[int]string{400: "Error400", 401: "Error401", 403: "Error403", 404: "Error404",
	405: "Error405", 409: "Error409", 429: "Error429", 500: "Error500", 502: "Error502", 503: "Error503"}

func TestOpenAPIErrorCodes(t *testing.T) {
	t.Parallel()
	codes := oaErrorCodes(t)
	s := oaParse(t, oaDocument(t))

	enum := s.codesOf(t, "ErrorCode")
	for c, name := range codes {
		if !slices.Contains(enum, c) {
			t.Errorf("%s (%s) is not in the document's ErrorCode enum", c, name)
		}
	}
	for _, c := range enum {
		if _, ok := codes[c]; !ok {
			t.Errorf("the ErrorCode enum has %s, which errors.go does not define", c)
		}
	}

	// Each code belongs to exactly one status.
	statusOf := map[string]int{}
	for status, schema := range oaStatusSchemas {
		for _, c := range s.codesOf(t, schema) {
			if other, ok := statusOf[c]; ok {
				t.Errorf("%s is listed under %d and %d", c, other, status)
			}
			statusOf[c] = status
		}
	}
	for c := range codes {
		if _, ok := statusOf[c]; !ok {
			t.Errorf("%s is in no ErrorNNN schema of the document", c)
		}
	}

	// docs/errors.md: one row per code: | `CODE` | status | meaning | retryable |.
	md, err := os.ReadFile("../docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\|\\s*`([A-Z_]+)`\\s*\\|\\s*(\\d{3})\\s*\\|([^|]*)\\|\\s*(yes|no)\\s*\\|")
	seen := map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(string(md), -1) {
		code, status, meaning, retry := m[1], m[2], strings.TrimSpace(m[3]), m[4]
		if seen[code] {
			t.Errorf("docs/errors.md lists %s twice", code)
		}
		seen[code] = true
		if _, ok := codes[code]; !ok {
			t.Errorf("docs/errors.md lists %s, which errors.go does not define", code)
			continue
		}
		if want := strconv.Itoa(statusOf[code]); status != want {
			t.Errorf("docs/errors.md: %s is %s, the document says %s", code, status, want)
		}
		if want := map[bool]string{true: "yes", false: "no"}[wire.Retryable(code)]; retry != want {
			t.Errorf("docs/errors.md: %s retryable %s, errors.go says %s", code, retry, want)
		}
		if meaning == "" {
			t.Errorf("docs/errors.md: %s has no meaning", code)
		}
	}
	for c := range codes {
		if !seen[c] {
			t.Errorf("%s is not in docs/errors.md", c)
		}
	}
}

// oaBody decodes a JSON answer.
func oaBody(t testing.TB, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("answer is not a JSON object: %v: %s", err, b)
	}
	return m
}

// oaGet walks m by keys ("data", "id"); a number key indexes an array.
func oaGet(m any, keys ...string) any {
	for _, k := range keys {
		switch x := m.(type) {
		case map[string]any:
			m = x[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i >= len(x) {
				return nil
			}
			m = x[i]
		default:
			return nil
		}
	}
	return m
}

func oaString(m any, keys ...string) string {
	switch v := oaGet(m, keys...).(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	}
	return ""
}
