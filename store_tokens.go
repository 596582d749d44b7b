package satchel

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/satchel-dev/satchel/internal/errs"
)

// Access tokens identify the callers of the MCP server over HTTP (DESIGN
// §6): each names the one scope it may touch, the agent it speaks for and,
// optionally, the thread it is bound to. The secret is shown once, when the
// token is made; the store keeps only its SHA-256, in the global settings
// namespace of the backend (scope ""), under "token:<id>".

// tokenPrefix starts every secret, so that a leaked one is recognisable
// (by secret scanners, and by a person reading a log).
const tokenPrefix = "stk_"

// tokenKey is the prefix of the settings that hold tokens.
const tokenKey = "token:"

// TokenSpec describes a token to create.
type TokenSpec struct {
	// Agent is the agent the token speaks for: lowercase letters, digits,
	// '-' and '_', starting with a letter, at most 48 characters (an
	// agent's directory name in a project's agents/).
	Agent string
	// Scope is the only scope the token can touch.
	Scope string
	// Thread, when set, is the only thread the token can touch; when empty
	// the caller picks a thread of the scope per session.
	Thread string
	// Expires is how long the token is valid from now; 0 means it never
	// expires.
	Expires time.Duration
	// Operator makes a token for a person operating the store rather than
	// an agent: it reads every scope in the inspector, and the MCP server
	// refuses it. An operator token names no agent, scope or thread.
	Operator bool
	// Review makes the token's changes wait for review: an MCP session
	// of the token never changes its thread directly (ForReview).
	Review bool
	// Files and ReadOnly narrow the token's file access below its agent's
	// (access.go): Files are rules of its own, ReadOnly caps every path at
	// read.
	Files    FileRules
	ReadOnly bool
}

// Token describes an access token (never its secret).
type Token struct {
	// ID names the token in lists, logs and the audit trail of commits
	// (Actor.Credential). It is not secret.
	ID     string `json:"id"`
	Agent  string `json:"agent"`
	Scope  string `json:"scope"`
	Thread string `json:"thread,omitempty"`
	// Created and Expires are by the backend's clock; Expires is zero for
	// a token that never expires.
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires,omitzero"`
	// Revoked is when the token was revoked (zero: it was not).
	Revoked time.Time `json:"revoked,omitzero"`
	// Operator marks an operator's token (TokenSpec.Operator): Agent,
	// Scope and Thread are empty.
	Operator bool `json:"operator,omitempty"`
	// Review marks a token whose changes wait for review
	// (TokenSpec.Review).
	Review bool `json:"review,omitempty"`
	// Files and ReadOnly are TokenSpec's, Files in flag form
	// ("notes/**=rw,**=read"; "" for none). FileOptions applies them.
	Files    string `json:"files,omitempty"`
	ReadOnly bool   `json:"read_only,omitempty"`
}

// tokenRecord is what the store keeps: the token and its secret's hash.
type tokenRecord struct {
	Token
	Hash string `json:"hash"`
}

// CreateToken makes an access token for spec and returns its secret,
// which is shown this once: the store keeps only its SHA-256. The secret
// is "stk_", the token's ID (16 hex digits), "_" and 43 characters of
// base64url (256 bits from crypto/rand).
//
// Invalid fields are refused with kind ErrInvalidArgument, every problem
// listed at once.
func (s *Store) CreateToken(ctx context.Context, spec TokenSpec) (secret string, t Token, err error) {
	if err := spec.check(); err != nil {
		return "", Token{}, err
	}
	var idb [8]byte
	var key [32]byte
	if _, err := rand.Read(idb[:]); err != nil {
		return "", Token{}, fmt.Errorf("making a token: %w", err)
	}
	if _, err := rand.Read(key[:]); err != nil {
		return "", Token{}, fmt.Errorf("making a token: %w", err)
	}
	id := hex.EncodeToString(idb[:])
	secret = tokenPrefix + id + "_" + base64.RawURLEncoding.EncodeToString(key[:])
	now, err := s.b.Now(ctx)
	if err != nil {
		return "", Token{}, err
	}
	t = Token{ID: id, Agent: spec.Agent, Scope: spec.Scope, Thread: spec.Thread, Created: now.UTC(), Operator: spec.Operator, Review: spec.Review, Files: spec.Files.String(), ReadOnly: spec.ReadOnly}
	if spec.Expires > 0 {
		t.Expires = t.Created.Add(spec.Expires)
	}
	if err := s.putToken(ctx, tokenRecord{Token: t, Hash: hashSecret(secret)}); err != nil {
		return "", Token{}, err
	}
	return secret, t, nil
}

