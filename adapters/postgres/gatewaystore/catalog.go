package gatewaystore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// The game catalog (migration 00007): provider routing settings and the
// listings of GET /api/v1/providers and /api/v1/games. See
// docs/providers-and-games.md.

var _ gateway.GameCatalog = (*Gateway)(nil)

const routeCols = `kind, endpoints, balancing, timeout_ms, breaker_failures, breaker_open_ms, launch_operator_id, launch_country, launch_key_fingerprint`

func scanRoute(id string, row pgx.Row) (gateway.ProviderRoute, error) {
	r := gateway.ProviderRoute{ProviderID: id}
	var timeoutMS, openMS int
	if err := row.Scan(&r.Kind, &r.Endpoints, &r.Balancing, &timeoutMS, &r.BreakerFailures, &openMS, &r.LaunchOperatorID,
		&r.LaunchCountry, &r.LaunchKeyFingerprint); err != nil {
		return gateway.ProviderRoute{}, err
	}
	r.Timeout = time.Duration(timeoutMS) * time.Millisecond
	r.BreakerCooldown = time.Duration(openMS) * time.Millisecond
	return r, nil
}

// ProviderRoute returns a provider's routing settings, enabled or not. The
// secret is not read here: the launch takes it from Provider.
func (g *Gateway) ProviderRoute(ctx context.Context, id string) (gateway.ProviderRoute, error) {
	r, err := scanRoute(id, g.pool.QueryRow(ctx, `SELECT `+routeCols+` FROM providers WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return gateway.ProviderRoute{}, domain.ErrNotFound
	}
	if err != nil {
		return gateway.ProviderRoute{}, fmt.Errorf("provider %s routing: %w", id, err)
	}
	return r, nil
}

// SetProviderRoute stores the routing settings of an existing provider
// after validating them. The provider's other columns, its launch
// credentials included (SetProviderLaunchCredentials), are left alone.
func (g *Gateway) SetProviderRoute(ctx context.Context, r gateway.ProviderRoute) error {
	if err := r.Validate(); err != nil {
		return fmt.Errorf("%w: %w", err, domain.ErrInvalidArgument)
	}
	endpoints := r.Endpoints
	if endpoints == nil {
		endpoints = []string{}
	}
	tag, err := g.pool.Exec(ctx, `
		UPDATE providers SET kind = $2, endpoints = $3, balancing = $4, timeout_ms = $5,
			breaker_failures = $6, breaker_open_ms = $7
		WHERE id = $1`,
		r.ProviderID, r.Kind, endpoints, r.Balancing, r.Timeout.Milliseconds(), r.BreakerFailures,
		r.BreakerCooldown.Milliseconds())
	if err != nil {
		return fmt.Errorf("set provider %s routing: %w", r.ProviderID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("provider %s: %w", r.ProviderID, domain.ErrNotFound)
	}
	return nil
}

// SetProviderGameCode stores the provider's own code of a game; empty
// means the provider knows it by our id.
func (g *Gateway) SetProviderGameCode(ctx context.Context, gameID, code string) error {
	tag, err := g.pool.Exec(ctx, `UPDATE games SET provider_game_code = $2 WHERE id = $1`, gameID, code)
	if err != nil {
		return fmt.Errorf("set code of game %s: %w", gameID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("game %s: %w", gameID, domain.ErrNotFound)
	}
	return nil
}

// ListProviders lists the enabled providers by name, each with its routing
// settings and the number of its enabled games.
func (g *Gateway) ListProviders(ctx context.Context) ([]gateway.ProviderListing, error) {
	rows, err := g.pool.Query(ctx, `
		SELECT p.id, p.name, p.kind, p.endpoints, p.balancing, p.timeout_ms, p.breaker_failures, p.breaker_open_ms,
			p.launch_operator_id, p.launch_country, p.launch_key_fingerprint, (SELECT count(*) FROM games x WHERE x.provider_id = p.id AND x.enabled)
		FROM providers p WHERE p.enabled ORDER BY lower(p.name), p.id`)
	if err != nil {
		return nil, fmt.Errorf("list providers: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (gateway.ProviderListing, error) {
		var l gateway.ProviderListing
		var timeoutMS, openMS int
		err := row.Scan(&l.ID, &l.Name, &l.Route.Kind, &l.Route.Endpoints, &l.Route.Balancing, &timeoutMS,
			&l.Route.BreakerFailures, &openMS, &l.Route.LaunchOperatorID, &l.Route.LaunchCountry,
			&l.Route.LaunchKeyFingerprint, &l.GamesCount)
		l.Route.ProviderID = l.ID
		l.Route.Timeout = time.Duration(timeoutMS) * time.Millisecond
		l.Route.BreakerCooldown = time.Duration(openMS) * time.Millisecond
		return l, err
	})
	if err != nil {
		return nil, fmt.Errorf("list providers: %w", err)
	}
	return out, nil
}

// likePattern makes a case-insensitive substring pattern for ILIKE with
// the wildcards of s escaped, so "50%" finds "50%" and not "50" anything.
func likePattern(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(s) + "%"
}

// ListGames lists the enabled games of enabled providers that match f, by
// name then id, one page at a time, with the number of all matches.
func (g *Gateway) ListGames(ctx context.Context, f gateway.GameFilter) ([]gateway.GameListing, int64, error) {
	if f.Page < 1 || f.PerPage < 1 {
		return nil, 0, fmt.Errorf("list games: page %d, per_page %d: %w", f.Page, f.PerPage, domain.ErrInvalidArgument)
	}
	where := []string{"x.enabled", "p.enabled"}
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if f.ProviderID != "" {
		where = append(where, "x.provider_id = "+arg(f.ProviderID))
	}
	if f.Category != "" {
		where = append(where, "lower(x.category) = lower("+arg(f.Category)+")")
	}
	if f.Search != "" {
		where = append(where, `x.name ILIKE `+arg(likePattern(f.Search))+` ESCAPE '\'`)
	}
	cond := strings.Join(where, " AND ")
	tx, err := g.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, 0, fmt.Errorf("list games: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only; rollback after commit is a no-op
	var total int64
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM games x JOIN providers p ON p.id = x.provider_id WHERE `+cond,
		args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count games: %w", err)
	}
	limit, offset := arg(f.PerPage), arg(int64(f.Page-1)*int64(f.PerPage))
	rows, err := tx.Query(ctx, `
		SELECT x.id, x.name, x.category, x.provider_id, p.name, x.blocked_countries
		FROM games x JOIN providers p ON p.id = x.provider_id
		WHERE `+cond+` ORDER BY lower(x.name), x.id LIMIT `+limit+` OFFSET `+offset, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("list games: %w", err)
	}
	games, err := pgx.CollectRows(rows, scanGameListing)
	if err != nil {
		return nil, 0, fmt.Errorf("list games: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, 0, fmt.Errorf("list games: %w", err)
	}
	return games, total, nil
}

func scanGameListing(row pgx.CollectableRow) (gateway.GameListing, error) {
	var l gateway.GameListing
	err := row.Scan(&l.ID, &l.Name, &l.Category, &l.ProviderID, &l.ProviderName, &l.BlockedCountries)
	return l, err
}

// GameListing returns one enabled game of an enabled provider.
func (g *Gateway) GameListing(ctx context.Context, id string) (gateway.GameListing, error) {
	rows, err := g.pool.Query(ctx, `
		SELECT x.id, x.name, x.category, x.provider_id, p.name, x.blocked_countries
		FROM games x JOIN providers p ON p.id = x.provider_id
		WHERE x.id = $1 AND x.enabled AND p.enabled`, id)
	if err != nil {
		return gateway.GameListing{}, fmt.Errorf("game %s: %w", id, err)
	}
	l, err := pgx.CollectExactlyOneRow(rows, scanGameListing)
	if errors.Is(err, pgx.ErrNoRows) {
		return gateway.GameListing{}, domain.ErrNotFound
	}
	if err != nil {
		return gateway.GameListing{}, fmt.Errorf("game %s: %w", id, err)
	}
	return l, nil
}
