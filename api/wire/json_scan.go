package wire

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// bodyScan is one pass over a JSON body before it is decoded. It finds
// what encoding/json lets through or cannot tell: nesting deeper than
// maxJSONDepth, a string holding U+0000, data after the first value, and
// keys a reader other than encoding/json may read differently — a key
// given twice in one object (encoding/json keeps the last value, many
// proxies and WAFs the first), two keys of one object equal under case
// folding, and a key that names a field of the destination only under
// case folding (encoding/json reads "Amount" and "\u212aind" as amount and
// kind). Keys are compared as encoding/json reads them, after unescaping.
//
// The scan is lenient about what it does not need (number syntax): the
// decoder that runs after it refuses a malformed body. It never calls a
// valid JSON text invalid (FuzzDecodeJSON checks it).
type bodyScan struct {
	b        []byte
	i        int
	depth    int
	deep     bool   // nesting went past maxJSONDepth; the scan stopped there
	invalid  bool   // the first value is not JSON; the scan stopped there
	trailing bool   // something other than white space follows the first value
	nul      bool   // a string (a key or a value) holds U+0000
	keyErr   *Error // the first duplicate or case-folded key
	path     []pathStep
	keys     []scannedKey // the keys of the open objects, innermost last
	folded   []byte       // the case-folded keys of the open objects
	unescape []byte       // scratch: the key being read, unescaped
}

// scans keeps bodyScans with their slices' room between bodies: the scan
// of a small body then allocates nothing.
var scans = sync.Pool{New: func() any { return new(bodyScan) }}

// keptRoom bounds the room a pooled bodyScan keeps.
const keptRoom = 4 << 10

// getScan scans b as scan does, with a pooled bodyScan; put returns it.
func getScan(b []byte, sh *shape) *bodyScan {
	s := scans.Get().(*bodyScan)
	s.scan(b, sh)
	return s
}

// put returns s to the pool, dropping the body and slices grown large.
func (s *bodyScan) put() {
	if cap(s.folded) > keptRoom || cap(s.unescape) > keptRoom || cap(s.keys) > keptRoom/32 {
		return
	}
	*s = bodyScan{path: s.path[:0], keys: s.keys[:0], folded: s.folded[:0], unescape: s.unescape[:0]}
	scans.Put(s)
}

// pathStep is one step from the body to a value: a key (its text in the
// body, still escaped) or an index in an array.
type pathStep struct {
	keyStart, keyEnd int // keyEnd < 0: an index
	index            int
}

// scannedKey is a key of an open object: its escaped text in the body and
// its case-folded form in bodyScan.folded.
type scannedKey struct {
	start, end         int
	foldStart, foldEnd int
}

// linearKeys is how many keys of one object are compared with each other
// one by one; past it, a map keeps a large object's scan linear.
const linearKeys = 16

// scan scans the first JSON value of b, whose destination is sh (nil: no
// key rules beyond those of every object), and what follows it.
func (s *bodyScan) scan(b []byte, sh *shape) {
	s.b = b
	if s.value(sh) {
		s.space()
		s.trailing = s.i < len(s.b)
	}
}

func (s *bodyScan) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value scans one value at s.i; false stops the scan (deep or invalid).
func (s *bodyScan) value(sh *shape) bool {
	s.space()
	if s.i >= len(s.b) {
		s.invalid = true
		return false
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.object(sh)
	case c == '[':
		return s.array(sh)
	case c == '"':
		_, _, ok := s.str()
		return ok
	case c == '-' || ('0' <= c && c <= '9'):
		for s.i < len(s.b) && isNumberByte(s.b[s.i]) {
			s.i++
		}
		return true
	default:
		rest := s.b[s.i:]
		for _, lit := range [...]string{"true", "false", "null"} {
			if len(rest) >= len(lit) && string(rest[:len(lit)]) == lit {
				s.i += len(lit)
				return true
			}
		}
		s.invalid = true
		return false
	}
}

