package satchel

import (
	"context"
	"strings"

	"github.com/satchel-dev/satchel/internal/errs"
)

// Shared state is what the processes serving one store keep in common
// beside the store's data: small records (JSON, by convention) that an
// MCP server behind a load balancer needs on every replica, such as the
// key that signs its session ids. They live in the global settings
// namespace of the backend (scope ""), under "shared:<key>", like the
// access tokens under "token:"; a backup copies them, an export does not.

// sharedKey is the prefix of the settings that hold shared state.
const sharedKey = "shared:"

// maxSharedKey bounds the length of a shared state's key.
const maxSharedKey = 200

func checkSharedKey(key string) error {
	if key == "" || len(key) > maxSharedKey {
		return errs.New(errs.ErrInvalidArgument, "a shared state key must have 1 to %d bytes, had %d", maxSharedKey, len(key))
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c <= ' ' || c >= 0x7f {
			return errs.New(errs.ErrInvalidArgument, "a shared state key must be printable ASCII without spaces: %q", key)
		}
	}
	return nil
}

// SharedState reads the shared record at key; ok is false when there is
// none.
func (s *Store) SharedState(ctx context.Context, key string) (v []byte, ok bool, err error) {
	if err := checkSharedKey(key); err != nil {
		return nil, false, err
	}
	return s.b.Setting(ctx, "", "", sharedKey+key)
}

// PutSharedState writes the shared record at key (nil deletes it). The
// last writer wins: a record that several processes may create at once
// should be keyed by what each one makes (a random id), not shared.
func (s *Store) PutSharedState(ctx context.Context, key string, v []byte) error {
	if err := checkSharedKey(key); err != nil {
		return err
	}
	return s.b.PutSetting(ctx, "", "", sharedKey+key, v)
}

// SharedStates lists the shared records whose keys start with prefix, by
// key (without the prefix's "shared:").
func (s *Store) SharedStates(ctx context.Context, prefix string) (map[string][]byte, error) {
	m, err := s.b.Settings(ctx, "", "", sharedKey+prefix)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[strings.TrimPrefix(k, sharedKey)] = v
	}
	return out, nil
}
