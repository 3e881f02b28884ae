// Package migrations holds the numbered SQL migrations, embedded into the
// binary and applied by `pitboss migrate` (and by tests).
package migrations

import "embed"

// FS holds the *.sql files.
//
//go:embed *.sql
var FS embed.FS
