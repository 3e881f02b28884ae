package api_test

import "github.com/pitboss/pitboss/api/wire"

// consoleSession drives the console's routes (docs/console.md) through the
// conformance session: a success and the main errors of each.
func (h *oaHarness) consoleSession(full, walletOnly string) {
	h.t.Helper()
	do := h.do
	do(oaReq{method: "GET", path: "/api/v1/me", auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/me", want: oaWant(401), code: wire.CodeUnauthorized})

	do(oaReq{method: "GET", path: "/api/v1/console/overview", auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/console/overview?day=2020-01-31", auth: walletOnly, want: oaWant(403), code: wire.CodeForbidden})
	do(oaReq{method: "GET", path: "/api/v1/console/overview?day=yesterday", auth: full, want: oaWant(400), code: wire.CodeInvalidRequest})

	list := do(oaReq{method: "GET", path: "/api/v1/transactions?type=game_result&per_page=1", auth: full, want: oaWant()})
	if id := oaString(list.json, "data", "0", "id"); id != "" {
		do(oaReq{method: "GET", path: "/api/v1/transactions/" + id, auth: full, want: oaWant()})
		do(oaReq{method: "GET", path: "/api/v1/transactions/" + id, auth: walletOnly, want: oaWant(403), code: wire.CodeForbidden})
	} else {
		h.t.Errorf("no game result to open: %s", list.body)
	}
	do(oaReq{method: "GET", path: "/api/v1/transactions/00000000-0000-4000-8000-000000000000", auth: full, want: oaWant(404),
		code: wire.CodeNotFound})
	do(oaReq{method: "GET", path: "/api/v1/transactions/not-a-uuid", auth: full, want: oaWant(400), code: wire.CodeInvalidRequest})

	do(oaReq{method: "GET", path: "/api/v1/audit/head", auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/audit/head", auth: walletOnly, want: oaWant(403), code: wire.CodeForbidden})
}
