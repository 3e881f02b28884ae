package operatorsim

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/pitboss/pitboss/domain"
)

// stateVersion is the state file's format; a file of another version is
// refused rather than misread.
const stateVersion = 1

// Transaction is one money movement the simulator applied, as it keeps it
// (and writes it to the state file): what the request stated and what it
// did to the player's balances.
type Transaction struct {
	// ID is the simulator's own id of it: PAM's transactionId, TBB's
	// transaction_id in the answer (the same on every re-send).
	ID string `json:"id"`
	// Key is its idempotency key: a request with the same key is a
	// re-send of it, never a second movement.
	Key      string `json:"key"`
	Protocol string `json:"protocol"`
	// Type is PAM's transactionType (WITHDRAW, DEPOSIT, CANCEL,
	// PROMO...) or TBB's action (bet, win, refund, rollback-win).
	Type     string `json:"type"`
	Player   string `json:"playerId"`
	Currency string `json:"currency"`
	// Stated is what the request said, in minor units; Moved is what the
	// simulator did to the balances (signed: a withdraw's is negative; a
	// cancel gives back the withdraw's amounts whatever it stated).
	Stated Amounts `json:"stated"`
	Moved  Amounts `json:"moved"`
	// Provider is PAM's provider (the query's); empty for TBB.
	Provider string `json:"provider,omitempty"`
	// ProviderTxID is PAM's providerTransactionId, TBB's transaction_id.
	ProviderTxID string `json:"providerTransactionId"`
	// BetRef is PAM's providerBetRef; TBB's refunded_transaction_id or
	// rollback_win_transaction_id.
	BetRef   string `json:"providerBetRef,omitempty"`
	Game     string `json:"game,omitempty"`
	Round    string `json:"round,omitempty"`
	GameOver bool   `json:"gameOver,omitempty"`
	// Session is the player token (PAM) or session_token (TBB) sent.
	Session string `json:"session,omitempty"`
	// At is PAM's transactionDateTime, or when a TBB call arrived;
	// Recorded when the simulator applied it.
	At       time.Time `json:"at"`
	Recorded time.Time `json:"recorded"`
	// Undone: a withdraw cancelled, a bet refunded, a win rolled back.
	Undone bool `json:"undone,omitempty"`
	// Ref is the ID of the transaction this one undid.
	Ref string `json:"ref,omitempty"`
}

// Token is a player token the simulator issued: PAM's X-Player-Token,
// tied to one player and currency.
type Token struct {
	Token    string `json:"token"`
	Currency string `json:"currency"`
}

// Player is a player as the simulator holds it.
type Player struct {
	ID string `json:"id"`
	// Accounts are the balances by currency code.
	Accounts map[string]Amounts `json:"accounts"`
	Tokens   []Token            `json:"tokens"`
}

type tokenOwner struct {
	Player   string `json:"player"`
	Currency string `json:"currency"`
}

// round is a PAM game round: started by its first withdraw (or a promo
// deposit naming it), settled by a deposit, closed by isGameOver.
type round struct {
	Player    string    `json:"player"`
	Provider  string    `json:"provider"`
	Game      string    `json:"game"`
	ID        string    `json:"id"`
	Start     time.Time `json:"start"`
	End       time.Time `json:"end,omitzero"`
	Closed    bool      `json:"closed,omitempty"`
	Deposited bool      `json:"deposited,omitempty"`
	// Withdraws are the keys of the round's withdraws.
	Withdraws []string `json:"withdraws,omitempty"`
}

// state is everything the simulator keeps, and the state file's content.
type state struct {
	Version      int                            `json:"version"`
	Seq          int64                          `json:"seq"`
	Players      map[string]map[string]*Amounts `json:"players"`
	Tokens       map[string]tokenOwner          `json:"tokens"`
	Transactions []Transaction                  `json:"transactions"`
	Rounds       map[string]*round              `json:"rounds"`
	// RefundedFirst are TBB bet ids refunded before the bet arrived
	// (answered 406): the bet, should it come, is refused 408.
	RefundedFirst map[string]bool `json:"refundedFirst"`
}

