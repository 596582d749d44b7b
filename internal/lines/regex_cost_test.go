package lines

import (
	"regexp/syntax"
	"testing"
)

// The size estimate never falls far below what RE2 compiles: a pattern
// it accepts compiles to at most about as many instructions as it said.
func FuzzRegexCost(f *testing.F) {
	for _, s := range []string{`a`, `.{1000}.{1000}b`, `(a|b|c)*x{3,7}`, `(?i)straße`, `\pL{10}`, `(a{10}){100}`, `x{2,}`, `[a-z]+?`, `^$\b`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		re, err := syntax.Parse(expr, syntax.Perl)
		if err != nil {
			return
		}
		cost := RegexCost(re, MaxRegexProgram)
		if cost > MaxRegexProgram {
			if _, err := CheckRegexCost(expr); err == nil {
				t.Fatalf("%q: cost %d over the bound, accepted", expr, cost)
			}
			return
		}
		prog, err := syntax.Compile(re.Simplify())
		if err != nil {
			return
		}
		if n := len(prog.Inst); n > 2*cost+8 {
			t.Fatalf("%q: estimated %d, compiled to %d instructions", expr, cost, n)
		}
	})
}
