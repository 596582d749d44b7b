// Package udiff writes the unified diff of two texts, as `satchel diff FROM
// TO PATH` shows a changed file (DESIGN: "a unified diff of a file"). The
// output is what `diff -u` writes and what `patch -p1` and `git apply`
// accept.
//
// Lines are compared whole, with their "\n": a "\r" before it is content,
// so a file whose line endings changed from CRLF to LF differs on every
// line, and a last line without "\n" differs from the same line with one
// (the diff marks it with "\ No newline at end of file").
//
// The line diff is Myers' O(ND) algorithm in linear space, after the
// common leading and trailing lines are set aside. Its work is bounded (see
// maxWork): past the budget the rest of the change is shown as every old
// line removed and every new line added, which is still a correct patch.
package udiff

import (
	"strconv"
	"strings"
)

// Unified returns the unified diff that turns a into b, or "" when they are
// equal. oldName and newName are written as they are on the "---" and
// "+++" lines: for `patch -p1` and `git apply` pass "a/"+path and
// "b/"+path (or "/dev/null" for the side where the file does not exist).
// Each hunk shows context unchanged lines around its changes (a negative
// context counts as 0), and hunks whose context would touch are merged.
func Unified(oldName, newName, a, b string, context int) string {
	return unified(oldName, newName, a, b, context, maxWork)
}

// unified is Unified with a work budget for the line diff.
func unified(oldName, newName, a, b string, context, budget int) string {
	if a == b {
		return ""
	}
	if context < 0 {
		context = 0
	}
	e := edits(a, b, budget)

	var out strings.Builder
	out.WriteString("--- " + oldName + "\n+++ " + newName + "\n")
	ca, cb := cursor{text: a}, cursor{text: b}
	for len(e.blocks) > 0 {
		// A hunk takes blocks while the unchanged run between two of them
		// is at most twice the context.
		n := 1
		for n < len(e.blocks) && e.blocks[n].a0-e.blocks[n-1].a1 <= 2*context {
			n++
		}
		hunk := e.blocks[:n]
		e.blocks = e.blocks[n:]

		first, last := hunk[0], hunk[n-1]
		before := min(context, first.a0)
		after := min(context, e.aLines-last.a1)
		a0, a1 := first.a0-before, last.a1+after
		b0, b1 := first.b0-before, last.b1+after
		out.WriteString("@@ -" + rangeOf(a0, a1) + " +" + rangeOf(b0, b1) + " @@\n")
		ca.seek(a0)
		cb.seek(b0)
		for _, bl := range hunk {
			for ca.line < bl.a0 {
				writeLine(&out, ' ', ca.next())
				cb.next()
			}
			for ca.line < bl.a1 {
				writeLine(&out, '-', ca.next())
			}
			for cb.line < bl.b1 {
				writeLine(&out, '+', cb.next())
			}
		}
		for ca.line < a1 {
			writeLine(&out, ' ', ca.next())
			cb.next()
		}
	}
	return out.String()
}

// rangeOf formats the 0-based, half-open line range [lo, hi) as a hunk
// header does: "start,count", or just "start" when count is 1. An empty
// range names the line before it (0 at the top of the file).
func rangeOf(lo, hi int) string {
	switch hi - lo {
	case 0:
		return strconv.Itoa(lo) + ",0"
	case 1:
		return strconv.Itoa(lo + 1)
	}
	return strconv.Itoa(lo+1) + "," + strconv.Itoa(hi-lo)
}

// writeLine writes one diff line: the mark, the line, and for a last line
// without "\n" the newline and the marker that patch tools expect.
func writeLine(out *strings.Builder, mark byte, line string) {
	out.WriteByte(mark)
	out.WriteString(line)
	if !strings.HasSuffix(line, "\n") {
		out.WriteString("\n\\ No newline at end of file\n")
	}
}

// cursor walks the lines of a text in order; hunks only move forward, so
// no table of line offsets is needed.
type cursor struct {
	text string
	line int // the 0-based number of the line at off
	off  int
}

// seek moves to the start of line n, which must not be behind.
func (c *cursor) seek(n int) {
	for c.line < n {
		c.next()
	}
}

