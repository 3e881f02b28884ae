package gateway

import "errors"

// ErrAmbiguousGameCode: two games of one provider carry the same provider
// code, so a wallet call naming it cannot tell under which game to book.
var ErrAmbiguousGameCode = errors.New("two games of the provider have this provider code")
