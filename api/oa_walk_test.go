package api_test

import (
	"strings"

	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// Walking the project's own parsed OpenAPI model (oaParse: refs resolved
// by libopenapi), for the tests that send something to every parameter or
// field of a kind.

// oaAuth is how op authenticates, in fzRoute's words.
func oaAuth(op *v3.Operation) string {
	auth := "none"
	for _, sec := range op.Security {
		for _, scheme := range []struct{ name, auth string }{
			{"ApiKey", "bearer"}, {"AdminToken", "admin"}, {"ProviderSignature", "provider"},
		} {
			if _, ok := sec.Requirements.Get(scheme.name); ok {
				auth = scheme.auth
			}
		}
	}
	return auth
}

// oaFill is path p with each path parameter of params replaced by its
// value in values (escaped by escape).
func oaFill(p string, params []*v3.Parameter, values map[string]string, escape func(string) string) string {
	for _, q := range params {
		if q.In == "path" {
			p = strings.Replace(p, "{"+q.Name+"}", escape(values[q.Name]), 1)
		}
	}
	return p
}

// oaDateKind is "date" or "date-time" for a schema that is (or may be)
// one, else "".
func oaDateKind(sp *base.SchemaProxy) string {
	if sp == nil {
		return ""
	}
	s := sp.Schema()
	if s == nil {
		return ""
	}
	if s.Format == "date" || s.Format == "date-time" {
		return s.Format
	}
	for _, alt := range append(append([]*base.SchemaProxy(nil), s.AnyOf...), s.OneOf...) {
		if oaDateKind(alt) == "date-time" {
			return "date-time" // a time or a day: the time form covers both checks
		}
	}
	return ""
}

// oaBodyDates are the date fields of op's JSON request body, by name (an
// array's items' fields by the array's name and theirs: "rates.day").
func oaBodyDates(op *v3.Operation) map[string]string {
	out := map[string]string{}
	if op.RequestBody == nil || op.RequestBody.Content == nil {
		return out
	}
	mt, ok := op.RequestBody.Content.Get("application/json")
	if !ok || mt.Schema == nil {
		return out
	}
	var walk func(prefix string, sp *base.SchemaProxy)
	walk = func(prefix string, sp *base.SchemaProxy) {
		s := sp.Schema()
		if s == nil || s.Properties == nil {
			return
		}
		for name, prop := range s.Properties.FromOldest() {
			if k := oaDateKind(prop); k != "" {
				out[prefix+name] = k
			}
			if ps := prop.Schema(); ps != nil && ps.Items != nil && ps.Items.A != nil {
				walk(prefix+name+".", ps.Items.A)
			}
		}
	}
	walk("", mt.Schema)
	return out
}
