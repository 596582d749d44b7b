package satchel

import (
	"context"
	"strings"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/errs"
)

// Misfit is a stored document that does not fit its store's current
// definition: it was set before the definition changed (a required field
// added, a type changed, a field removed). It is still read as it was
// stored; the read tools mark it (DESIGN §3).
type Misfit struct {
	Store string `json:"store"`
	// Scope is the document's scope, "" for a shared store's.
	Scope string `json:"scope"`
	Key   string `json:"key"`
	// Problems says what does not fit, one violation each, with its
	// field path, as a set would report it.
	Problems []string `json:"problems"`
}

func (m Misfit) String() string {
	where := m.Store
	if m.Scope != "" {
		where += " (scope " + m.Scope + ")"
	}
	return where + " " + m.Key + ": " + strings.Join(m.Problems, "; ")
}

// Misfit says why d, a document of the collection, does not fit the
// store's current definition, one violation a string; nil when it fits.
func (c *Collection) Misfit(d Document) []string { return c.st.Misfit(d.JSON) }

// MisfitReport is what Misfits found.
type MisfitReport struct {
	// Documents is how many documents were checked, expired ones
	// included.
	Documents int      `json:"documents"`
	Misfits   []Misfit `json:"misfits"`
}

// Misfits checks every stored document of the project's stores (of the
// named stores only, when given; of scope only, when not "") against the
// store's current definition and lists those that do not fit, in store,
// scope and key order.
func (s *Store) Misfits(ctx context.Context, p *Project, scope string, stores ...string) (MisfitReport, error) {
	var rep MisfitReport
	if p == nil {
		return rep, errs.New(errs.ErrInvalidArgument, "no project: load one with LoadProject")
	}
	if len(stores) == 0 {
		stores = p.Stores()
	}
	porter, ok := backend.As[backend.Porter](s.b)
	if !ok {
		return rep, errs.New(errs.ErrInvalidArgument, "this backend cannot list the scopes of its documents (backend.Porter)")
	}
	for _, store := range stores {
		if _, err := p.p.Store(store); err != nil {
			return rep, err
		}
		parts, err := porter.DocScopes(ctx, store)
		if err != nil {
			return rep, err
		}
		for _, part := range parts {
			if scope != "" && part != scope && part != "" {
				continue
			}
			as := part
			if as == "" {
				as = "default" // a shared store: any scope names its one collection
			}
			c, err := s.Collection(ctx, p, as, store, IncludeExpired(), Force())
			if err != nil {
				return rep, err
			}
			if c.part != part {
				continue // documents of a store that is no longer (or not yet) shared
			}
			cursor := ""
			for {
				page, err := c.List(ctx, 100, cursor)
				if err != nil {
					return rep, err
				}
				for _, d := range page.Documents {
					rep.Documents++
					if why := c.st.Misfit(d.JSON); why != nil {
						rep.Misfits = append(rep.Misfits, Misfit{Store: store, Scope: part, Key: d.Key, Problems: why})
					}
				}
				if page.NextCursor == "" {
					break
				}
				cursor = page.NextCursor
			}
		}
	}
	return rep, nil
}
