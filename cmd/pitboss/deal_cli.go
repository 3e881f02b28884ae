package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/user"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres/readstore"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// The `deal` command: commission deals (docs/finance.md) straight on the
// database, as POST/GET /admin/v1/deals do. The history names the actor
// "cli:" and the operating-system user.

const dealUsage = `usage:
  pitboss deal add --provider P [--client ID] [--currency CODE] --valid-from YYYY-MM-DD
                   --kind flat --rate R | --kind tiered --mode marginal|whole --bands FROM:TO:RATE,...,FROM::RATE
                   [--carry-forward] [--backdate] [--note TEXT]
  pitboss deal list    [--provider P] [--client ID]   (in effect today and scheduled)
  pitboss deal history [--provider P] [--client ID] [--page N] [--per-page N]
  every command takes --json
`

// cliDeal is a deal version as the CLI prints it with --json.
type cliDeal struct {
	ID        int64           `json:"id"`
	Terms     domain.DealSpec `json:"terms"`
	CreatedAt time.Time       `json:"created_at"`
	Actor     string          `json:"actor"`
	Backdated bool            `json:"backdated"`
	Note      string          `json:"note"`
}

func toCLIDeal(v domain.DealVersion) cliDeal {
	return cliDeal{ID: v.ID, Terms: v.Deal.Spec(), CreatedAt: v.CreatedAt, Actor: v.Actor, Backdated: v.Backdated, Note: v.Note}
}

// parseBands reads FROM:TO:RATE,...: the last band has no TO.
func parseBands(s string) ([]domain.BandSpec, error) {
	var out []domain.BandSpec
	for _, part := range splitList(s) {
		f := strings.Split(part, ":")
		if len(f) != 3 {
			return nil, fmt.Errorf("--bands: %q is not FROM:TO:RATE (FROM::RATE for the last band)", part)
		}
		out = append(out, domain.BandSpec{From: f[0], To: f[1], Rate: f[2]})
	}
	return out, nil
}

func cliActor() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return "cli:" + u.Username
	}
	return "cli"
}

func dealCommand(ctx context.Context, cfg config, args []string, out io.Writer) error {
	fs, err := subcommandFlags("deal", dealUsage, args, out)
	if err != nil {
		return err
	}
	asJSON := fs.Bool("json", false, "print JSON")
	var spec domain.DealSpec
	var bands, note string
	var backdate bool
	fs.StringVar(&spec.Provider, "provider", "", "provider id")
	fs.StringVar(&spec.ClientID, "client", "", "client id (empty: the provider's default)")
	fs.StringVar(&spec.Currency, "currency", "", "currency (empty: every currency; a tiered deal names one)")
	fs.StringVar(&spec.ValidFrom, "valid-from", "", "the UTC day the version applies from")
	fs.StringVar(&spec.Kind, "kind", "", "flat or tiered")
	fs.StringVar(&spec.Rate, "rate", "", "flat: the rate, 0 to 1")
	fs.StringVar(&spec.Mode, "mode", "", "tiered: marginal or whole")
	fs.StringVar(&bands, "bands", "", "tiered: FROM:TO:RATE,... (amounts in the currency; the last band FROM::RATE)")
	fs.BoolVar(&spec.CarryForward, "carry-forward", false, "carry a month's negative GGR into the next months")
	fs.BoolVar(&backdate, "backdate", false, "allow a valid-from before today (recorded)")
	fs.StringVar(&note, "note", "", "free text kept in the history")
	page := fs.Int("page", 1, "history: page")
	perPage := fs.Int("per-page", 50, "history: rows a page (at most 200)")
	if err := parseFlags(fs, args[1:], out, out); err != nil {
		return err
	}
	pool, err := openDatabase(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	rm := readstore.NewReadModels(pool)
	filter := gateway.DealFilter{Provider: spec.Provider, ClientID: spec.ClientID}
	now := time.Now().UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)

	var list []domain.DealVersion
	switch args[0] {
	case "add":
		if bands != "" {
			if spec.Bands, err = parseBands(bands); err != nil {
				return err
			}
		}
		d, err := domain.NewDeal(spec)
		if err != nil {
			return cliError(err)
		}
		if err := domain.CheckText("note", note, domain.MaxDealNoteLength); err != nil {
			return cliError(err)
		}
		backdated := d.ValidFrom.Before(today)
		if backdated && !backdate {
			return fmt.Errorf("--valid-from %s is before today (%s UTC): it changes reports already read; add --backdate to mean it",
				spec.ValidFrom, today.Format(time.DateOnly))
		}
		v, err := rm.AddDealVersion(ctx, domain.DealVersion{Deal: d, Actor: cliActor(), Backdated: backdated, Note: note})
		if err != nil {
			return err
		}
		list = []domain.DealVersion{v}
	case "list":
		all, err := rm.DealVersions(ctx, filter)
		if err != nil {
			return err
		}
		list = domain.CurrentDeals(all, today)
	case "history":
		if *page < 1 || *perPage < 1 || *perPage > 200 {
			return errors.New("--page must be 1 or more and --per-page from 1 to 200")
		}
		if list, _, err = rm.DealHistory(ctx, filter, *page, *perPage); err != nil {
			return err
		}
	default:
		fmt.Fprint(out, dealUsage)
		return fmt.Errorf("deal: unknown subcommand %q", args[0])
	}
	if *asJSON {
		vs := make([]cliDeal, 0, len(list))
		for _, v := range list {
			vs = append(vs, toCLIDeal(v))
		}
		return writeJSON(out, vs)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPROVIDER\tCLIENT\tCURRENCY\tFROM\tTERMS\tCARRY\tCREATED\tACTOR\tBACKDATED\tNOTE")
	for _, v := range list {
		s := v.Deal.Spec()
		terms := "flat " + s.Rate
		if s.Kind == string(domain.DealTiered) {
			var b []string
			for _, band := range s.Bands {
				b = append(b, band.From+":"+band.To+":"+band.Rate)
			}
			terms = "tiered " + s.Mode + " " + strings.Join(b, ",")
		}
		client, cur := s.ClientID, s.Currency
		if client == "" {
			client = "(default)"
		}
		if cur == "" {
			cur = "(every)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%t\t%s\t%s\t%t\t%s\n", v.ID, s.Provider, client, cur, s.ValidFrom, terms,
			s.CarryForward, v.CreatedAt.Format(time.RFC3339), v.Actor, v.Backdated, v.Note)
	}
	return tw.Flush()
}
