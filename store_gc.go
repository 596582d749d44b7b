package satchel

import (
	"context"
	"time"

	"github.com/satchel-dev/satchel/internal/engine"
)

// GCStats reports what GC did.
type GCStats struct {
	// Dropped is the number of commits retention dropped from logs.
	Dropped int `json:"dropped"`
	// PacksDeleted and PacksRewritten count the storage reclaimed.
	PacksDeleted   int `json:"packs_deleted"`
	PacksRewritten int `json:"packs_rewritten"`
	// PacksKept counts the packs of commits dropped less than the grace
	// ago: left alone this time, so a reader at such a commit can finish;
	// a later GC (or one with NoGrace) reclaims them.
	PacksKept int `json:"packs_kept"`
	// KeysSwept counts the expired idempotency keys deleted (by a GC of
	// every scope).
	KeysSwept int64 `json:"keys_swept,omitempty"`
}

// DefaultGrace is how long GC leaves the storage of a dropped commit
// alone, so that a reader at that commit can finish.
const DefaultGrace = time.Minute

// NoGrace, as GC's grace, reclaims the storage of dropped commits at once,
// even while a reader may still be at one of them.
const NoGrace time.Duration = -1

// GC applies every thread's retention policy, then reclaims the storage
// that no retained commit reaches, in every scope (or only in scope when
// it is not ""). It is safe while writers run. Storage of commits dropped
// less than grace ago is kept; grace 0 means DefaultGrace, and a negative
// grace (NoGrace) none.
func (s *Store) GC(ctx context.Context, scope string, grace time.Duration) (GCStats, error) {
	var st GCStats
	switch {
	case grace == 0:
		grace = DefaultGrace
	case grace < 0:
		grace = 0
	}
	scopes := []string{scope}
	if scope == "" {
		var err error
		if scopes, err = s.b.Scopes(ctx); err != nil {
			return st, err
		}
	}
	for _, sc := range scopes {
		ts, err := s.b.Threads(ctx, sc)
		if err != nil {
			return st, err
		}
		for _, t := range ts {
			p, err := s.retention(ctx, sc, t.Name, t.Created)
			if err != nil {
				return st, err
			}
			n, err := s.eng.Retain(ctx, t.ID, engine.Policy(p))
			if err != nil {
				return st, err
			}
			st.Dropped += n
		}
		gs, err := s.eng.Collect(ctx, sc, grace)
		if err != nil {
			return st, err
		}
		st.PacksDeleted += gs.Deleted
		st.PacksRewritten += gs.Rewritten
		st.PacksKept += gs.Kept
	}
	if scope == "" {
		n, err := s.SweepIdempotencyKeys(ctx)
		if err != nil {
			return st, err
		}
		st.KeysSwept = n
	}
	return st, nil
}
