package mcpserver

import (
	"bytes"
	"context"
	"crypto/hmac"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
)

// A session of the protocol revisions that have sessions (2025-03-26 to
// 2025-11-25) is its id: what the session needs on any replica (its
// caller, the thread it started on, the negotiated version, the client's
// initialize parameters) is written in the id itself, signed with HMAC-
// SHA256 under a key kept in the store, which every replica on the same
// database reads. A replica that has not seen the session rebuilds it
// from the id (decision 0134). What changes during a session (the thread
// switch_thread moves it to, and its end by DELETE) is kept in a shared
// record of the store, read by every request of the session.
//
// The id's form: "s1." KID "." PAYLOAD "." MAC, where KID names the key
// (16 hex digits), PAYLOAD is the claims' JSON in unpadded base64url and
// MAC the HMAC-SHA256 of what precedes it, in unpadded base64url.

const (
	sessionIDVersion = "s1"
	// keyRecord prefixes the shared records that hold signing keys.
	keyRecord = "mcp-session-key:"
	// sessionRecord prefixes the shared records of sessions that changed.
	sessionRecord = "mcp-session:"
	// maxClaims bounds a session id's payload: a client's initialize
	// parameters past it are kept without its capabilities and
	// implementation details.
	maxClaims = 4 << 10
	// sessionRecordLife is how long the record of an ended or switched
	// session is kept.
	sessionRecordLife = 30 * 24 * time.Hour
)

// sessionClaims is what a session id carries.
type sessionClaims struct {
	Credential string                  `json:"c,omitempty"`
	Scope      string                  `json:"s"`
	Agent      string                  `json:"a,omitempty"`
	Thread     string                  `json:"t"`
	Bound      bool                    `json:"b,omitempty"`
	Tokenless  bool                    `json:"n,omitempty"`
	State      *mcp.ServerSessionState `json:"st"`
	Nonce      string                  `json:"r"`
}

// identity is the session's caller as the claims name it.
func (c *sessionClaims) identity() Identity {
	return Identity{Scope: c.Scope, Agent: c.Agent, Thread: c.Thread, Credential: c.Credential, ThreadBound: c.Bound}
}

// sessionKeys signs and checks session ids with keys kept in the store.
// Each process signs with the oldest key it finds (making one when there
// is none): processes started at once on a new database may each make
// one, and every key stays valid, since each is a record of its own.
type sessionKeys struct {
	store *satchel.Store

	mu      sync.Mutex
	signKID string
	signKey []byte
	known   map[string][]byte
}

func newSessionKeys(st *satchel.Store) *sessionKeys {
	return &sessionKeys{store: st, known: map[string][]byte{}}
}

type keyJSON struct {
	Key     string    `json:"key"`
	Created time.Time `json:"created"`
}

// signing returns the key new ids are signed with.
func (k *sessionKeys) signing(ctx context.Context) (string, []byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.signKey != nil {
		return k.signKID, k.signKey, nil
	}
	recs, err := k.store.SharedStates(ctx, keyRecord)
	if err != nil {
		return "", nil, err
	}
	type cand struct {
		kid     string
		key     []byte
		created time.Time
	}
	var cands []cand
	for name, v := range recs {
		var kj keyJSON
		key, err := decodeKey(v, &kj)
		if err != nil {
			continue
		}
		cands = append(cands, cand{strings.TrimPrefix(name, keyRecord), key, kj.Created})
	}
	if len(cands) == 0 {
		var kb [8]byte
		key := make([]byte, 32)
		_, _ = crand.Read(kb[:])
		_, _ = crand.Read(key)
		now, err := k.store.Now(ctx)
		if err != nil {
			return "", nil, err
		}
		v, _ := json.Marshal(keyJSON{Key: base64.RawURLEncoding.EncodeToString(key), Created: now.UTC()})
		kid := hex.EncodeToString(kb[:])
		if err := k.store.PutSharedState(ctx, keyRecord+kid, v); err != nil {
			return "", nil, err
		}
		cands = append(cands, cand{kid, key, now})
	}
	sort.Slice(cands, func(i, j int) bool {
		if !cands[i].created.Equal(cands[j].created) {
			return cands[i].created.Before(cands[j].created)
		}
		return cands[i].kid < cands[j].kid
	})
	for _, c := range cands {
		k.known[c.kid] = c.key
	}
	k.signKID, k.signKey = cands[0].kid, cands[0].key
	return k.signKID, k.signKey, nil
}

func decodeKey(v []byte, kj *keyJSON) ([]byte, error) {
	if err := json.Unmarshal(v, kj); err != nil {
		return nil, err
	}
	key, err := base64.RawURLEncoding.DecodeString(kj.Key)
	if err != nil || len(key) < 32 {
		return nil, errors.New("malformed session key")
	}
	return key, nil
}

