package bench

import (
	"context"
	"fmt"
	"strings"
	"testing/fstest"

	"github.com/satchel-dev/satchel"
)

// W2PlainStoreName is the store of W2's run without indexes: the
// research-notes definition under another name, so that both runs share
// one database (the indexes of research-notes are partial indexes of that
// store alone).
const W2PlainStoreName = "research-notes-plain"

// W2Project returns a project with the W2 store, indexed
// (W2StoreDefinitionIndexed, named research-notes) or not
// (W2StoreDefinition, named research-notes-plain).
func W2Project(indexed bool) (*satchel.Project, string, error) {
	name, def := W2PlainStoreName, W2StoreDefinition()
	if indexed {
		name, def = W2StoreName, W2StoreDefinitionIndexed()
	}
	def = strings.Replace(def, `"name": "`+W2StoreName+`"`, `"name": "`+name+`"`, 1)
	p, err := satchel.LoadProjectFS(fstest.MapFS{"stores/" + name + ".json": {Data: []byte(def)}})
	return p, name, err
}

func init() {
	Register(Workload{
		Name:     "W2",
		About:    "collections: set, get, update, query, list, history and remove N typed documents, with and without indexes",
		DefaultN: W2DefaultN,
		Ops:      func(n int) int { return 2 * W2Ops(n) },
		Run: func(ctx context.Context, env Env, report func(Result)) error {
			clients := env.Clients
			if len(clients) == 0 {
				clients = []int{1}
			}
			for _, k := range clients {
				if k < 1 {
					return fmt.Errorf("bench W2: clients must be at least 1, was %d", k)
				}
				// Each number of clients sets its documents in a scope
				// of its own.
				scope := "bench"
				if k > 1 {
					scope = fmt.Sprintf("bench-c%d", k)
				}
				for _, indexed := range []bool{true, false} {
					p, name, err := W2Project(indexed)
					if err != nil {
						return err
					}
					c, err := env.Store.Collection(ctx, p, scope, name, satchel.Force())
					if err != nil {
						return err
					}
					o := W2Options{System: env.System, N: env.N, Seed: env.Seed, Indexed: indexed, Clients: k, Progress: env.Progress}
					if err := RunW2(ctx, c, o, report); err != nil {
						return err
					}
				}
			}
			return nil
		},
		Targets: w2Targets,
	})
}

// w2Goal is what one backend must reach in W2, in operations per second,
// and where each figure comes from.
type w2Goal struct {
	set, get, queryEq          float64
	setWhy, getWhy, queryEqWhy string
}

// Peers on this kind of machine (W2 at N = 100,000, the reference for the targets):
// LangGraph InMemoryStore set 291,484/s, get 47,573/s, query-eq 43.7/s;
// LangGraph PostgresStore set 2,641/s, get 4,716/s, query-eq 164/s;
// AgentFS kv set 3,220/s, get 19,210/s, query-eq 2/s.
var w2Goals = map[string]w2Goal{
	"satchel-memory": {set: 291484, get: 47573, queryEq: 100 * 43.7,
		setWhy: "InMemoryStore", getWhy: "InMemoryStore", queryEqWhy: "100× InMemoryStore"},
	"satchel-sqlite": {set: 10000, get: 57000, queryEq: 5000,
		setWhy: "SQLite's target", getWhy: "SQLite's target", queryEqWhy: "SQLite's target"},
	"satchel-postgres": {set: 1.5 * 2641, get: 1.5 * 4716, queryEq: 10 * 164,
		setWhy: "1.5× PostgresStore", getWhy: "1.5× PostgresStore", queryEqWhy: "10× PostgresStore"},
}

// w2ClientsGain is what sets by 16 clients at once must reach against one
// client's, on the backends that store on disk: their sets then share
// transactions (docs/decisions/0071-document-group-commit.md).
const w2ClientsGain = 5

// w2Targets holds W2's set, get and indexed query-eq against the targets
// of their backend, the indexed query-eq against the same query on the
// store without indexes (at least 10×), and the sets of 16 clients against
// those of one (at least 5×, on SQLite and PostgreSQL).
func w2Targets(rs []Result) []Verdict {
	var out []Verdict
	one := map[string]float64{}
	for _, r := range rs {
		if r.Workload == "W2" && r.Phase == "set" && r.Clients <= 1 {
			one[r.System] = r.OpsPerSec
		}
	}
	for _, r := range rs {
		system, _ := strings.CutSuffix(r.System, "-indexed")
		if r.Workload != "W2" || r.Phase != "set" || r.Clients != 16 || system == "satchel-memory" || one[r.System] == 0 {
			continue
		}
		out = append(out, Verdict{
			System: r.System, Figure: "W2 set 16 clients / 1 client",
			Value:  fmt.Sprintf("%.1f× (%.0f against %.0f ops/s)", r.OpsPerSec/one[r.System], r.OpsPerSec, one[r.System]),
			Target: fmt.Sprintf("≥ %d×", w2ClientsGain), Met: r.OpsPerSec >= w2ClientsGain*one[r.System],
		})
	}
	plainEq := map[string]float64{}
	for _, r := range rs {
		if r.Workload == "W2" && r.Phase == "query-eq" && !strings.HasSuffix(r.System, "-indexed") {
			plainEq[r.System] = r.OpsPerSec
		}
	}
	for _, r := range rs {
		if r.Workload != "W2" || r.Clients > 1 {
			continue
		}
		system, indexed := strings.CutSuffix(r.System, "-indexed")
		t, ok := w2Goals[system]
		if !ok {
			continue
		}
		var want float64
		var why string
		switch r.Phase {
		case "set":
			want, why = t.set, t.setWhy
		case "get":
			want, why = t.get, t.getWhy
		case "query-eq":
			if !indexed {
				continue
			}
			want, why = t.queryEq, t.queryEqWhy
			if plain, ok := plainEq[system]; ok && plain > 0 {
				out = append(out, Verdict{
					System: r.System, Figure: "W2 query-eq indexed / without indexes",
					Value:  fmt.Sprintf("%.1f×", r.OpsPerSec/plain),
					Target: "≥ 10×", Met: r.OpsPerSec >= 10*plain,
				})
			}
		default:
			continue
		}
		out = append(out, Verdict{
			System: r.System, Figure: "W2 " + r.Phase,
			Value:  fmt.Sprintf("%.0f ops/s", r.OpsPerSec),
			Target: fmt.Sprintf("≥ %.0f ops/s, %s", want, why),
			Met:    r.OpsPerSec >= want,
		})
	}
	return out
}
