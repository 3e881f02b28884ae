package providersim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// kind is a wallet call, named by what it does rather than by any one
// protocol's path.
type kind int

const (
	callOpen     kind = iota // the session check: caleta's check, evolution's check (not every protocol)
	callBalance              // a balance read (redtiger's auth)
	callBet                  // a real-money bet
	callWin                  // a win settling a bet
	callRollback             // a rollback of a bet
	callPromoBet             // a bet the promotion pays (a promo bet of zero)
	callPromoWin             // promotion money paid to the player
)

var kindNames = [...]string{"open", "balance", "bet", "win", "rollback", "promo-bet", "promo-win"}

func (k kind) String() string { return kindNames[k] }

// moves reports whether a call of k books a transaction.
func (k kind) moves() bool { return k >= callBet }

// tx is a money call's content, in the protocol-neutral terms the steps
// use; each dialect writes it in its own fields.
type tx struct {
	ID     string // this call's id
	Ref    string // the bet a win settles or a rollback undoes
	Round  string
	Amount int64 // minor units of the session's currency
	Closed bool  // the call closes its round
	// Campaign and Reward are the provider's ids of a free bet's campaign
	// and reward (caleta's campaign_uuid, reward_uuid), where the call
	// spends a reward the provider granted; "" in the promo step, whose
	// ids are its own.
	Campaign, Reward string
}

// answer is a call's answer as the steps judge it.
type answer struct {
	// Status is the protocol's status of the answer (caleta's RS_*,
	// evolution's status, redtiger's error code or "ok", pitboss's error
	// code or "OK", tbb's HTTP status and code: "200" or the error code).
	Status string
	// Balance is the balance the answer tells, in minor units; nil when
	// it tells none.
	Balance *int64
	// ID is the answer's own id of the booked call, where the protocol
	// has one (pitboss's transaction_id, redtiger's result.id): a retry
	// must answer the same.
	ID string
	// Replayed is pitboss's replayed flag; nil in the other protocols.
	Replayed *bool
}

// outcome is what a step expects of a call; each dialect names the status
// its document gives it.
type outcome int

const (
	accepted         outcome = iota // booked (or replayed)
	duplicate                       // the same id with another payload
	winAfterRollback                // a win on a rolled-back bet
	unknownRollback                 // a rollback of a call never booked: moves nothing
	lateOriginal                    // the call such a rollback named, arriving after it
)

// dialect is one wallet protocol as its document describes it.
type dialect interface {
	// has reports whether the protocol has calls of k.
	has(k kind) bool
	// build is the request of a call of k carrying t.
	build(r *run, k kind, t tx) wireRequest
	// read checks an answer's shape against the document (deviations go
	// to c) and returns it.
	read(c *checker, req wireRequest, rep reply) answer
	// status is the protocol's status for o.
	status(o outcome) string
	// ledgerID is the id the ledger books a call of k carrying t under
	// (what the client's transaction history shows).
	ledgerID(k kind, t tx) string
}

// dialects are the simulator's dialects by protocol name, one line each,
// for every protocol of gateway's registry (a test holds the two
// together): each built from the provider's credential.
var dialects = map[string]func(cfg Config) (dialect, error){
	gateway.WalletProtocolCaleta: func(cfg Config) (dialect, error) {
		if cfg.PrivateKey == nil {
			return nil, fmt.Errorf("%w: caleta signs with the provider's RSA private key (--private-key-file)", ErrConfig)
		}
		return caleta{key: cfg.PrivateKey}, nil
	},
	gateway.WalletProtocolPitboss:   bySecret(func(s string) dialect { return pitboss{secret: s} }),
	gateway.WalletProtocolEvolution: bySecret(func(s string) dialect { return evolution{token: s} }),
	gateway.WalletProtocolRedTiger:  bySecret(func(s string) dialect { return redtiger{key: s} }),
	gateway.WalletProtocolTBB:       bySecret(func(s string) dialect { return tbb{secret: s} }),
}

// bySecret builds a dialect of a protocol that authenticates with the
// provider's secret, which the configuration must give.
func bySecret(mk func(secret string) dialect) func(Config) (dialect, error) {
	return func(cfg Config) (dialect, error) {
		if cfg.Secret == "" {
			return nil, fmt.Errorf("%w: %s authenticates with the provider's secret (--provider-secret-file)", ErrConfig, cfg.Protocol)
		}
		return mk(cfg.Secret), nil
	}
}

