package satchel

import (
	"context"
	"errors"
	"io"
	"time"
	"unicode/utf8"

	"github.com/satchel-dev/satchel/internal/lines"
)

// MaxRegexProgram bounds the size of a grep pattern once its repetitions
// are expanded (a{100} costs 100, (a{100}){100} costs 10,000): RE2 runs in
// time linear in the text, but the factor is the program's size
// (lines.MaxRegexProgram).
const MaxRegexProgram = lines.MaxRegexProgram

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
