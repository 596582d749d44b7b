package satchel

import (
	"context"
	"io"
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"
	"time"
)

// A match over one long line stops midway once the budget is spent: the
// reader is asked for far fewer runes than the line has.
func TestAttackGrepStopsMidLine(t *testing.T) {
	re := regexp.MustCompile(`.{1000}.{1000}.{1000}b`)
	b := &grepBudget{ctx: context.Background(), deadline: time.Now().Add(-time.Second), timeout: time.Millisecond, cost: 3000}
	text := strings.Repeat("x", 1<<20)
	var read int
	m, more := b.matchLine(re.MatchString, func(r io.RuneReader) bool {
		sr := r.(*stoppableReader)
		ok := re.MatchReader(sr)
		read = sr.i
		return ok
	}, text)
	if m || more || b.stopped == "" {
		t.Fatalf("matched %v, more %v, stopped %q", m, more, b.stopped)
	}
	if read >= len(text)/100 {
		t.Fatalf("the match read %d of %d bytes after the deadline", read, len(text))
	}
}

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
		cost := regexCost(re, MaxRegexProgram)
		if cost > MaxRegexProgram {
			if _, err := checkRegexCost(expr); err == nil {
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
