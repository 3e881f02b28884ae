package api_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres/auditstore"
	"github.com/pitboss/pitboss/adapters/postgres/logstore"
	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/internal/eventually"
	"github.com/pitboss/pitboss/ledgerlog"
)

// logSession drives the verifiable log's routes (docs/audit.md, "The
// verifiable log") through the conformance session, for a client's own
// log and the platform's: a client of 257 events, so that full tiles
// exist, two checkpoints and one event logged after them.
func (h *oaHarness) logSession() {
	h.t.Helper()
	ctx := h.ctx
	h.AddClient("logaud", "sandbox")
	key, _ := h.IssueKey("logaud", gateway.ScopeAuditRead)
	noScope, _ := h.IssueKey("logaud", gateway.ScopeWalletRead)
	eur := domain.MustCurrency("EUR")
	deposit := func(i int) {
		if _, err := h.Commands.Deposit(ctx, domain.ClientTx{Client: "logaud", Player: "p1", ExternalTxID: fmt.Sprint("log-", i),
			Currency: eur}, domain.FromMinor(100, eur)); err != nil {
			h.t.Fatal(err)
		}
	}
	b, store := logstore.NewBuilder(h.Pool, 0, nil), logstore.New(h.Pool)
	grow := func(sign bool) {
		eventually.True(h.t, 30*time.Second, "the logs at the ledger's head", func() bool {
			if _, err := b.Pass(ctx); err != nil {
				h.t.Fatal(err)
			}
			tree, err := store.Tree(ctx, ledgerlog.PlatformLog)
			return err == nil && tree.Position == h.Head()
		})
		if sign {
			if _, err := store.SignDue(ctx, apitest.LogOrigin, auditstore.NewCheckpoints(h.Pool, h.Box), 0, time.Now()); err != nil {
				h.t.Fatal(err)
			}
		}
	}
	sizes := func(prefix, auth string) int64 {
		r := h.do(oaReq{method: "GET", path: prefix + "/checkpoint", auth: auth, want: oaWant()})
		var n int64
		if _, err := fmt.Sscan(strings.Split(string(r.body), "\n")[1], &n); err != nil {
			h.t.Fatalf("checkpoint %s: %v", r.body, err)
		}
		return n
	}
	for i := range 256 {
		deposit(i)
	}
	grow(true)
	first, firstPlatform := sizes("/api/v1/audit/log", key), sizes("/admin/v1/log", oaAdminToken)
	deposit(256)
	grow(true)
	deposit(257)
	grow(false)
	var pos, later int64
	if err := h.Pool.QueryRow(ctx, `SELECT min(position), max(position) FROM events WHERE stream_id LIKE '%:logaud:%'`).
		Scan(&pos, &later); err != nil {
		h.t.Fatal(err)
	}
	h.logRoutes("/api/v1/audit/log", key, noScope, first, pos, later)
	h.logRoutes("/admin/v1/log", oaAdminToken, key, firstPlatform, pos, later)
}

// logRoutes asks every log route under prefix with auth (and denied
// with the wrong credential): first is the older checkpoint's size, pos
// an event in both, later one logged after the last checkpoint.
func (h *oaHarness) logRoutes(prefix, auth, denied string, first, pos, later int64) {
	h.t.Helper()
	do := h.do
	denial := oaWant(403)
	do(oaReq{method: "GET", path: prefix + "/checkpoint", auth: denied, want: denial, code: wire.CodeForbidden})
	do(oaReq{method: "GET", path: prefix + "/keys", auth: auth, want: oaWant()})
	do(oaReq{method: "GET", path: prefix + "/keys", auth: denied, want: denial, code: wire.CodeForbidden})
	do(oaReq{method: "GET", path: prefix + "/tile/0/000", auth: auth, want: oaWant()})
	do(oaReq{method: "GET", path: prefix + "/tile/0/009", auth: auth, want: oaWant(404), code: wire.CodeNotFound})
	do(oaReq{method: "GET", path: prefix + "/tile/0/000", auth: denied, want: denial, code: wire.CodeForbidden})
	do(oaReq{method: "GET", path: prefix + "/tile/1/000.p/1", auth: auth, want: oaWant()})
	do(oaReq{method: "GET", path: prefix + "/tile/1/000.p/200", auth: auth, want: oaWant(404), code: wire.CodeNotFound})
	do(oaReq{method: "GET", path: prefix + "/tile/1/000.p/1", auth: denied, want: denial, code: wire.CodeForbidden})
	do(oaReq{method: "GET", path: prefix + "/tile/entries/000", auth: auth, want: oaWant()})
	do(oaReq{method: "GET", path: prefix + "/tile/entries/009", auth: auth, want: oaWant(404), code: wire.CodeNotFound})
	do(oaReq{method: "GET", path: prefix + "/tile/entries/000", auth: denied, want: denial, code: wire.CodeForbidden})
	do(oaReq{method: "GET", path: prefix + "/tile/entries/000.p/1", auth: auth, want: oaWant()})
	do(oaReq{method: "GET", path: prefix + "/tile/entries/000.p/1", auth: denied, want: denial, code: wire.CodeForbidden})
	do(oaReq{method: "GET", path: prefix + "/tile/entries/009.p/1", auth: auth, want: oaWant(404), code: wire.CodeNotFound})

	inc := prefix + "/proofs/inclusion"
	do(oaReq{method: "GET", path: fmt.Sprint(inc, "?position=", pos), auth: auth, want: oaWant()})
	do(oaReq{method: "GET", path: fmt.Sprint(inc, "?position=", pos, "&size=", first), auth: auth, want: oaWant()})
	do(oaReq{method: "GET", path: inc + "?position=0", auth: auth, want: oaWant(400), code: wire.CodeInvalidRequest})
	do(oaReq{method: "GET", path: inc + "?event_id=00000000-0000-4000-8000-000000000000", auth: auth, want: oaWant(404),
		code: wire.CodeNotFound})
	do(oaReq{method: "GET", path: fmt.Sprint(inc, "?position=", later), auth: auth, want: oaWant(409), code: wire.CodeNotInLog})
	do(oaReq{method: "GET", path: fmt.Sprint(inc, "?position=", pos), auth: denied, want: denial, code: wire.CodeForbidden})

	cons := prefix + "/proofs/consistency"
	do(oaReq{method: "GET", path: fmt.Sprint(cons, "?from=", first, "&to=", first+1), auth: auth, want: oaWant()})
	do(oaReq{method: "GET", path: cons + "?from=2", auth: auth, want: oaWant(400), code: wire.CodeInvalidRequest})
	do(oaReq{method: "GET", path: fmt.Sprint(cons, "?from=", first-1, "&to=", first), auth: auth, want: oaWant(404),
		code: wire.CodeNotFound})
	do(oaReq{method: "GET", path: cons + "?from=1&to=2", auth: denied, want: denial, code: wire.CodeForbidden})
}
