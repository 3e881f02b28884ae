package wire

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"unicode"
)

// shape is what the key rules need to know of a destination type: the
// exact JSON names of a struct's fields, where encoding/json would also
// accept a name that differs in case, and the element type of a list or a
// map. A nil *shape is a destination whose keys have no names to match:
// an interface, a json.RawMessage or another type that decodes itself, a
// scalar (which an object cannot decode into anyway).
type shape struct {
	kind   shapeKind
	fields map[string]*shape // shapeStruct: the fields by exact JSON name
	folds  map[string]string // shapeStruct: the field names by their case-folded form
	elem   *shape            // shapeList, shapeMap: the elements
}

type shapeKind uint8

const (
	shapeStruct shapeKind = iota + 1
	shapeList
	shapeMap
)

var shapes sync.Map // reflect.Type → *shape

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// shapeOf is the shape of the value v points to, built once per type.
func shapeOf(v any) *shape {
	t := reflect.TypeOf(v)
	if t == nil {
		return nil
	}
	if sh, ok := shapes.Load(t); ok {
		return sh.(*shape)
	}
	sh := buildShape(t, map[reflect.Type]*shape{})
	shapes.Store(t, sh)
	return sh
}

// buildShape builds t's shape; building holds the shapes under
// construction, so that a recursive type ends.
func buildShape(t reflect.Type, building map[reflect.Type]*shape) *shape {
	for t.Kind() == reflect.Pointer {
		if decodesItself(t) {
			return nil
		}
		t = t.Elem()
	}
	if decodesItself(t) {
		return nil
	}
	if sh, ok := building[t]; ok {
		return sh
	}
	switch t.Kind() {
	case reflect.Struct:
		sh := &shape{kind: shapeStruct, fields: map[string]*shape{}, folds: map[string]string{}}
		building[t] = sh
		for _, f := range jsonFields(t) {
			sh.fields[f.name] = buildShape(f.typ, building)
			if fold := string(appendFold(nil, []byte(f.name))); sh.folds[fold] == "" {
				sh.folds[fold] = f.name
			}
		}
		return sh
	case reflect.Slice, reflect.Array:
		sh := &shape{kind: shapeList}
		building[t] = sh
		sh.elem = buildShape(t.Elem(), building)
		return sh
	case reflect.Map:
		sh := &shape{kind: shapeMap}
		building[t] = sh
		sh.elem = buildShape(t.Elem(), building)
		return sh
	}
	return nil
}

// decodesItself reports whether encoding/json hands a value of t (or of
// *t) to its own UnmarshalJSON or UnmarshalText.
func decodesItself(t reflect.Type) bool {
	pt := t
	if t.Kind() != reflect.Pointer {
		pt = reflect.PointerTo(t)
	}
	return pt.Implements(jsonUnmarshaler) || pt.Implements(textUnmarshaler)
}

// jsonField is a field of a struct as encoding/json names it.
type jsonField struct {
	name  string
	typ   reflect.Type
	depth int // how deep in embedded structs
}

// jsonFields lists the JSON fields of struct t the way encoding/json finds
// them: exported fields by their tag's name or their Go name, "-" left
// out, untagged embedded structs flattened, a shallower field hiding a
// deeper one of the same name. Where encoding/json drops two fields of one
// name at one depth, the first is kept: a key naming it is then still an
// exact name here, and encoding/json refuses it as unknown.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	seen := map[string]int{} // name → index in out
	var walk func(t reflect.Type, depth int, visiting map[reflect.Type]bool)
	walk = func(t reflect.Type, depth int, visiting map[reflect.Type]bool) {
		if visiting[t] {
			return
		}
		visiting[t] = true
		defer delete(visiting, t)
		for i := range t.NumField() {
			sf := t.Field(i)
			ft := sf.Type
			if sf.Anonymous {
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if !sf.IsExported() && ft.Kind() != reflect.Struct {
					continue
				}
			} else if !sf.IsExported() {
				continue
			}
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if !validJSONName(name) {
				name = ""
			}
			if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
				walk(ft, depth+1, visiting)
				continue
			}
			if name == "" {
				name = sf.Name
			}
			if j, ok := seen[name]; ok {
				if out[j].depth > depth {
					out[j] = jsonField{name: name, typ: sf.Type, depth: depth}
				}
				continue
			}
			seen[name] = len(out)
			out = append(out, jsonField{name: name, typ: sf.Type, depth: depth})
		}
	}
	walk(t, 0, map[reflect.Type]bool{})
	return out
}

// validJSONName reports whether encoding/json takes a tag's name as the
// field's name (it ignores one with other punctuation).
func validJSONName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}
