package api_test

import (
	"net/http"
	"testing"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/gateway"
)

// insideURLs spell inside addresses in every form a browser, a resolver or
// the kernel reads as one (issue 17, item 5): the registration refuses
// each, as the delivery client refuses it when it connects.
var insideURLs = []string{
	"http://2130706433/", "http://0/", "http://0177.0.0.1/", "http://0x7f.1/", "http://0x7f000001/", "http://127.1/",
	"http://127.0.1/", "http://127.0.0.1./", "http://[::127.0.0.1]/", "http://[::7f00:1]/", "http://[::ffff:0:7f00:1]/",
	"http://[::ffff:7f00:1]/", "http://[64:ff9b::7f00:1]/", "http://[64:ff9b:1::7f00:1]/", "http://[2002:7f00:1::]/",
	"http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", "http://[fec0::1]/", "http://[fd00::1]/", "http://100.64.0.1/",
	"http://192.0.2.1/", "http://198.51.100.1/", "http://203.0.113.1/", "http://198.18.0.1/", "http://198.19.0.1/",
	"http://255.255.255.255/", "http://240.0.0.1/", "http://0.1.2.3/", "http://224.0.0.1/", "http://[ff02::1]/",
	"http://[2001:db8::1]/", "http://localhost.localdomain/", "http://hooks.localhost/", "http://１２７.０.０.１/",
}

// metadataURLs are the link-local addresses (the cloud metadata address in
// several encodings): refused even where private targets are allowed.
var metadataURLs = []string{
	"http://169.254.169.254/latest", "http://2852039166/", "http://0xa9.0xfe.0xa9.0xfe/", "http://0251.0376.0251.0376/",
	"http://169.254.43518/", "http://[::ffff:169.254.169.254]/", "http://[::a9fe:a9fe]/", "http://[64:ff9b::a9fe:a9fe]/",
	"http://[2002:a9fe:a9fe::]/", "http://[2001:0:4136:e378:8000:63bf:5601:5601]/", "http://[fe80::1]/",
	"http://[fe80::1%25eth0]/",
}

func TestCallbackURLFormsAreRefused(t *testing.T) {
	t.Parallel()
	const admin = "adm_ssrf_forms_0123456789abcdef"
	for _, allowPrivate := range []bool{false, true} {
		h := apitest.New(t, apitest.Options{AdminToken: admin, AllowPrivateCallbacks: allowPrivate})
		h.AddClient("acme", "sandbox")
		key, _ := h.IssueKey("acme", gateway.ScopeDeliveriesWrite)
		refused := metadataURLs
		mode := "private targets refused"
		if !allowPrivate {
			refused = append(append([]string{}, insideURLs...), metadataURLs...)
		} else {
			mode = "private targets allowed"
		}
		t.Run(mode, func(t *testing.T) {
			for _, url := range refused {
				t.Run(url, func(t *testing.T) {
					e := apitest.WantError(t, h.Call(http.MethodPost, "/api/v1/webhooks", key,
						map[string]any{"url": url, "kinds": []string{"bet"}}), http.StatusBadRequest, wire.CodeInvalidRequest)
					if e.Error.Details["field"] != "url" {
						t.Fatalf("webhook: details %v, want field url", e.Error.Details)
					}
					e = apitest.WantError(t, h.Admin(http.MethodPatch, "/admin/v1/clients/acme",
						map[string]any{"forward_callback_url": url}), http.StatusBadRequest, wire.CodeInvalidRequest)
					if e.Error.Details["field"] != "forward_callback_url" {
						t.Fatalf("forward callback: details %v, want field forward_callback_url", e.Error.Details)
					}
				})
			}
			// a loopback receiver stays reachable where private targets are allowed
			status, code := http.StatusBadRequest, wire.CodeInvalidRequest
			if allowPrivate {
				status, code = http.StatusOK, ""
			}
			apitest.Expect(t, h.Call(http.MethodPost, "/api/v1/webhooks", key,
				map[string]any{"url": "http://127.0.0.1:9000/in", "kinds": []string{"bet"}}), status, code)
			apitest.Expect(t, h.Call(http.MethodPost, "/api/v1/webhooks", key,
				map[string]any{"url": "https://[64:ff9b::808:808]/in", "kinds": []string{"bet"}}), http.StatusOK, "")
		})
	}
}
