// Package schemas holds the JSON Schemas (draft 2020-12) of what Pitboss
// sends outside: every ledger event body (events/<event type>.schema.json:
// the Kafka record value and a webhook's data), the forwarded callback and
// the webhook envelope (deliveries/). See docs/kafka-events.md and
// docs/callbacks-and-webhooks.md.
//
// The files are the contract; Compile is for tests and tools that validate
// real bodies against them.
package schemas

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// FS holds the schema files.
//
//go:embed events/*.schema.json deliveries/*.schema.json
var FS embed.FS

// Base is the URL every schema's $id starts with; a file's $id is Base
// followed by its path in FS.
const Base = "https://schemas.pitboss.dev/"

// Callback and Webhook are the paths of the delivery schemas, for
// Set.Validate.
const (
	Callback = "deliveries/forwarded-callback.schema.json"
	Webhook  = "deliveries/webhook.schema.json"
)

// Event is the schema path of an event type, e.g.
// "events/wallet.bet_placed.v1.schema.json".
func Event(eventType string) string { return "events/" + eventType + ".schema.json" }

// Set is every schema, compiled.
type Set struct {
	byPath map[string]*jsonschema.Schema
}

// Compile compiles every schema in FS with formats asserted.
func Compile() (*Set, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	var paths []string
	err := fs.WalkDir(FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := FS.ReadFile(path)
		if err != nil {
			return err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if id, _ := doc.(map[string]any)["$id"].(string); id != Base+path {
			return fmt.Errorf("%s: $id %q, want %q", path, id, Base+path)
		}
		paths = append(paths, path)
		return c.AddResource(Base+path, doc)
	})
	if err != nil {
		return nil, fmt.Errorf("load schemas: %w", err)
	}
	s := &Set{byPath: map[string]*jsonschema.Schema{}}
	for _, p := range paths {
		sch, err := c.Compile(Base + p)
		if err != nil {
			return nil, fmt.Errorf("compile %s: %w", p, err)
		}
		s.byPath[p] = sch
	}
	return s, nil
}

// Paths lists the compiled schemas' paths.
func (s *Set) Paths() []string {
	out := make([]string, 0, len(s.byPath))
	for p := range s.byPath {
		out = append(out, p)
	}
	return out
}

// Validate checks the JSON document body against the schema at path.
// Numbers are read as decimals, never as floats.
func (s *Set) Validate(path string, body []byte) error {
	sch, ok := s.byPath[path]
	if !ok {
		return fmt.Errorf("no schema %s", path)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if err := sch.Validate(doc); err != nil {
		return fmt.Errorf("%s: %s", strings.TrimSuffix(path, ".schema.json"), err)
	}
	return nil
}