// Tokens lists every token, revoked and expired ones included, by
// creation time (then ID).
func (s *Store) Tokens(ctx context.Context) ([]Token, error) {
	m, err := s.b.Settings(ctx, "", "", tokenKey)
	if err != nil {
		return nil, err
	}
	out := make([]Token, 0, len(m))
	for k, v := range m {
		var r tokenRecord
		if err := json.Unmarshal(v, &r); err != nil {
			return nil, fmt.Errorf("reading token %s: %w", strings.TrimPrefix(k, tokenKey), err)
		}
		out = append(out, r.Token)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// UsableTokens counts the tokens that are neither revoked nor expired, by
// the database's clock: the network listeners refuse strangers while it
// is 0.
func (s *Store) UsableTokens(ctx context.Context) (int, error) {
	ts, err := s.Tokens(ctx)
	if err != nil {
		return 0, err
	}
	now, err := s.b.Now(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, t := range ts {
		if t.Revoked.IsZero() && (t.Expires.IsZero() || now.Before(t.Expires)) {
			n++
		}
	}
	return n, nil
}

// RevokeToken revokes the token with the given ID: Authenticate refuses it
// from now on (an MCP server checks the token of every request, reusing a
// check for at most a second, so sessions already open with it end too). The token stays listed, with the time it
// was revoked, since commits name it. An unknown ID is an error of kind
// ErrNotFound; revoking a revoked token changes nothing.
func (s *Store) RevokeToken(ctx context.Context, id string) error {
	r, err := s.token(ctx, id)
	if err != nil {
		return err
	}
	if !r.Revoked.IsZero() {
		return nil
	}
	now, err := s.b.Now(ctx)
	if err != nil {
		return err
	}
	r.Revoked = now.UTC()
	return s.putToken(ctx, r)
}

// Authenticate returns the token whose secret is secret. A secret that is
// malformed or unknown, a revoked token and an expired one (by the
// backend's clock) are refused with kind ErrAccessDenied. The comparison
// of the secret's hash is constant-time.
func (s *Store) Authenticate(ctx context.Context, secret string) (Token, error) {
	id, ok := secretID(secret)
	if !ok {
		return Token{}, errInvalidToken
	}
	r, err := s.token(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return Token{}, errInvalidToken
	}
	if err != nil {
		return Token{}, err
	}
	h := hashSecret(secret)
	if subtle.ConstantTimeCompare([]byte(h), []byte(r.Hash)) != 1 {
		return Token{}, errInvalidToken
	}
	if !r.Revoked.IsZero() {
		return Token{}, errs.New(errs.ErrAccessDenied, "token %s was revoked", r.ID)
	}
	if !r.Expires.IsZero() {
		now, err := s.b.Now(ctx)
		if err != nil {
			return Token{}, err
		}
		if !now.Before(r.Expires) {
			return Token{}, errs.New(errs.ErrAccessDenied, "token %s expired at %s", r.ID, r.Expires.UTC().Format(time.RFC3339))
		}
	}
	return r.Token, nil
}

var errInvalidToken = errs.New(errs.ErrAccessDenied, "invalid token")

// token reads one token's record.
func (s *Store) token(ctx context.Context, id string) (tokenRecord, error) {
	v, ok, err := s.b.Setting(ctx, "", "", tokenKey+id)
	if err != nil {
		return tokenRecord{}, err
	}
	if !ok {
		return tokenRecord{}, errs.New(errs.ErrNotFound, "token not found: %s", id)
	}
	var r tokenRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return tokenRecord{}, fmt.Errorf("reading token %s: %w", id, err)
	}
	return r, nil
}

func (s *Store) putToken(ctx context.Context, r tokenRecord) error {
	v, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return s.b.PutSetting(ctx, "", "", tokenKey+r.ID, v)
}

// secretID returns the ID a secret names, if it has the shape of one.
func secretID(secret string) (string, bool) {
	rest, ok := strings.CutPrefix(secret, tokenPrefix)
	if !ok || len(rest) != 16+1+43 || rest[16] != '_' {
		return "", false
	}
	id := rest[:16]
	for i := 0; i < len(id); i++ {
		if c := id[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return "", false
		}
	}
	return id, true
}

func hashSecret(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// check validates a token's spec, reporting every problem at once.
func (spec TokenSpec) check() error {
	var msgs []string
	if spec.Operator {
		if spec.Agent != "" || spec.Scope != "" || spec.Thread != "" {
			msgs = append(msgs, "an operator token sees every scope: it names no agent, scope or thread")
		}
		if spec.Review {
			msgs = append(msgs, "an operator token changes nothing: it takes no review")
		}
		if spec.Files != nil || spec.ReadOnly {
			msgs = append(msgs, "an operator token takes no file rules (--files, --read-only)")
		}
		if spec.Expires < 0 {
			msgs = append(msgs, fmt.Sprintf("expires must not be negative, was %s", spec.Expires))
		}
		if len(msgs) > 0 {
			return &Error{Kind: ErrInvalidArgument, Msg: strings.Join(msgs, "\n")}
		}
		return nil
	}
	if err := ValidAgentName(spec.Agent); err != nil {
		msgs = append(msgs, err.Error())
	}
	if err := ValidScope(spec.Scope); err != nil {
		msgs = append(msgs, err.Error())
	}
	if spec.Thread != "" {
		if err := ValidThreadName(spec.Thread); err != nil {
			msgs = append(msgs, err.Error())
		}
	}
	if spec.Expires < 0 {
		msgs = append(msgs, fmt.Sprintf("expires must not be negative, was %s", spec.Expires))
	}
	if len(msgs) > 0 {
		return &Error{Kind: ErrInvalidArgument, Msg: strings.Join(msgs, "\n")}
	}
	return nil
}

// ValidAgentName reports whether name is a valid agent name: lowercase
// letters, digits, '-' and '_', starting with a letter, at most 48
// characters (the rule of store and agent names, DESIGN §3).
func ValidAgentName(name string) error {
	ok := len(name) >= 1 && len(name) <= 48 && name[0] >= 'a' && name[0] <= 'z'
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
	}
	if !ok {
		return errs.New(errs.ErrInvalidArgument, "invalid agent name %q: a name is lowercase letters, digits, - and _, starting with a letter, at most 48 characters", name)
	}
	return nil
}
