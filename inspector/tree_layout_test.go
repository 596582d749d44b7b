package inspector

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
)

// forest fills scope "f" of a store with threads: main, then each a fork
// of a random earlier thread at a random commit of it, with commits,
// checkpoints of long names now and then, and some archived; then merges:
// forks merged back into their parents and parents merged into their forks
// (each thread writes its own file, so no merge conflicts), the merged
// thread sometimes going on with a commit. It returns the merges made.
func forest(t *testing.T, st *satchel.Store, seed uint64, threads, commits int) (merges int) {
	t.Helper()
	ctx := context.Background()
	r := rand.New(rand.NewPCG(seed, 7))
	names := []string{"main"}
	heads := map[string]int64{}
	parent, archived := map[string]string{}, map[string]bool{}
	ws, _ := st.Workspace(ctx, "f", "main")
	per := commits / threads
	grow := func(ws *satchel.Workspace, name string) {
		for i := 0; i < per; i++ {
			if err := ws.Append(ctx, name+".txt", fmt.Sprintf("%s %d\n", name, i)); err != nil {
				t.Fatal(err)
			}
			if r.IntN(per/3+1) == 0 {
				cp := fmt.Sprintf("checkpoint-with-a-rather-long-name-%d", i)
				if r.IntN(2) == 0 {
					cp = fmt.Sprintf("c%d", i)
				}
				if _, err := ws.Checkpoint(ctx, cp); err != nil {
					t.Fatal(err)
				}
			}
		}
		h, _ := ws.Head(ctx)
		heads[name] = h.Seq
	}
	grow(ws, "main")
	for i := 1; i < threads; i++ {
		src := names[r.IntN(len(names))]
		sw, _ := st.Workspace(ctx, "f", src)
		at := 1 + r.Int64N(heads[src])
		name := fmt.Sprintf("thread-%02d", i)
		if r.IntN(5) == 0 {
			name = fmt.Sprintf("a-thread-with-a-very-long-name-indeed-%02d", i)
		}
		fw, err := sw.Fork(ctx, strconv.FormatInt(at, 10), name)
		if err != nil {
			t.Fatal(err)
		}
		grow(fw, name)
		names = append(names, name)
		parent[name] = src
		if r.IntN(6) == 0 {
			if _, err := st.ArchiveThread(ctx, "f", name); err != nil {
				t.Fatal(err)
			}
			archived[name] = true
		}
	}
	merge := func(from, into string) {
		iw, _ := st.Workspace(ctx, "f", into)
		if _, err := iw.Merge(ctx, from); err != nil {
			t.Fatal(err)
		}
		merges++
		if r.IntN(2) == 0 && !archived[from] {
			fw, _ := st.Workspace(ctx, "f", from)
			if err := fw.Append(ctx, from+".txt", "after the merge\n"); err != nil {
				t.Fatal(err)
			}
		}
	}
	for k := 0; k < max(1, threads/6); k++ {
		// A fork merged back into its parent.
		s := names[1+r.IntN(len(names)-1)]
		if p := parent[s]; !archived[p] {
			merge(s, p)
		}
		// A parent merged into its fork (the store merges only threads
		// one of which was forked from the other: siblings have no common
		// commit).
		c := names[1+r.IntN(len(names)-1)]
		if !archived[c] {
			merge(parent[c], c)
		}
	}
	return merges
}

type box struct{ x0, y0, x1, y1 float64 }

func (a box) overlaps(b box) bool { return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1 }

type seg struct{ x0, y0, x1, y1 float64 }

var (
	svgCircle = regexp.MustCompile(`<circle cx="(\d+)" cy="(\d+)" r="(\d+)"/>`)
	svgPath   = regexp.MustCompile(`<path d="M(\d+) (\d+) V(\d+) H(\d+)" class="fork">`)
	svgMerge  = regexp.MustCompile(`<path d="M(\d+) (\d+) H(\d+) V(\d+)" class="merge">`)
	svgLane   = regexp.MustCompile(`<line x1="(\d+)" y1="(\d+)" x2="(\d+)" y2="(\d+)" class="lane-line"/>`)
	svgText   = regexp.MustCompile(`<text x="(\d+)" y="(\d+)"(?: text-anchor="(\w+)")? class="(\w+)">([^<]*)</text>`)
	svgAny    = regexp.MustCompile(`<path d="[^"]*"`)
)

