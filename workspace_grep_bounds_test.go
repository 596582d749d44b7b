package satchel

import (
	"context"
	"io"
	"regexp"
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
