package gateway

import "time"

// CaletaRoundAutoClose is how long a Caleta round may stay open: the
// Caleta document (Operator's Guide 1.5, "Policy of open rounds") finishes
// every round open for more than 48 hours on its side, so no call will
// close it on ours.
const CaletaRoundAutoClose = 48 * time.Hour

// RoundAutoCloseAges is, per wallet protocol, how long a round may stay
// open (a bet standing, no call closed it) before the ledger closes it on
// its own: the protocol document's limit where it gives one (Caleta), else
// dflt (PITBOSS_ROUND_AUTO_CLOSE_AFTER; 0, the default, never closes: our
// own protocol, Evolution's and Red Tiger's name no limit, and a round
// they leave open stays pending).
func RoundAutoCloseAges(dflt time.Duration) map[string]time.Duration {
	ages := make(map[string]time.Duration, len(walletProtocols))
	for _, p := range walletProtocols {
		ages[p.Name] = max(dflt, 0)
		if p.RoundAutoClose > 0 {
			ages[p.Name] = p.RoundAutoClose
		}
	}
	return ages
}