func isNumberByte(c byte) bool {
	return ('0' <= c && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

// enter counts one more level of nesting; false when it is too many.
func (s *bodyScan) enter() bool {
	s.depth++
	if s.depth > maxJSONDepth {
		s.deep = true
		return false
	}
	s.i++ // the '{' or '['
	return true
}

func (s *bodyScan) array(sh *shape) bool {
	if !s.enter() {
		return false
	}
	var elem *shape
	if sh != nil && sh.kind == shapeList {
		elem = sh.elem
	}
	s.space()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		s.depth--
		return true
	}
	for n := 0; ; n++ {
		s.path = append(s.path, pathStep{keyEnd: -1, index: n})
		ok := s.value(elem)
		s.path = s.path[:len(s.path)-1]
		if !ok {
			return false
		}
		if more, ok := s.afterValue(']'); !more {
			return ok
		}
	}
}

// afterValue reads what follows an element or a member: ',' (another one
// follows: more) or end, which closes the array or object. Anything else
// is invalid JSON.
func (s *bodyScan) afterValue(end byte) (more, ok bool) {
	s.space()
	if s.i >= len(s.b) {
		s.invalid = true
		return false, false
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		return true, true
	case end:
		s.i++
		s.depth--
		return false, true
	}
	s.invalid = true
	return false, false
}

func (s *bodyScan) object(sh *shape) bool {
	if !s.enter() {
		return false
	}
	firstKey, firstFold := len(s.keys), len(s.folded)
	ok := s.members(sh, firstKey)
	s.keys, s.folded = s.keys[:firstKey], s.folded[:firstFold]
	return ok
}

// members scans the members of an object after its '{'; its keys are
// s.keys[firstKey:].
func (s *bodyScan) members(sh *shape, firstKey int) bool {
	var many map[string]int // folded key → index in s.keys, past linearKeys
	s.space()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		s.depth--
		return true
	}
	for {
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			s.invalid = true
			return false
		}
		start, end, ok := s.str()
		if !ok {
			return false
		}
		s.path = append(s.path, pathStep{keyStart: start, keyEnd: end})
		var child *shape
		if s.keyErr == nil {
			child, many = s.checkKey(sh, start, end, firstKey, many)
		}
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			s.invalid = true
			return false
		}
		s.i++
		ok = s.value(child)
		s.path = s.path[:len(s.path)-1]
		if !ok {
			return false
		}
		if more, ok := s.afterValue('}'); !more {
			return ok
		}
	}
}

// checkKey applies the key rules to the key b[start:end] (escaped) of an
// object whose destination is sh and whose keys so far are
// s.keys[firstKey:], recording the first fault in s.keyErr. It returns the
// destination of the key's value.
func (s *bodyScan) checkKey(sh *shape, start, end, firstKey int, many map[string]int) (*shape, map[string]int) {
	key := s.keyText(start, end)
	var child *shape
	if sh != nil {
		switch sh.kind {
		case shapeStruct:
			if f, ok := sh.fields[string(key)]; ok {
				child = f
			} else if name, ok := sh.folds[string(appendFold(nil, key))]; ok {
				s.keyErr = s.keyError(fmt.Sprintf("unknown field %q: field names are case-sensitive (the field is %q)",
					s.pathText(), name))
				return nil, many
			}
		case shapeMap:
			child = sh.elem
		}
	}
	foldStart := len(s.folded)
	s.folded = appendFold(s.folded, key)
	fk := s.folded[foldStart:]
	earlier := -1
	if many != nil {
		if j, ok := many[string(fk)]; ok {
			earlier = j
		}
	} else {
		for j := firstKey; j < len(s.keys); j++ {
			if k := s.keys[j]; bytes.Equal(s.folded[k.foldStart:k.foldEnd], fk) {
				earlier = j
				break
			}
		}
	}
	if earlier >= 0 {
		prev := s.keys[earlier]
		if prevKey := string(unescapeKey(nil, s.b[prev.start:prev.end])); prevKey == string(s.keyText(start, end)) {
			s.keyErr = s.keyError(fmt.Sprintf("key %q appears more than once in its object; a key may be given once",
				s.pathText()))
		} else {
			s.keyErr = s.keyError(fmt.Sprintf("key %q differs only in case from the key %q of the same object",
				s.pathText(), prevKey))
		}
		return nil, many
	}
	s.keys = append(s.keys, scannedKey{start: start, end: end, foldStart: foldStart, foldEnd: len(s.folded)})
	switch n := len(s.keys) - firstKey; {
	case many != nil:
		many[string(fk)] = len(s.keys) - 1
	case n > linearKeys:
		many = make(map[string]int, 2*n)
		for j := firstKey; j < len(s.keys); j++ {
			k := s.keys[j]
			many[string(s.folded[k.foldStart:k.foldEnd])] = j
		}
	}
	return child, many
}