func newState() state {
	return state{Version: stateVersion, Players: map[string]map[string]*Amounts{}, Tokens: map[string]tokenOwner{},
		Rounds: map[string]*round{}, RefundedFirst: map[string]bool{}}
}

// store holds the state behind one mutex; every change goes through a
// change (its undo journal) and is written to the state file before it is
// answered.
type store struct {
	mu    sync.Mutex
	path  string // empty: memory only
	now   func() time.Time
	st    state
	byKey map[string]int // transaction key -> index
}

func newStore(path string, now func() time.Time) (*store, error) {
	s := &store{path: path, now: now}
	if err := s.load(); err != nil {
		return nil, err
	}
	return s, nil
}

// load reads the state file, or starts empty when there is none.
func (s *store) load() error {
	st := newState()
	if s.path != "" {
		b, err := os.ReadFile(s.path)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return fmt.Errorf("read state %s: %w", s.path, err)
		default:
			if err := json.Unmarshal(b, &st); err != nil {
				return fmt.Errorf("read state %s: %w", s.path, err)
			}
			if st.Version != stateVersion {
				return fmt.Errorf("read state %s: version %d, want %d", s.path, st.Version, stateVersion)
			}
		}
	}
	fillState(&st)
	byKey := make(map[string]int, len(st.Transactions))
	for i, t := range st.Transactions {
		byKey[t.Key] = i
	}
	s.st, s.byKey = st, byKey
	return nil
}

// fillState makes a state's nil maps empty (an old or hand-made file).
func fillState(st *state) {
	if st.Players == nil {
		st.Players = map[string]map[string]*Amounts{}
	}
	if st.Tokens == nil {
		st.Tokens = map[string]tokenOwner{}
	}
	if st.Rounds == nil {
		st.Rounds = map[string]*round{}
	}
	if st.RefundedFirst == nil {
		st.RefundedFirst = map[string]bool{}
	}
}

// persist writes the state file atomically: a temporary file in the same
// directory, fsync'd, renamed over the old one, and the directory fsync'd,
// so a crash leaves either the old state or the new, never half of one.
func (s *store) persist() error {
	if s.path == "" {
		return nil
	}
	b, err := json.Marshal(&s.st)
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	dir := filepath.Dir(s.path)
	f, err := os.CreateTemp(dir, filepath.Base(s.path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	tmp := f.Name()
	_, werr := f.Write(b)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, s.path)
	}
	if werr != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write state %s: %w", s.path, werr)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync state directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync state directory: %w", err)
	}
	return nil
}

// change is one decision being applied: every mutation records how to
// undo it, so a state that cannot be written is taken back and the
// request answered as a fault, never half applied.
type change struct {
	s    *store
	undo []func()
}

func (s *store) begin() *change { return &change{s: s} }

// commit writes the state; on failure it undoes the change.
func (c *change) commit() error {
	if err := c.s.persist(); err != nil {
		c.rollback()
		return err
	}
	c.undo = nil // written: nothing left to take back
	return nil
}

func (c *change) rollback() {
	for i := len(c.undo) - 1; i >= 0; i-- {
		c.undo[i]()
	}
	c.undo = nil
}

// move adds delta to the player's account in cur.
func (c *change) move(player, cur string, delta Amounts) error {
	acct := c.s.st.Players[player][cur]
	if acct == nil {
		return fmt.Errorf("player %s has no %s account", player, cur)
	}
	next, err := acct.add(delta)
	if err != nil {
		return err
	}
	prev := *acct
	*acct = next
	c.undo = append(c.undo, func() { *acct = prev })
	return nil
}

// record appends t with the next id and returns it as stored.
func (c *change) record(t Transaction) Transaction {
	s := c.s
	prevSeq := s.st.Seq
	s.st.Seq++
	t.ID = fmt.Sprintf("sim-%08d", s.st.Seq)
	t.Recorded = s.now().UTC()
	s.st.Transactions = append(s.st.Transactions, t)
	s.byKey[t.Key] = len(s.st.Transactions) - 1
	c.undo = append(c.undo, func() {
		s.st.Transactions = s.st.Transactions[:len(s.st.Transactions)-1]
		delete(s.byKey, t.Key)
		s.st.Seq = prevSeq
	})
	return t
}

