package providers

import (
	"net/url"
	"strings"

	"github.com/pitboss/pitboss/gateway"
)

// demoAdapter is the built-in demo provider: its game is a page Pitboss
// serves itself, so a launch makes no outbound call.
type demoAdapter struct{ publicURL string }

// gameURL is {PublicURL}/demo/play?session=<id>[&lang=<language>].
func (d demoAdapter) gameURL(req gateway.LaunchRequest) string {
	q := url.Values{"session": {req.SessionID}}
	if req.Language != "" {
		q.Set("lang", req.Language)
	}
	return strings.TrimRight(d.publicURL, "/") + "/demo/play?" + q.Encode()
}
