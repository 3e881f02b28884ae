package api

import (
	_ "embed"
	"net/http"

	"github.com/labstack/echo/v4"
)

// openAPIDocument is the OpenAPI 3.1 document of the whole public API, written by
// hand from the handlers and checked against real answers by
// openapi_test.go. It is served at GET /api/v1/openapi.json.
//
//go:embed openapi.json
var openAPIDocument []byte

// OpenAPIPath is where the document is served, without authentication.
const OpenAPIPath = "/api/v1/openapi.json"

// registerOpenAPIRoute serves the document. It is registered on the Echo
// instance, not on the /api/v1 group, so that no key is needed and it is
// neither rate limited nor counted as usage.
func (s *Server) registerOpenAPIRoute(e *echo.Echo) {
	e.GET(OpenAPIPath, func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "no-cache")
		return c.Blob(http.StatusOK, echo.MIMEApplicationJSONCharsetUTF8, openAPIDocument)
	})
}
