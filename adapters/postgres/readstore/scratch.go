package readstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// The scratch schemas of a verification's rebuild (WithScratch): apart
// from the replay's, so a verification never touches a shadow schema an
// operator prepared for a swap.
const (
	VerifyShadowSchema  = "readmodels_verify"
	VerifyStagingSchema = "readmodels_verify_staging"
)

// WithScratch returns the store with a rebuild (Compare with Shadow)
// written to the schemas shadow and staging instead of ShadowSchema and
// StagingSchema: a rebuild in bounded memory that is only compared, never
// swapped in. DropScratch removes them afterwards.
func (m *ReadModels) WithScratch(shadow, staging string) *ReadModels {
	c := *m
	c.shadow, c.staging = shadow, staging
	return &c
}

// DropScratch drops the store's shadow and staging schemas; for a store
// made WithScratch only (the replay's shadow schema is Swap's).
func (m *ReadModels) DropScratch(ctx context.Context) error {
	if m.shadow == ShadowSchema {
		return fmt.Errorf("drop scratch: %s is the replay's shadow schema", ShadowSchema)
	}
	for _, s := range []string{m.staging, m.shadow} {
		if _, err := m.pool.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{s}.Sanitize()+` CASCADE`); err != nil {
			return fmt.Errorf("drop scratch schema %s: %w", s, err)
		}
	}
	return nil
}