// keyText is the key b[start:end] as encoding/json reads it (unescaped),
// valid until the next call.
func (s *bodyScan) keyText(start, end int) []byte {
	raw := s.b[start:end]
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw
	}
	s.unescape = unescapeKey(s.unescape[:0], raw)
	return s.unescape
}

// keyError is the 400 for the key at s.path, which details.field names:
// "amount", "inner.a", "items[1].a".
func (s *bodyScan) keyError(msg string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest, Message: msg,
		Details: map[string]any{"field": s.pathText()}}
}

func (s *bodyScan) pathText() string {
	var b strings.Builder
	for n, p := range s.path {
		switch {
		case p.keyEnd < 0:
			b.WriteString("[" + strconv.Itoa(p.index) + "]")
		default:
			if n > 0 {
				b.WriteByte('.')
			}
			b.Write(unescapeKey(nil, s.b[p.keyStart:p.keyEnd]))
		}
	}
	return b.String()
}

// str scans the string at s.i and returns the span of its text between
// the quotes.
func (s *bodyScan) str() (start, end int, ok bool) {
	s.i++ // the opening quote
	start = s.i
	for s.i < len(s.b) {
		if c := s.b[s.i]; c >= 0x20 && c != '"' && c != '\\' {
			s.i++
			continue
		}
		switch c := s.b[s.i]; {
		case c == '"':
			end = s.i
			s.i++
			return start, end, true
		case c == '\\':
			if s.i+1 >= len(s.b) {
				s.invalid = true
				return 0, 0, false
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if _, ok := hex4(s.b[s.i+2:]); !ok {
					s.invalid = true
					return 0, 0, false
				}
				if string(s.b[s.i+2:s.i+6]) == "0000" {
					s.nul = true
				}
				s.i += 6
			default:
				s.invalid = true
				return 0, 0, false
			}
		case c < 0x20:
			s.invalid = true
			return 0, 0, false
		default:
			s.i++
		}
	}
	s.invalid = true
	return 0, 0, false
}

// hex4 reads the four hex digits of a \u escape.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// unescapeKey appends the text of a scanned JSON string (between its
// quotes) as encoding/json decodes it: a \u escape of a lone or unpaired
// surrogate reads as U+FFFD, as it does there, so "\ud800" and "\udfff"
// are the same key.
func unescapeKey(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			dst = append(dst, c)
			i++
			continue
		}
		switch raw[i+1] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, _ := hex4(raw[i+2:])
			i += 6
			if utf16.IsSurrogate(r) {
				r2, ok := rune(0), false
				if i+1 < len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					r2, ok = hex4(raw[i+2:])
				}
				if pair := utf16.DecodeRune(r, r2); ok && pair != utf8.RuneError {
					r = pair
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default: // " \ /
			dst = append(dst, raw[i+1])
		}
		i += 2
	}
	return dst
}

// appendFold appends key case-folded: two keys fold alike exactly when
// strings.EqualFold holds for them, the comparison encoding/json falls back
// to when no field has the key's exact name. Each rune becomes the
// smallest rune of its simple case-folding orbit (k, K and the Kelvin sign
// all become K).
func appendFold(dst, key []byte) []byte {
	for i := 0; i < len(key); {
		c := key[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(key[i:])
		i += n
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		dst = utf8.AppendRune(dst, least)
	}
	return dst
}
