// Package layering states, as data, the layers of satchel's packages and
// which layer may import which (DESIGN §1, docs/decisions/0001-layout.md).
// Its test lists every import between the module's packages with
// `go list -deps` and fails on any that the table does not allow, and on
// any package the table does not place.
//
// Only the imports of built code count: a test file may import what it
// needs (a root test opens every backend).
package layering

import (
	"fmt"
	"slices"
	"strings"
)

// Module is the module path the table's package names are relative to.
const Module = "github.com/satchel-dev/satchel"

// A Layer is a set of packages with the same right to import.
type Layer string

// The layers, from the bottom up.
const (
	// Base: error kinds and helpers that import nothing of the module
	// but each other; every layer may import them.
	Base Layer = "base"
	// Contract: the storage contract (package backend) and the hook the
	// conformance suite and the tools reach a store's backend by.
	Contract Layer = "contract"
	// Backends: the backends and their shared code.
	Backends Layer = "backends"
	// Semantics: the rules of paths, lines, collections, bounds, the
	// envelope and the export format, pure Go, above no storage.
	Semantics Layer = "semantics"
	// Engine: the versioned file engine and the document engine, over the
	// contract alone.
	Engine Layer = "engine"
	// Root: package satchel, the public Go API, which links the backends
	// so that Open takes any database (decision 0004).
	Root Layer = "root"
	// Surface: the MCP server, the Lua host, the CLI and the inspector,
	// over the Go API alone.
	Surface Layer = "surface"
	// Conformance: the suites a backend runs: the contract's and the
	// behaviour's (which opens a store over the backend under test).
	Conformance Layer = "conformance"
	// Tool: benchmarks, load and attack drivers, upgrade and crash tests,
	// which measure and break backends from outside.
	Tool Layer = "tool"
	// Example: programs written as a user writes them.
	Example Layer = "example"
)

// Packages places every package of the module, by path relative to
// Module ("" is the root; a trailing "/..." places a whole subtree).
var Packages = map[string]Layer{
	"internal/errs":       Base,
	"internal/bytesize":   Base,
	"internal/version":    Base,
	"internal/loopback":   Base,
	"internal/bodyread":   Base,
	"internal/tooldesc":   Base,
	"internal/svgplot":    Base,
	"internal/testenv":    Base,
	"internal/pgtest":     Base,
	"internal/delayproxy": Base,
	"internal/layering":   Base,

	"backend":            Contract,
	"internal/backendof": Contract,

	"backend/memory":                Backends,
	"backend/sqlite":                Backends,
	"backend/postgres":              Backends,
	"backend/postgres/postgrestest": Backends,
	"internal/sqlitetest":           Backends,
	"backend/internal/...":          Backends,

	"internal/vpath":      Semantics,
	"internal/lines":      Semantics,
	"internal/filerules":  Semantics,
	"internal/collection": Semantics,
	"internal/bounded":    Semantics,
	"internal/envelope":   Semantics,
	"internal/jsonquote":  Semantics,
	"internal/jsonsize":   Semantics,
	"internal/udiff":      Semantics,
	"internal/diff3":      Semantics,
	"internal/archive":    Semantics,
	"internal/ignore":     Semantics,
	"internal/shell":      Semantics,
	"spill":               Semantics,

	"internal/engine":    Engine,
	"internal/docengine": Engine,

	"": Root,

	"mcpserver":    Surface,
	"luahost":      Surface,
	"inspector":    Surface,
	"gitrepo":      Surface,
	"internal/cli": Surface,
	"cmd/...":      Surface,

	"backend/backendtest": Conformance,
	"satcheltest":         Conformance,

	"internal/bench/...":   Tool,
	"internal/loadtest":    Tool,
	"internal/attack":      Tool,
	"internal/crashtest":   Tool,
	"internal/upgradetest": Tool,
	"internal/tools/...":   Tool,

	"examples/...": Example,
}

// Allowed lists, for each layer, the layers its packages may import.
var Allowed = map[Layer][]Layer{
	Base:        {Base},
	Contract:    {Base, Contract},
	Backends:    {Base, Contract, Backends},
	Semantics:   {Base, Semantics},
	Engine:      {Base, Contract, Semantics, Engine},
	Root:        {Base, Contract, Backends, Semantics, Engine},
	Surface:     {Base, Semantics, Root, Surface},
	Conformance: {Base, Contract, Root, Conformance},
	Tool:        {Base, Contract, Backends, Semantics, Root, Surface, Conformance, Tool},
	Example:     {Root},
}

// An Exception allows one import that the layers do not, for a reason.
type Exception struct {
	From, To string
	Reason   string
}

// Exceptions are the imports allowed against the layers, each with why.
var Exceptions = []Exception{
	{"internal/cli", "internal/bench", "satchel bench runs the standard workloads, which open each backend themselves to measure it (a fresh PostgreSQL schema, the database's size on disk)"},
	{"internal/cli", "internal/bench/w5", "satchel bench --workload w5 starts server replicas on a fresh PostgreSQL schema"},
	{"internal/cli", "internal/loadtest", "satchel bench's W5 and the load runs drive replicas over a PostgreSQL schema they make"},
}

// LayerOf returns the layer of the package rel (relative to Module).
func LayerOf(rel string) (Layer, bool) {
	if l, ok := Packages[rel]; ok {
		return l, true
	}
	best, found := "", false
	var layer Layer
	for p, l := range Packages {
		tree, ok := strings.CutSuffix(p, "/...")
		if !ok || (rel != tree && !strings.HasPrefix(rel, tree+"/")) {
			continue
		}
		if !found || len(tree) > len(best) {
			best, layer, found = tree, l, true
		}
	}
	return layer, found
}

// Check returns what is wrong with imports, a map from each package of the
// module (relative to Module) to the packages of the module it imports:
// a package the table does not place, an import the layers do not allow
// and no exception names, and an exception no import uses. The result is
// sorted; nil means the code keeps the layers.
func Check(imports map[string][]string) []string {
	var bad []string
	used := make(map[Exception]bool)
	for from, tos := range imports {
		lf, ok := LayerOf(from)
		if !ok {
			bad = append(bad, fmt.Sprintf("package %s is in no layer: add it to layering.Packages", show(from)))
			continue
		}
		for _, to := range tos {
			lt, ok := LayerOf(to)
			if !ok {
				continue // reported as a package of its own
			}
			if slices.Contains(Allowed[lf], lt) {
				continue
			}
			i := slices.IndexFunc(Exceptions, func(e Exception) bool { return e.From == from && e.To == to })
			if i >= 0 {
				used[Exceptions[i]] = true
				continue
			}
			bad = append(bad, fmt.Sprintf("%s (%s) imports %s (%s): a %s package may import only %s", show(from), lf, show(to), lt, lf, layers(Allowed[lf])))
		}
	}
	for _, e := range Exceptions {
		if !used[e] {
			bad = append(bad, fmt.Sprintf("exception %s -> %s is used by no import: remove it", show(e.From), show(e.To)))
		}
	}
	slices.Sort(bad)
	return bad
}

func show(rel string) string {
	if rel == "" {
		return "satchel (root)"
	}
	return rel
}

func layers(ls []Layer) string {
	s := make([]string, len(ls))
	for i, l := range ls {
		s[i] = string(l)
	}
	return strings.Join(s, ", ")
}