// key returns the key kid names, reading the store when it is not known
// here yet.
func (k *sessionKeys) key(ctx context.Context, kid string) ([]byte, error) {
	k.mu.Lock()
	key := k.known[kid]
	k.mu.Unlock()
	if key != nil {
		return key, nil
	}
	v, ok, err := k.store.SharedState(ctx, keyRecord+kid)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errUnknownSession
	}
	var kj keyJSON
	if key, err = decodeKey(v, &kj); err != nil {
		return nil, errUnknownSession
	}
	k.mu.Lock()
	k.known[kid] = key
	k.mu.Unlock()
	return key, nil
}

// errUnknownSession is a session id that no key of the store signed.
var errUnknownSession = errors.New("session not found")

// sign returns the session id of c.
func (k *sessionKeys) sign(ctx context.Context, c *sessionClaims) (string, error) {
	kid, key, err := k.signing(ctx)
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	if len(payload) > maxClaims && c.State != nil && c.State.InitializeParams != nil {
		// Keep what the audit trail and the version need.
		small := *c
		st := *c.State
		ip := &mcp.InitializeParams{ProtocolVersion: st.InitializeParams.ProtocolVersion}
		if ci := st.InitializeParams.ClientInfo; ci != nil {
			ip.ClientInfo = &mcp.Implementation{Name: truncate(ci.Name, 200), Version: truncate(ci.Version, 100)}
		}
		st.InitializeParams = ip
		small.State = &st
		if payload, err = json.Marshal(&small); err != nil {
			return "", err
		}
	}
	head := sessionIDVersion + "." + kid + "." + base64.RawURLEncoding.EncodeToString(payload)
	return head + "." + base64.RawURLEncoding.EncodeToString(mac(key, head)), nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func mac(key []byte, head string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(head))
	return m.Sum(nil)
}

// verify returns the claims of a session id signed with a key of the
// store; errUnknownSession for any other id.
func (k *sessionKeys) verify(ctx context.Context, id string) (*sessionClaims, error) {
	c, kid, head, sum, ok := splitSessionID(id)
	if !ok {
		return nil, errUnknownSession
	}
	key, err := k.key(ctx, kid)
	if err != nil {
		return nil, err
	}
	if !hmac.Equal(mac(key, head), sum) {
		return nil, errUnknownSession
	}
	var cl sessionClaims
	dec := json.NewDecoder(bytes.NewReader(c))
	if err := dec.Decode(&cl); err != nil || cl.State == nil || cl.State.InitializeParams == nil || cl.Scope == "" || cl.Thread == "" {
		return nil, errUnknownSession
	}
	return &cl, nil
}

// splitSessionID parses a session id's form (not its signature).
func splitSessionID(id string) (payload []byte, kid, head string, sum []byte, ok bool) {
	parts := strings.Split(id, ".")
	if len(parts) != 4 || parts[0] != sessionIDVersion || len(parts[1]) != 16 {
		return nil, "", "", nil, false
	}
	if _, err := hex.DecodeString(parts[1]); err != nil {
		return nil, "", "", nil, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return nil, "", "", nil, false
	}
	sum, err = base64.RawURLEncoding.DecodeString(parts[3])
	if err != nil || len(sum) != sha256.Size {
		return nil, "", "", nil, false
	}
	return payload, parts[1], parts[0] + "." + parts[1] + "." + parts[2], sum, true
}

// sessionLabel names a session in logs and records: the same on every
// replica, and short.
func sessionLabel(id string) string {
	h := sha256.Sum256([]byte(id))
	return "s-" + hex.EncodeToString(h[:8])
}

// sessionState is the shared record of a session that changed: the
// thread switch_thread moved it to, and whether DELETE ended it.
type sessionState struct {
	Thread  string    `json:"thread,omitempty"`
	Ended   bool      `json:"ended,omitempty"`
	Expires time.Time `json:"expires"`
}

// readSessionState reads the shared record of the session labelled
// label (zero when it has none).
func (s *Server) readSessionState(ctx context.Context, label string) (sessionState, error) {
	v, ok, err := s.cfg.Store.SharedState(ctx, sessionRecord+label)
	if err != nil || !ok {
		return sessionState{}, err
	}
	var st sessionState
	if err := json.Unmarshal(v, &st); err != nil {
		return sessionState{}, fmt.Errorf("reading the state of session %s: %w", label, err)
	}
	return st, nil
}

// writeSessionState writes the shared record of a session.
func (s *Server) writeSessionState(ctx context.Context, label string, st sessionState) error {
	now, err := s.cfg.Store.Now(ctx)
	if err != nil {
		return err
	}
	st.Expires = now.Add(sessionRecordLife).UTC()
	v, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return s.cfg.Store.PutSharedState(ctx, sessionRecord+label, v)
}

// pruneSessionStates deletes the session records past their time.
func (s *Server) pruneSessionStates(ctx context.Context) error {
	recs, err := s.cfg.Store.SharedStates(ctx, sessionRecord)
	if err != nil {
		return err
	}
	now, err := s.cfg.Store.Now(ctx)
	if err != nil {
		return err
	}
	for k, v := range recs {
		var st sessionState
		if json.Unmarshal(v, &st) == nil && now.Before(st.Expires) {
			continue
		}
		if err := s.cfg.Store.PutSharedState(ctx, k, nil); err != nil {
			return err
		}
	}
	return nil
}
