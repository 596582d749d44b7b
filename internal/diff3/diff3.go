// Package diff3 merges two texts that both changed a common base, line by
// line, as diff3 and `git merge-file` do (DESIGN §8, Merge).
//
// Each side is diffed against the base (internal/udiff's line diff). A
// change made on one side only is taken; changes of the two sides that
// overlap or touch in the base form one region, taken when both sides wrote
// the same lines there, else a conflict. As `git merge-file` does by
// default, a conflict is then refined: the lines the two sides have in
// common at its start, end and middle are taken, so that only the lines
// that differ are in conflict; and two conflicts separated by three lines
// or fewer, or only by lines without a letter or digit, become one.
package diff3

import (
	"strings"

	"github.com/satchel-dev/satchel/internal/udiff"
)

// Conflict is one conflicting region of a merge, as lines of the merged
// sides: [OursStart, OursEnd) of ours and [TheirsStart, TheirsEnd) of
// theirs (0-based).
type Conflict struct {
	OursStart, OursEnd     int
	TheirsStart, TheirsEnd int
}

// Result is a merge's outcome.
type Result struct {
	// Text is the merged text; each conflict is written in it between
	// "<<<<<<< OURS", "=======" and ">>>>>>> THEIRS" lines.
	Text string
	// Conflicts are the conflicting regions, in order.
	Conflicts []Conflict
}

// chunk is a region of the output: lines [o0, o1) of ours and [t0, t1)
// of theirs; conflict says whether they differ (else ours is written).
type chunk struct {
	o0, o1, t0, t1 int
	conflict       bool
}

// Merge merges ours and theirs, both changed from base. oursName and
// theirsName label the conflict markers.
func Merge(base, ours, theirs, oursName, theirsName string) Result {
	ol, tl := splitLines(ours), splitLines(theirs)
	bo, bt := udiff.Blocks(base, ours), udiff.Blocks(base, theirs)

	// Walk both change lists in base order, grouping changes that overlap
	// or touch; dOurs and dTheirs map a base line outside any change to
	// the line of each side.
	var out []chunk
	dOurs, dTheirs := 0, 0
	i, j := 0, 0
	for i < len(bo) || j < len(bt) {
		// The group starts with the change that starts first; a change of
		// either side that starts before its end, or at it, joins it (two
		// changes of one side are always apart by a common line).
		lo := 0
		if j >= len(bt) || i < len(bo) && bo[i].A0 <= bt[j].A0 {
			lo = bo[i].A0
		} else {
			lo = bt[j].A0
		}
		hi := lo
		oStart, tStart := lo+dOurs, lo+dTheirs
		ii, jj := i, j
		for {
			if ii < len(bo) && bo[ii].A0 <= hi {
				hi = max(hi, bo[ii].A1)
				dOurs += (bo[ii].B1 - bo[ii].B0) - (bo[ii].A1 - bo[ii].A0)
				ii++
				continue
			}
			if jj < len(bt) && bt[jj].A0 <= hi {
				hi = max(hi, bt[jj].A1)
				dTheirs += (bt[jj].B1 - bt[jj].B0) - (bt[jj].A1 - bt[jj].A0)
				jj++
				continue
			}
			break
		}
		usedO, usedT := ii > i, jj > j
		i, j = ii, jj
		c := chunk{o0: oStart, o1: hi + dOurs, t0: tStart, t1: hi + dTheirs}
		switch {
		case usedO && usedT:
			out = append(out, refine(c, ol, tl)...)
		case usedO:
			out = append(out, c)
		default:
			c.o0 = -1 - c.o0 // o0 < 0: theirs' lines are taken
			out = append(out, c)
		}
	}
	out = simplify(out, ol)
	return write(out, ol, tl, oursName, theirsName)
}

// refine splits a region both sides changed into the lines they have in
// common (taken) and the lines that differ (conflicts).
func refine(c chunk, ol, tl []string) []chunk {
	o, t := strings.Join(ol[c.o0:c.o1], ""), strings.Join(tl[c.t0:c.t1], "")
	if o == t {
		return []chunk{{o0: c.o0, o1: c.o1, t0: c.t0, t1: c.t1}}
	}
	if c.o0 == c.o1 || c.t0 == c.t1 {
		c.conflict = true
		return []chunk{c}
	}
	var out []chunk
	for _, b := range udiff.Blocks(o, t) {
		out = append(out, chunk{o0: c.o0 + b.A0, o1: c.o0 + b.A1, t0: c.t0 + b.B0, t1: c.t0 + b.B1, conflict: true})
	}
	return out
}

// simplify joins two conflicts with no other change between them when the
// lines of ours between them are three or fewer, or have no letter or
// digit.
func simplify(cs []chunk, ol []string) []chunk {
	var out []chunk
	for _, c := range cs {
		if n := len(out); n > 0 && c.conflict && out[n-1].conflict {
			p := &out[n-1]
			if gap := ol[p.o1:c.o0]; len(gap) <= 3 || !hasAlnum(gap) {
				p.o1, p.t1 = c.o1, c.t1
				continue
			}
		}
		out = append(out, c)
	}
	return out
}

func hasAlnum(ls []string) bool {
	for _, l := range ls {
		for i := 0; i < len(l); i++ {
			if b := l[i]; b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' {
				return true
			}
		}
	}
	return false
}

// write assembles the merged text: ours' lines between the chunks, and for
// each chunk ours', theirs' or both between markers.
func write(cs []chunk, ol, tl []string, oursName, theirsName string) Result {
	var b strings.Builder
	var r Result
	at := 0 // the next line of ours to copy
	for _, c := range cs {
		o0 := c.o0
		fromTheirs := o0 < 0
		if fromTheirs {
			o0 = -1 - o0
		}
		for _, l := range ol[at:o0] {
			b.WriteString(l)
		}
		switch {
		case c.conflict:
			b.WriteString("<<<<<<< " + oursName + "\n")
			writeLines(&b, ol[o0:c.o1])
			b.WriteString("=======\n")
			writeLines(&b, tl[c.t0:c.t1])
			b.WriteString(">>>>>>> " + theirsName + "\n")
			r.Conflicts = append(r.Conflicts, Conflict{o0, c.o1, c.t0, c.t1})
		case fromTheirs:
			for _, l := range tl[c.t0:c.t1] {
				b.WriteString(l)
			}
		default:
			for _, l := range ol[o0:c.o1] {
				b.WriteString(l)
			}
		}
		at = c.o1
	}
	for _, l := range ol[at:] {
		b.WriteString(l)
	}
	r.Text = b.String()
	return r
}

// writeLines writes the lines of one side of a conflict, the last one
// ended with "\n" so that the marker after it starts a line.
func writeLines(b *strings.Builder, ls []string) {
	for _, l := range ls {
		b.WriteString(l)
	}
	if n := len(ls); n > 0 && !strings.HasSuffix(ls[n-1], "\n") {
		b.WriteByte('\n')
	}
}

// splitLines returns the lines of s, each with its "\n" (a last line
// without one is a line too).
func splitLines(s string) []string {
	var out []string
	for l := range strings.Lines(s) {
		out = append(out, l)
	}
	return out
}
