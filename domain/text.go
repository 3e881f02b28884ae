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
// so also tab, line feed and carriage return) and no line or paragraph
// separator (U+2028, U+2029). Such text is one line wherever it is shown
// or logged, and cannot forge a line of its own or move a terminal's
// cursor. field names the request field in the error.
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