// markUndone flags the transaction with key as undone.
func (c *change) markUndone(key string) {
	i := c.s.byKey[key]
	t := &c.s.st.Transactions[i]
	prev := t.Undone
	t.Undone = true
	c.undo = append(c.undo, func() { c.s.st.Transactions[i].Undone = prev })
}

// setRound replaces (or adds) the round at key.
func (c *change) setRound(key string, r round) {
	prev, had := c.s.st.Rounds[key]
	r.Withdraws = slices.Clone(r.Withdraws)
	c.s.st.Rounds[key] = &r
	c.undo = append(c.undo, func() {
		if had {
			c.s.st.Rounds[key] = prev
		} else {
			delete(c.s.st.Rounds, key)
		}
	})
}

// markRefundedFirst records a TBB bet id refunded before the bet.
func (c *change) markRefundedFirst(id string) {
	if c.s.st.RefundedFirst[id] {
		return
	}
	c.s.st.RefundedFirst[id] = true
	c.undo = append(c.undo, func() { delete(c.s.st.RefundedFirst, id) })
}

// lookup is the transaction stored under key.
func (s *store) lookup(key string) (Transaction, bool) {
	i, ok := s.byKey[key]
	if !ok {
		return Transaction{}, false
	}
	return s.st.Transactions[i], true
}

// account is the player's balances in cur, and whether there is one.
func (s *store) account(player, cur string) (Amounts, bool) {
	a := s.st.Players[player][cur]
	if a == nil {
		return Amounts{}, false
	}
	return *a, true
}

// newToken is a fresh player token: 40 hex digits, within PAM's 32..40.
func newToken() (string, error) {
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// fund creates the player's account in cur if needed, adds amounts to it
// and issues a token for the player in cur; it is written before it
// returns.
func (s *store) fund(player string, cur domain.Currency, amounts Amounts) (string, error) {
	if player == "" || len(player) > 40 {
		return "", fmt.Errorf("player id %q: 1 to 40 characters", player)
	}
	if amounts.negative() {
		return "", errors.New("a balance to add must not be negative")
	}
	token, err := newToken()
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.begin()
	accts := s.st.Players[player]
	if accts == nil {
		accts = map[string]*Amounts{}
		s.st.Players[player] = accts
		c.undo = append(c.undo, func() { delete(s.st.Players, player) })
	}
	if accts[cur.Code()] == nil {
		accts[cur.Code()] = &Amounts{}
		c.undo = append(c.undo, func() { delete(accts, cur.Code()) })
	}
	if err := c.move(player, cur.Code(), amounts); err != nil {
		c.rollback()
		return "", err
	}
	s.st.Tokens[token] = tokenOwner{Player: player, Currency: cur.Code()}
	c.undo = append(c.undo, func() { delete(s.st.Tokens, token) })
	if err := c.commit(); err != nil {
		return "", err
	}
	return token, nil
}

// player is the player's view, and whether it exists.
func (s *store) player(id string) (Player, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.playerLocked(id)
}

func (s *store) playerLocked(id string) (Player, bool) {
	accts, ok := s.st.Players[id]
	if !ok {
		return Player{}, false
	}
	p := Player{ID: id, Accounts: make(map[string]Amounts, len(accts)), Tokens: []Token{}}
	for cur, a := range accts {
		p.Accounts[cur] = *a
	}
	for tok, o := range s.st.Tokens {
		if o.Player == id {
			p.Tokens = append(p.Tokens, Token{Token: tok, Currency: o.Currency})
		}
	}
	sort.Slice(p.Tokens, func(i, j int) bool { return p.Tokens[i].Token < p.Tokens[j].Token })
	return p, true
}

// players is every player, by id.
func (s *store) players() []Player {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, 0, len(s.st.Players))
	for id := range s.st.Players {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]Player, 0, len(ids))
	for _, id := range ids {
		p, _ := s.playerLocked(id)
		out = append(out, p)
	}
	return out
}

// transactions is a copy of every transaction, in the order applied.
func (s *store) transactions() []Transaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.st.Transactions)
}
