package logstore

import (
	"context"
	"fmt"
)

// LatestCheckpoints are every log's newest checkpoint (the ones the
// witnesses are asked to cosign), in log order.
func (s *Store) LatestCheckpoints(ctx context.Context) ([]SignedCheckpoint, error) {
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT ON (log) `+checkpointCols+` FROM log_checkpoints
		ORDER BY log, size DESC, id DESC`)
	if err != nil {
		return nil, fmt.Errorf("latest checkpoints: %w", err)
	}
	defer rows.Close()
	var out []SignedCheckpoint
	for rows.Next() {
		c, err := scanCheckpoint(rows)
		if err != nil {
			return nil, fmt.Errorf("latest checkpoints: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("latest checkpoints: %w", err)
	}
	return out, nil
}
