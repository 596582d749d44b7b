package satchel

import (
	"context"
	"errors"
	"io"
	"regexp/syntax"
	"time"
	"unicode/utf8"

	"github.com/satchel-dev/satchel/internal/errs"
)

// MaxRegexProgram bounds the size of a grep pattern once its repetitions
// are expanded (a{100} costs 100, (a{100}){100} costs 10,000): RE2 runs in
// time linear in the text, but the factor is the program's size.
const MaxRegexProgram = 20000

// regexCost estimates the number of instructions RE2 compiles re into,
// multiplying nested repetition counts; it saturates at limit+1.
func regexCost(re *syntax.Regexp, limit int) int {
	sat := func(n int) int { return min(n, limit+1) }
	switch re.Op {
	case syntax.OpLiteral:
		return sat(len(re.Rune) + 1)
	case syntax.OpConcat, syntax.OpAlternate:
		n := 1
		for _, s := range re.Sub {
			n = sat(n + regexCost(s, limit) + 1)
		}
		return n
	case syntax.OpCapture, syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		return sat(regexCost(re.Sub[0], limit) + 2)
	case syntax.OpRepeat:
		times := re.Max
		if times < 0 {
			times = re.Min + 1
		}
		sub := regexCost(re.Sub[0], limit)
		if times > 0 && sub > (limit+1)/times {
			return limit + 1
		}
		return sat(times*sub + 2)
	}
	return 1
}

// checkRegexCost refuses a pattern whose expanded program exceeds
// MaxRegexProgram, and returns the cost otherwise.
func checkRegexCost(expr string) (int, error) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return 0, nil // regexp.Compile reports it with its own words
	}
	cost := regexCost(re, MaxRegexProgram)
	if cost > MaxRegexProgram {
		return 0, errs.New(errs.ErrInvalidPattern,
			"invalid regex: its repetitions expand to over %d instructions (counts multiply: (a{100}){100} is 10000); use smaller counts", MaxRegexProgram)
	}
	return max(cost, 1), nil
}

// grepBudget stops a grep at its deadline or when its context ends,
// checking both every checkWork units of work (bytes scanned times the
// pattern's cost), inside a file as well as between files.
type grepBudget struct {
	ctx      context.Context
	deadline time.Time
	timeout  time.Duration
	cost     int
	work     int
	stopped  string // why it stopped; "" while it runs
	err      error  // the context's error, when it was cancelled
}

// checkWork is how much work passes between two looks at the clock.
const checkWork = 1 << 20

// longLine is the work above which one line is matched through a reader
// that can stop the match midway.
const longLine = 4 << 20

func (b *grepBudget) spend(n int) bool {
	b.work += n * b.cost
	if b.work < checkWork {
		return b.stopped == ""
	}
	b.work = 0
	return b.check()
}

// check reports whether the grep may go on, recording why not.
func (b *grepBudget) check() bool {
	if b.stopped != "" {
		return false
	}
	if err := b.ctx.Err(); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			b.stopped = "grep stopped at the call's deadline: the matches so far are shown; narrow the pattern, the path or include"
		} else {
			b.stopped, b.err = "grep stopped: the call was cancelled", err
		}
		return false
	}
	if !time.Now().Before(b.deadline) {
		b.stopped = "grep stopped after " + b.timeout.String() + ": the matches so far are shown; narrow the pattern, the path or include"
		return false
	}
	return true
}

// matchLine matches one line, through a stoppable reader when the line
// is long for the pattern. It reports the match and whether the grep
// may go on (false: stopped, and the match is not to be trusted).
func (b *grepBudget) matchLine(match func(string) bool, matchReader func(io.RuneReader) bool, text string) (bool, bool) {
	if len(text)*b.cost < longLine {
		return match(text), b.spend(len(text) + 1)
	}
	r := &stoppableReader{s: text, b: b}
	m := matchReader(r)
	if b.stopped != "" {
		return false, false
	}
	return m, b.check()
}

// stoppableReader reads a string rune by rune and ends it early (EOF)
// once the budget says stop.
type stoppableReader struct {
	s string
	i int
	n int
	b *grepBudget
}

func (r *stoppableReader) ReadRune() (rune, int, error) {
	if r.i >= len(r.s) {
		return 0, 0, io.EOF
	}
	if r.n++; r.n%(checkWork/max(r.b.cost, 1)+1) == 0 && !r.b.check() {
		return 0, 0, io.EOF
	}
	c, size := utf8.DecodeRuneInString(r.s[r.i:])
	r.i += size
	return c, size, nil
}
