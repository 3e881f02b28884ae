package statements

import (
	"bytes"
	"html/template"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// page is the printable statement: one self-contained page (its style
// inline, no script, nothing fetched), for a person to read, print and
// file. Every value is escaped by html/template.
var page = template.Must(template.New("statement").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>Statement {{.Statement.ClientID}} · {{.Statement.Provider}} · {{.Statement.From}} to {{.Statement.To}}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;color:#111;margin:2rem auto;max-width:60rem;padding:0 1rem}
h1{font-size:1.4rem;margin:0 0 .3rem}h2{font-size:1.05rem;margin:1.6rem 0 .4rem}
table{border-collapse:collapse;width:100%;margin:.3rem 0}th,td{border:1px solid #999;padding:.25rem .45rem;text-align:left}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}dl{display:grid;grid-template-columns:max-content 1fr;gap:.15rem 1rem}
dt{font-weight:600}code{font-size:.85em;word-break:break-all}.note{color:#333;font-size:.9em}
@media print{body{margin:0;max-width:none}}
</style></head><body>
<h1>Statement — {{.Statement.Period}} {{.Statement.From}}{{if ne .Statement.From .Statement.To}} to {{.Statement.To}}{{end}}</h1>
<dl>
<dt>Statement</dt><dd><code>{{.ID}}</code></dd>
<dt>Client</dt><dd>{{.Statement.ClientID}}</dd>
<dt>Provider</dt><dd>{{.Statement.Provider}}</dd>
<dt>Closed</dt><dd>{{.Statement.ClosedAt}} (UTC) by {{.Statement.ClosedBy}}</dd>
<dt>Ledger position</dt><dd>{{if .Statement.Position}}{{.Statement.Position}}, chain hash <code>{{.Statement.ChainHash}}</code>{{else}}no events in the period{{end}}</dd>
<dt>Stands on</dt><dd>{{if .Statement.CheckpointID}}signed checkpoint {{.Statement.CheckpointID}}{{else}}—{{end}}</dd>
<dt>Client log</dt><dd>{{if .Statement.LogSize}}{{.Statement.LogSize}} events, root <code>{{.Statement.LogRoot}}</code>{{else}}—{{end}}</dd>
<dt>Signed with</dt><dd>key <code>{{.Statement.KeyID}}</code></dd>
</dl>
<h2>The period, per currency</h2>
<table><thead><tr><th>Currency</th><th class="num">Bets</th><th class="num">Refunds</th><th class="num">Wins</th><th class="num">Reversals</th>
<th class="num">GGR</th><th class="num">Promo GGR</th><th class="num">Jackpot GGR</th><th class="num">Rounds</th><th class="num">Players</th><th class="num">Rate</th><th class="num">Commission</th></tr></thead>
<tbody>{{range .Statement.Lines}}<tr><td>{{.Currency}}</td><td class="num">{{.Bets}}</td><td class="num">{{.BetRefunds}}</td><td class="num">{{.Wins}}</td>
<td class="num">{{.WinReversals}}</td><td class="num">{{.GGR}}</td><td class="num">{{.PromoGGR}}</td><td class="num">{{or .JackpotGGR "—"}}</td><td class="num">{{.Rounds}}</td><td class="num">{{.Players}}</td>
<td class="num">{{if .Rate}}{{.Rate}}{{if .RateChanged}} (changed){{end}}{{else}}—{{end}}</td><td class="num">{{.Commission}}</td></tr>
{{else}}<tr><td colspan="12">No play in the period.</td></tr>{{end}}</tbody></table>
<h2>Late changes of earlier closed periods</h2>
{{if .Statement.Late}}<table><thead><tr><th>Statement</th><th>Period</th><th>Currency</th><th class="num">GGR</th><th class="num">Commission</th></tr></thead>
<tbody>{{range .Statement.Late}}<tr><td><code>{{.StatementID}}</code></td><td>{{.From}} to {{.To}}</td><td>{{.Currency}}</td><td class="num">{{.GGR}}</td><td class="num">{{.Commission}}</td></tr>{{end}}</tbody></table>
{{else}}<p>None.</p>{{end}}
<h2>Totals</h2>
<table><thead><tr><th>Currency</th><th class="num">GGR</th><th class="num">Commission</th></tr></thead>
<tbody>{{range .Statement.Totals}}<tr><td>{{.Currency}}</td><td class="num">{{.GGR}}</td><td class="num">{{.Commission}}</td></tr>
{{else}}<tr><td colspan="3">Nothing.</td></tr>{{end}}</tbody></table>
{{with .Statement.Reporting}}<h2>In {{.Currency}}</h2>
{{if .Complete}}<p>GGR {{.GGR}} {{.Currency}}, commission {{.Commission}} {{.Currency}}, each day at its own rate.</p>
{{else}}<p>Not complete: no exchange rate on {{range $i, $d := .MissingRateDays}}{{if $i}}, {{end}}{{$d}}{{end}}. No total is given rather than a wrong one.</p>{{end}}{{end}}
<p class="note">This page shows a signed statement. Its exact signed bytes, the Ed25519 signature and the public key are in the
statement's JSON (<code>signed</code>); docs/statements.md shows how to check them with openssl or Python, without Pitboss's code.</p>
</body></html>
`))

func writeHTML(c echo.Context, v View) error {
	var buf bytes.Buffer
	if err := page.Execute(&buf, v); err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	return c.HTMLBlob(http.StatusOK, buf.Bytes())
}
