package postgres

import (
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/pitboss/pitboss/domain"
)

// decodeEvent is domain.DecodeBody for a rebuild, several times faster on
// the canonical bodies the ledger writes (json.Marshal of a fixed struct:
// exact keys, no nulls, integers). Anything it does not expect — another
// key spelling, a null, a float, bad UTF-8, trailing bytes — it hands to
// domain.DecodeBody, so its result is always DecodeBody's. Decoding is most
// of a rebuild's work.
func decodeEvent(b []byte) (domain.Event, error) {
	if e, ok := fastDecode(b); ok {
		return e, nil
	}
	return domain.DecodeBody(b)
}

type scanner struct {
	b  []byte
	i  int
	ok bool
}

func fastDecode(b []byte) (domain.Event, bool) {
	s := &scanner{b: b, ok: true}
	var (
		e  domain.Event
		at string
	)
	s.object(func(key string) {
		switch key {
		case "position":
			e.Position = s.int()
		case "id":
			e.ID = s.str()
		case "type":
			e.Type = domain.EventType(s.str())
		case "stream_id":
			e.StreamID = domain.AccountID(s.str())
		case "version":
			e.Version = s.int()
		case "occurred_at":
			at = s.str()
		case "data":
			s.data(&e.Data)
		case "meta":
			s.object(func(key string) {
				switch key {
				case "request_id":
					e.Meta.RequestID = s.str()
				case "correlation_id":
					e.Meta.CorrelationID = s.str()
				case "actor":
					e.Meta.Actor = s.str()
				default:
					s.ok = false
				}
			})
		default:
			s.ok = false
		}
	})
	s.ws()
	if !s.ok || s.i != len(b) {
		return domain.Event{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return domain.Event{}, false
	}
	e.OccurredAt = t
	return e, true
}

func (s *scanner) data(d *domain.EventData) {
	s.object(func(key string) {
		switch key {
		case "client_id":
			d.ClientID = s.str()
		case "player_id":
			d.PlayerID = s.str()
		case "provider":
			d.Provider = s.str()
		case "game_id":
			d.GameID = s.str()
		case "round_id":
			d.RoundID = s.str()
		case "session_id":
			d.SessionID = s.str()
		case "external_tx_id":
			d.ExternalTxID = s.str()
		case "reference_tx_id":
			d.ReferenceTx = s.str()
		case "currency":
			d.Currency = s.str()
		case "amount":
			d.Amount = s.str()
		case "balance_after":
			d.BalanceAfter = s.str()
		case "direction":
			d.Direction = s.str()
		case "round_closed":
			d.RoundClosed = s.bool()
		case "promo":
			d.Promo = s.bool()
		case "expires_at":
			d.ExpiresAt = s.str()
		case "reason":
			d.Reason = s.str()
		case "postings":
			if d.Postings != nil {
				// encoding/json decodes a repeated array into the first
				// one's elements; leave that to it.
				s.ok = false
				return
			}
			d.Postings = []domain.Posting{}
			s.array(func() {
				var p domain.Posting
				s.object(func(key string) {
					switch key {
					case "account":
						p.Account = domain.AccountID(s.str())
					case "amount":
						p.Amount = s.str()
					default:
						s.ok = false
					}
				})
				d.Postings = append(d.Postings, p)
			})
		default:
			s.ok = false
		}
	})
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) expect(c byte) bool {
	s.ws()
	if !s.ok || s.i >= len(s.b) || s.b[s.i] != c {
		s.ok = false
		return false
	}
	s.i++
	return true
}

func (s *scanner) peek(c byte) bool {
	s.ws()
	return s.ok && s.i < len(s.b) && s.b[s.i] == c
}

// object reads {"key": value, ...}, calling field for each key with the
// scanner at the value.
func (s *scanner) object(field func(key string)) {
	if !s.expect('{') {
		return
	}
	if s.peek('}') {
		s.i++
		return
	}
	for s.ok {
		key := s.str()
		if !s.expect(':') {
			return
		}
		field(key)
		if s.peek(',') {
			s.i++
			continue
		}
		s.expect('}')
		return
	}
}

func (s *scanner) array(elem func()) {
	if !s.expect('[') {
		return
	}
	if s.peek(']') {
		s.i++
		return
	}
	for s.ok {
		elem()
		if s.peek(',') {
			s.i++
			continue
		}
		s.expect(']')
		return
	}
}

func (s *scanner) str() string {
	if !s.expect('"') {
		return ""
	}
	start, plain := s.i, true
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			raw := s.b[start:s.i]
			s.i++
			if plain {
				return string(raw)
			}
			return s.unescape(raw)
		case c == '\\':
			plain = false
			s.i += 2
		case c < 0x20:
			s.ok = false
			return ""
		case c >= 0x80:
			plain = false
			s.i++
		default:
			s.i++
		}
	}
	s.ok = false
	return ""
}

// unescape decodes a string with escapes or non-ASCII bytes; bytes that are
// not valid UTF-8 make the scanner give up (encoding/json would replace
// them).
func (s *scanner) unescape(raw []byte) string {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c >= 0x80 {
			r, n := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && n <= 1 {
				s.ok = false
				return ""
			}
			out = append(out, raw[i:i+n]...)
			i += n
			continue
		}
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(raw) {
			s.ok = false
			return ""
		}
		switch raw[i+1] {
		case '"', '\\', '/':
			out = append(out, raw[i+1])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, n := hex4(raw[i+2:])
			if n == 0 {
				s.ok = false
				return ""
			}
			i += 2 + n
			if utf16.IsSurrogate(r) {
				r2, n2 := rune(-1), 0
				if i+1 < len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					r2, n2 = hex4(raw[i+2:])
				}
				if dec := utf16.DecodeRune(r, r2); n2 > 0 && dec != utf8.RuneError {
					r = dec
					i += 2 + n2
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			s.ok = false
			return ""
		}
		i += 2
	}
	return string(out)
}

func hex4(b []byte) (rune, int) {
	if len(b) < 4 {
		return 0, 0
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, 0
		}
	}
	return r, 4
}

func (s *scanner) int() int64 {
	s.ws()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	digits := s.b[start:s.i]
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	n, err := strconv.ParseInt(string(s.b[start:s.i]), 10, 64)
	if err != nil || (len(digits) > 1 && digits[0] == '0') ||
		(s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E')) {
		s.ok = false
	}
	return n
}

func (s *scanner) bool() bool {
	s.ws()
	switch {
	case len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "true":
		s.i += 4
		return true
	case len(s.b)-s.i >= 5 && string(s.b[s.i:s.i+5]) == "false":
		s.i += 5
		return false
	}
	s.ok = false
	return false
}
