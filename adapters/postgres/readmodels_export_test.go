package postgres

// Hooks for the black-box tests of the rebuild's event decoder.
var (
	DecodeEventForTest = decodeEvent
	FastDecodeForTest  = func(b []byte) bool { _, ok := fastDecode(b); return ok }
)