// treeGeometry reads the tree's SVG: its nodes, edges (as segments, by
// edge: forks first, then merges, nmerge of them), lane lines and texts
// (as boxes: monospace, 0.6 of the size a character).
func treeGeometry(t *testing.T, svg string) (nodes []box, edges [][]seg, nmerge int, lanes []seg, texts []box, words []string) {
	num := func(s string) float64 { f, _ := strconv.ParseFloat(s, 64); return f }
	for _, m := range svgCircle.FindAllStringSubmatch(svg, -1) {
		x, y, r := num(m[1]), num(m[2]), num(m[3])
		nodes = append(nodes, box{x - r, y - r, x + r, y + r})
	}
	if a, b := len(svgAny.FindAllString(svg, -1)), len(svgPath.FindAllString(svg, -1))+len(svgMerge.FindAllString(svg, -1)); a != b {
		t.Fatalf("%d of %d edges are neither forks (M x y V y H x) nor merges (M x y H x V y)", a-b, a)
	}
	for _, m := range svgPath.FindAllStringSubmatch(svg, -1) {
		x0, y0, y1, x1 := num(m[1]), num(m[2]), num(m[3]), num(m[4])
		edges = append(edges, []seg{{x0, y0, x0, y1}, {x0, y1, x1, y1}})
	}
	for _, m := range svgMerge.FindAllStringSubmatch(svg, -1) {
		x0, y0, x1, y1 := num(m[1]), num(m[2]), num(m[3]), num(m[4])
		edges = append(edges, []seg{{x0, y0, x1, y0}, {x1, y0, x1, y1}})
		nmerge++
	}
	for _, m := range svgLane.FindAllStringSubmatch(svg, -1) {
		lanes = append(lanes, seg{num(m[1]), num(m[2]), num(m[3]), num(m[4])})
	}
	size := map[string]float64{"thread": 12, "cp": 11, "seq": 10}
	for _, m := range svgText.FindAllStringSubmatch(svg, -1) {
		x, y, sz := num(m[1]), num(m[2]), size[m[4]]
		w := float64(len([]rune(strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&#34;", `"`, "&#39;", "'").Replace(m[5])))) * 0.6 * sz
		if m[3] == "middle" {
			x -= w / 2
		}
		texts = append(texts, box{x, y - 0.8*sz, x + w, y + 0.2*sz})
		words = append(words, m[5])
	}
	return
}

// hits reports whether segment s passes through box b.
func (s seg) hits(b box) bool {
	lo, hi := box{min(s.x0, s.x1), min(s.y0, s.y1), max(s.x0, s.x1), max(s.y0, s.y1)}, b
	return lo.x0 <= hi.x1 && hi.x0 <= lo.x1 && lo.y0 <= hi.y1 && hi.y0 <= lo.y1
}

// crosses reports whether an axis-parallel segment crosses another at a
// point inside both (touching at an end does not count).
func (s seg) crosses(o seg) bool {
	if (s.x0 == s.x1) == (o.x0 == o.x1) {
		return false // parallel: edges from one fork point share their way down
	}
	v, h := s, o
	if s.y0 == s.y1 {
		v, h = o, s
	}
	x, y := v.x0, h.y0
	inside := func(a, b, c float64) bool { return a > math.Min(b, c) && a < math.Max(b, c) }
	return inside(x, h.x0, h.x1) && inside(y, v.y0, v.y1)
}

// TestTreeLayout: for generated forests up to 50 threads and 10,000
// commits, with merges, the fork tree's SVG has no edge through a node
// that is not its own end, no two edges crossing, no edge crossing a lane
// line, no label overprinting another label, a node or an edge. A
// crossing is two segments, one vertical and one horizontal, meeting at a
// point strictly inside both: an edge meeting another or a lane line at
// its end (a merge edge reaching the merge's lane) does not cross it, nor
// do parallel segments (a merge edge running along its source's lane, two
// edges sharing a column).
func TestTreeLayout(t *testing.T) {
	for _, c := range []struct {
		seed             uint64
		threads, commits int
	}{{1, 8, 200}, {2, 20, 1000}, {3, 50, 10000}, {4, 50, 2500}} {
		t.Run(fmt.Sprintf("%d-threads-%d-commits", c.threads, c.commits), func(t *testing.T) {
			st, err := satchel.Open(context.Background(), "memory:")
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			merges := forest(t, st, c.seed, c.threads, c.commits)
			in, err := New(Config{Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(in.Handler())
			defer srv.Close()
			f := &fixture{st: st, in: in, srv: srv}
			resp, body := f.get(t, "/s/f/tree")
			if resp.StatusCode != 200 {
				t.Fatalf("tree: %d", resp.StatusCode)
			}
			nodes, edges, nmerge, laneLines, texts, words := treeGeometry(t, body)
			if m := regexp.MustCompile(`<svg [^>]*class="graph" width="(\d+)" height="(\d+)"`).FindStringSubmatch(body); m != nil {
				t.Logf("%d nodes, %d edges (%d merges), %d texts; the drawing is %s (labels) + %s × %s px (one column per node would be %d px wide)",
					len(nodes), len(edges), nmerge, len(texts), strconv.Itoa(labelWidth), m[1], m[2], labelWidth+len(nodes)*columnWidth+40)
			}
			if len(edges)-nmerge != c.threads-1 || nmerge != merges || merges == 0 {
				t.Errorf("%d fork edges for %d forks, %d merge edges for %d merges", len(edges)-nmerge, c.threads-1, nmerge, merges)
			}
			if n := strings.Count(body, `<g class="lane`); n != c.threads {
				t.Errorf("%d lanes on the page, want %d", n, c.threads)
			}
			if n := strings.Count(body, `class="thread"`); n != c.threads {
				t.Errorf("%d lanes on the page, want %d", n, c.threads)
			}
			for _, e := range edges[len(edges)-nmerge:] {
				if e[0].x1 <= e[0].x0 {
					t.Errorf("a merge (x %v) is not right of what it merged (x %v)", e[0].x1, e[0].x0)
				}
			}
			through, crossings, overlaps := 0, 0, 0
			for _, e := range edges {
				from, to := e[0], e[1]
				for _, n := range nodes {
					ends := n.x0 <= from.x0 && from.x0 <= n.x1 && n.y0 <= from.y0 && from.y0 <= n.y1 ||
						n.x0 <= to.x1 && to.x1 <= n.x1 && n.y0 <= to.y1 && to.y1 <= n.y1
					if !ends && (from.hits(n) || to.hits(n)) {
						through++
					}
				}
				for _, o := range edges {
					for _, s := range e {
						for _, q := range o {
							if s.crosses(q) {
								crossings++
							}
						}
					}
				}
				for _, s := range e {
					for _, l := range laneLines {
						if s.crosses(l) {
							crossings++
						}
					}
				}
				for _, tx := range texts {
					if from.hits(tx) || to.hits(tx) {
						overlaps++
					}
				}
			}
			for i, a := range texts {
				for j := i + 1; j < len(texts); j++ {
					if a.overlaps(texts[j]) {
						overlaps++
						t.Logf("%q overprints %q", words[i], words[j])
					}
				}
				for _, n := range nodes {
					if a.overlaps(n) {
						overlaps++
						t.Logf("%q overprints a node", words[i])
					}
				}
			}
			if through+crossings+overlaps != 0 {
				t.Errorf("%d edges through nodes, %d crossings, %d overlaps", through, crossings, overlaps)
			}
			if !strings.Contains(body, "(archived)") && c.threads >= 20 {
				t.Errorf("no archived thread is marked")
			}
		})
	}
}