// next returns the current line, with its "\n" if it has one, and moves on.
func (c *cursor) next() string {
	rest := c.text[c.off:]
	end := strings.IndexByte(rest, '\n') + 1
	if end == 0 {
		end = len(rest)
	}
	c.off += end
	c.line++
	return rest[:end]
}

// block is one maximal run of changes: lines [a0, a1) of the old text
// replaced by lines [b0, b1) of the new one (0-based, either may be empty).
type block struct{ a0, a1, b0, b1 int }

// script is the line diff of two texts.
type script struct {
	blocks []block
	aLines int // the number of lines of the old text
}

// edits computes the changed blocks between a and b. Whole lines common to
// the start or the end of both are set aside first, so a small edit to a
// large text interns and diffs only the lines around it.
func edits(a, b string, budget int) script {
	// The common prefix, backed off to the end of its last whole line.
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	p = strings.LastIndexByte(a[:p], '\n') + 1
	// The common suffix, no longer than what the prefix leaves, moved
	// forward to a line start in both texts; within the suffix the texts
	// are the same, so the first "\n" in it is at the same place in both.
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	if pa, pb := len(a)-s, len(b)-s; !(lineStart(a, pa) && lineStart(b, pb)) {
		if nl := strings.IndexByte(a[pa:], '\n'); nl >= 0 {
			s -= nl + 1
		} else {
			s = 0
		}
	}

	skip := strings.Count(a[:p], "\n") // lines before the middle
	ida, idb, shared := intern(a[p:len(a)-s], b[p:len(b)-s])
	var del, ins []bool
	if shared {
		del, ins = diffLines(ida, idb, budget)
	} else { // nothing in common: the answer is to replace everything
		del, ins = make([]bool, len(ida)), make([]bool, len(idb))
		for i := range del {
			del[i] = true
		}
		for j := range ins {
			ins[j] = true
		}
	}

	sc := script{aLines: strings.Count(a, "\n")}
	if a != "" && !strings.HasSuffix(a, "\n") {
		sc.aLines++ // the last line has no "\n"
	}
	i, j := 0, 0
	for i < len(del) || j < len(ins) {
		if (i < len(del) && del[i]) || (j < len(ins) && ins[j]) {
			bl := block{a0: skip + i, b0: skip + j}
			for i < len(del) && del[i] {
				i++
			}
			for j < len(ins) && ins[j] {
				j++
			}
			bl.a1, bl.b1 = skip+i, skip+j
			sc.blocks = append(sc.blocks, bl)
			continue
		}
		i++
		j++
	}
	return sc
}

// lineStart reports whether offset i of t starts a line.
func lineStart(t string, i int) bool { return i == 0 || t[i-1] == '\n' }

// intern numbers the distinct lines of a, each with its "\n" (a last line
// without one is a line too), and gives each line of b the number of the
// same line of a, or -1 when a does not have it: the diff only ever
// compares a line of a with a line of b, so the lines that only b has need
// no numbers of their own. shared reports whether any line of b occurs in
// a. The map keys are substrings of a: nothing is copied.
func intern(a, b string) (ida, idb []int32, shared bool) {
	n := strings.Count(a, "\n") + 1
	ids := make(map[string]int32, n)
	ida = make([]int32, 0, n)
	for l := range strings.Lines(a) {
		id, ok := ids[l]
		if !ok {
			id = int32(len(ids))
			ids[l] = id
		}
		ida = append(ida, id)
	}
	idb = make([]int32, 0, strings.Count(b, "\n")+1)
	for l := range strings.Lines(b) {
		id, ok := ids[l]
		if !ok {
			id = -1
		}
		shared = shared || ok
		idb = append(idb, id)
	}
	return ida, idb, shared
}

// Block is one run of changed lines between two texts: lines [A0, A1) of
// the old text replaced by lines [B0, B1) of the new one (0-based, either
// may be empty).
type Block struct{ A0, A1, B0, B1 int }

// Blocks returns the changed blocks between a and b, in order, as Unified
// finds them (whole lines, with their "\n").
func Blocks(a, b string) []Block {
	sc := edits(a, b, maxWork)
	out := make([]Block, len(sc.blocks))
	for i, bl := range sc.blocks {
		out[i] = Block{bl.a0, bl.a1, bl.b0, bl.b1}
	}
	return out
}
