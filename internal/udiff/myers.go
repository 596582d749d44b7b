package udiff

// maxWork bounds the work of one line diff, counted as diagonals visited
// plus line comparisons in snakes (each unit is a few nanoseconds). Myers'
// algorithm costs O((N+M)·D) for D edits, which is quadratic for two large
// texts with little in common. Once the budget is spent, every region that
// is still undecided is reported as replaced whole: all of its old lines
// deleted, all of its new lines inserted. The diff is then still correct
// (it turns a into b) but no longer minimal. 1<<26 units take well under a
// second.
const maxWork = 1 << 26

// differ finds which lines of a are deleted and which lines of b are
// inserted, with Myers' O(ND) algorithm in its linear-space form: find the
// middle of an optimal edit path by running the search from both ends at
// once, split there, and recurse on the two halves ("An O(ND) Difference
// Algorithm and Its Variations", Myers 1986, §4b; the bisection follows
// diff-match-patch's diff_bisect).
type differ struct {
	a, b   []int32 // line ids: equal ids mean equal lines
	del    []bool  // del[i]: a[i] is deleted
	ins    []bool  // ins[j]: b[j] is inserted
	v      []int   // scratch for both searches, reused across calls
	work   int
	budget int
}

// diffLines marks the deleted lines of a and the inserted lines of b.
func diffLines(a, b []int32, budget int) (del, ins []bool) {
	d := &differ{a: a, b: b, del: make([]bool, len(a)), ins: make([]bool, len(b)), budget: budget}
	d.compare(0, len(a), 0, len(b))
	return d.del, d.ins
}

// compare diffs a[aLo:aHi] against b[bLo:bHi].
func (d *differ) compare(aLo, aHi, bLo, bHi int) {
	for {
		for aLo < aHi && bLo < bHi && d.a[aLo] == d.b[bLo] {
			aLo++
			bLo++
		}
		for aLo < aHi && bLo < bHi && d.a[aHi-1] == d.b[bHi-1] {
			aHi--
			bHi--
		}
		if aLo == aHi || bLo == bHi {
			d.replace(aLo, aHi, bLo, bHi)
			return
		}
		x, y, ok := d.bisect(aLo, aHi, bLo, bHi)
		// A split at a corner would not shrink the problem; it cannot
		// happen once the common ends are stripped, but never loop on it.
		if !ok || (x == aLo && y == bLo) || (x == aHi && y == bHi) {
			d.replace(aLo, aHi, bLo, bHi)
			return
		}
		d.compare(aLo, x, bLo, y)
		aLo, bLo = x, y
	}
}

// replace marks a[aLo:aHi] deleted and b[bLo:bHi] inserted.
func (d *differ) replace(aLo, aHi, bLo, bHi int) {
	for i := aLo; i < aHi; i++ {
		d.del[i] = true
	}
	for j := bLo; j < bHi; j++ {
		d.ins[j] = true
	}
}

// bisect returns a point (x, y) on an optimal edit path from (aLo, bLo) to
// (aHi, bHi), near its middle. ok is false when the work budget ran out.
// The region must be non-empty on both sides, with different first lines
// and different last lines.
func (d *differ) bisect(aLo, aHi, bLo, bHi int) (x, y int, ok bool) {
	a, b := d.a, d.b
	n, m := aHi-aLo, bHi-bLo
	maxD := (n + m + 1) / 2
	off := maxD + 1
	vLen := 2*maxD + 3
	if cap(d.v) < 2*vLen {
		d.v = make([]int, 2*vLen)
	}
	v1, v2 := d.v[:vLen], d.v[vLen:2*vLen]
	for i := range v1 {
		v1[i] = -1
		v2[i] = -1
	}
	// v1[off+k]: the furthest x reached on diagonal k = x-y going forward
	// from (aLo, bLo); v2[off+k]: the same going backward from (aHi, bHi),
	// in coordinates counted from the end.
	v1[off+1], v2[off+1] = 0, 0
	delta := n - m
	front := delta%2 != 0 // odd delta: the paths meet on a forward step
	// Diagonals that ran off the grid on one side are trimmed from the
	// next rounds.
	k1start, k1end, k2start, k2end := 0, 0, 0, 0
	for dd := 0; dd < maxD; dd++ {
		if d.work > d.budget {
			return 0, 0, false
		}
		for k1 := -dd + k1start; k1 <= dd-k1end; k1 += 2 {
			d.work++
			i := off + k1
			var x1 int
			if k1 == -dd || (k1 != dd && v1[i-1] < v1[i+1]) {
				x1 = v1[i+1]
			} else {
				x1 = v1[i-1] + 1
			}
			y1 := x1 - k1
			s := x1
			for x1 < n && y1 < m && a[aLo+x1] == b[bLo+y1] {
				x1++
				y1++
			}
			d.work += x1 - s
			v1[i] = x1
			switch {
			case x1 > n:
				k1end += 2
			case y1 > m:
				k1start += 2
			case front:
				j := off + delta - k1
				if j >= 0 && j < vLen && v2[j] != -1 && x1 >= n-v2[j] {
					return aLo + x1, bLo + y1, true
				}
			}
		}
		for k2 := -dd + k2start; k2 <= dd-k2end; k2 += 2 {
			d.work++
			i := off + k2
			var x2 int
			if k2 == -dd || (k2 != dd && v2[i-1] < v2[i+1]) {
				x2 = v2[i+1]
			} else {
				x2 = v2[i-1] + 1
			}
			y2 := x2 - k2
			s := x2
			for x2 < n && y2 < m && a[aHi-x2-1] == b[bHi-y2-1] {
				x2++
				y2++
			}
			d.work += x2 - s
			v2[i] = x2
			switch {
			case x2 > n:
				k2end += 2
			case y2 > m:
				k2start += 2
			case !front:
				j := off + delta - k2
				if j >= 0 && j < vLen && v1[j] != -1 {
					x1 := v1[j]
					y1 := x1 - (delta - k2)
					if x1 >= n-x2 {
						return aLo + x1, bLo + y1, true
					}
				}
			}
		}
	}
	// Not reached for a region with something in common; nothing in
	// common means replace all.
	return 0, 0, false
}
