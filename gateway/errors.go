package gateway

// FieldError is a rule's verdict on one field of a request: what is wrong
// with it, said so that a person can fix it. The HTTP layer answers it as
// 400 INVALID_REQUEST with details.field (and Details); the CLI prints
// Message.
type FieldError struct {
	// Field is the request field at fault, as the caller named it
	// ("url", "scopes", "--forward-callback-url" ...).
	Field   string
	Message string
	// Details are extra facts for the error body besides the field, such
	// as the values allowed ("tiers", "scopes") or the value refused
	// ("kind"); nil when there are none.
	Details map[string]any
}

func (e *FieldError) Error() string { return e.Message }

// fieldError is a FieldError without extra details.
func fieldError(field, msg string) *FieldError { return &FieldError{Field: field, Message: msg} }

// ClipValue shortens a value quoted back in an error message to 40 bytes
// and an ellipsis, so a huge or hostile input does not fill the answer.
func ClipValue(v string) string {
	if len(v) > 40 {
		return v[:40] + "…"
	}
	return v
}