// newDialect is cfg.Protocol's dialect, refusing a configuration it
// cannot authenticate with.
func newDialect(cfg Config) (dialect, error) {
	mk, ok := dialects[cfg.Protocol]
	if !ok {
		return nil, fmt.Errorf("%w: --protocol %q is not one of %s", ErrConfig, cfg.Protocol, strings.Join(Protocols, ", "))
	}
	return mk(cfg)
}

// jsonBody marshals a request body (maps and strings only: it cannot
// fail).
func jsonBody(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// checker reads one answer and records what is not as the document says.
type checker struct {
	r    *run
	call string
}

func (c *checker) fail(format string, args ...any) {
	c.r.deviate("%s answer: %s", c.call, fmt.Sprintf(format, args...))
}

// obj is a JSON object's fields, undecoded.
type obj map[string]json.RawMessage

// object decodes b as a JSON object; nil (and a deviation) when it is not
// one.
func (c *checker) object(b []byte) obj {
	var o obj
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&o); err != nil || o == nil {
		c.fail("not a JSON object: %.200q", b)
		return nil
	}
	return o
}

// sub is the object in field; nil (and a deviation) when it is missing
// or not an object.
func (c *checker) sub(o obj, field string) obj {
	raw, ok := o[field]
	if !ok {
		c.fail("%s is missing", field)
		return nil
	}
	var s obj
	if json.Unmarshal(raw, &s) != nil || s == nil {
		c.fail("%s is %s, not an object", field, raw)
		return nil
	}
	return s
}

// only flags every field of o not in fields: an answer carries the
// document's fields and no others.
func (c *checker) only(o obj, fields ...string) {
	var extra []string
	for k := range o {
		if !slices.Contains(fields, k) {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	for _, k := range extra {
		c.fail("field %s is not in the document", k)
	}
}

// absent flags each of fields present in o.
func (c *checker) absent(o obj, why string, fields ...string) {
	for _, f := range fields {
		if _, ok := o[f]; ok {
			c.fail("%s is present %s", f, why)
		}
	}
}

// str is o's string field; ok false (and a deviation) when it is missing
// or not a string.
func (c *checker) str(o obj, field string) (string, bool) {
	raw, ok := o[field]
	if !ok {
		c.fail("%s is missing", field)
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		c.fail("%s is %s, not a string", field, raw)
		return "", false
	}
	return s, true
}

// equal checks o's string field is want.
func (c *checker) equal(o obj, field, want string) {
	if s, ok := c.str(o, field); ok && s != want {
		c.fail("%s is %q, want %q", field, s, want)
	}
}

// boolean is o's boolean field.
func (c *checker) boolean(o obj, field string) (bool, bool) {
	raw, ok := o[field]
	if !ok {
		c.fail("%s is missing", field)
		return false, false
	}
	var b bool
	if json.Unmarshal(raw, &b) != nil {
		c.fail("%s is %s, not a boolean", field, raw)
		return false, false
	}
	return b, true
}

// number is o's JSON number field, as its text.
func (c *checker) number(o obj, field string) (string, bool) {
	raw, ok := o[field]
	if !ok {
		c.fail("%s is missing", field)
		return "", false
	}
	s := string(raw)
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		c.fail("%s is %s, not a JSON number", field, raw)
		return "", false
	}
	return s, true
}

// decimal reads text, an amount in the session's currency written with
// exactly the currency's decimals ("90.00" EUR, "100" JPY), as minor
// units.
func (c *checker) decimal(field, text string) (int64, bool) {
	cur := c.r.sess.Currency
	m, err := domain.ParseMoney(text, cur)
	if err != nil {
		c.fail("%s %s is not an amount of %s: %v", field, text, cur.Code(), err)
		return 0, false
	}
	_, frac, dot := strings.Cut(text, ".")
	if digits := len(frac); digits != cur.Exponent() || (cur.Exponent() == 0 && dot) {
		c.fail("%s %s is not written with %s's %d decimals", field, text, cur.Code(), cur.Exponent())
	}
	return m.Minor(), true
}
