package domain

import (
	"fmt"
	"unicode/utf8"
)

// MaxReasonLength bounds the reason of an operator's own transaction, in
// characters (Unicode code points). The reason is stored in a hash-chained
// event, kept for ever and relayed to every consumer, so it is a short
// note, not a document.
const MaxReasonLength = 500

// FieldError is ErrInvalidArgument about one named field of a request, said
// so that a person can fix it: the API answers it as 400 INVALID_REQUEST
// with details.field.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Message }

// Unwrap makes a FieldError an ErrInvalidArgument for errors.Is.
func (e *FieldError) Unwrap() error { return ErrInvalidArgument }

// CheckText accepts free text of at most max characters that is valid
// UTF-8 and holds no control character (Unicode category Cc: C0, DEL, C1,
// so also tab, line feed and carriage return), no line or paragraph
// separator (U+2028, U+2029) and no bidirectional embedding, override or
// isolate (U+202A–U+202E, U+2066–U+2069). Such text is one line wherever it
// is shown or logged, cannot forge a line of its own or move a terminal's
// cursor, and is displayed in the order it is stored: an override could
// make "5.00" in a console or a CSV cell read as "00.5", or a name read as
// another (the "Trojan Source" trick). Other format characters stay
// allowed: the zero-width joiner and non-joiner are part of emoji and of
// Persian and Indic spelling. field names the request field in the error.
func CheckText(field, v string, max int) error {
	if !utf8.ValidString(v) {
		return &FieldError{Field: field, Message: field + " must be valid UTF-8"}
	}
	n := 0
	for _, r := range v {
		n++
		if IsControlOrBreak(r) {
			return &FieldError{Field: field,
				Message: fmt.Sprintf("%s must not contain control characters or line breaks (U+%04X at character %d)", field, r, n)}
		}
		if IsBidiControl(r) {
			return &FieldError{Field: field,
				Message: fmt.Sprintf("%s must not contain bidirectional embedding, override or isolate characters (U+%04X at character %d)", field, r, n)}
		}
	}
	if n > max {
		return &FieldError{Field: field, Message: fmt.Sprintf("%s must be at most %d characters (it has %d)", field, max, n)}
	}
	return nil
}

// IsControlOrBreak reports whether r is a control character (Unicode
// category Cc) or a line or paragraph separator: what CheckText refuses.
func IsControlOrBreak(r rune) bool {
	return r < 0x20 || (r >= 0x7f && r < 0xa0) || r == '\u2028' || r == '\u2029'
}

// IsBidiControl reports whether r is a bidirectional embedding, override,
// pop or isolate character (U+202A–U+202E, U+2066–U+2069): the ones that
// reorder the text around them when it is displayed.
func IsBidiControl(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// ClipText cuts a value quoted back in an error message to 32 bytes (and
// an ellipsis), so that a huge input is not echoed whole.
func ClipText(s string) string { return clip(s) }
