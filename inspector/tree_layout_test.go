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
// checkpoints of long names now and then, and some archived.
func forest(t *testing.T, st *satchel.Store, seed uint64, threads, commits int) {
	t.Helper()
	ctx := context.Background()
	r := rand.New(rand.NewPCG(seed, 7))
	names := []string{"main"}
	heads := map[string]int64{}
	ws, _ := st.Workspace(ctx, "f", "main")
	per := commits / threads
	grow := func(ws *satchel.Workspace, name string) {
		for i := 0; i < per; i++ {
			if err := ws.Append(ctx, "log.txt", fmt.Sprintf("%s %d\n", name, i)); err != nil {
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
		if r.IntN(6) == 0 {
			if _, err := st.ArchiveThread(ctx, "f", name); err != nil {
				t.Fatal(err)
			}
		}
	}
}

type box struct{ x0, y0, x1, y1 float64 }

func (a box) overlaps(b box) bool { return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1 }

type seg struct{ x0, y0, x1, y1 float64 }

var (
	svgCircle = regexp.MustCompile(`<circle cx="(\d+)" cy="(\d+)" r="(\d+)"/>`)
	svgPath   = regexp.MustCompile(`<path d="M(\d+) (\d+) V(\d+) H(\d+)" class="fork">`)
	svgText   = regexp.MustCompile(`<text x="(\d+)" y="(\d+)"(?: text-anchor="(\w+)")? class="(\w+)">([^<]*)</text>`)
	svgAny    = regexp.MustCompile(`<path d="[^"]*"`)
)

// treeGeometry reads the tree's SVG: its nodes, edges (as segments, by
// edge) and texts (as boxes: monospace, 0.6 of the size a character).
func treeGeometry(t *testing.T, svg string) (nodes []box, edges [][]seg, texts []box, words []string) {
	num := func(s string) float64 { f, _ := strconv.ParseFloat(s, 64); return f }
	for _, m := range svgCircle.FindAllStringSubmatch(svg, -1) {
		x, y, r := num(m[1]), num(m[2]), num(m[3])
		nodes = append(nodes, box{x - r, y - r, x + r, y + r})
	}
	if a, b := len(svgAny.FindAllString(svg, -1)), len(svgPath.FindAllString(svg, -1)); a != b {
		t.Fatalf("%d of %d edges are not of the shape M x y V y H x", a-b, a)
	}
	for _, m := range svgPath.FindAllStringSubmatch(svg, -1) {
		x0, y0, y1, x1 := num(m[1]), num(m[2]), num(m[3]), num(m[4])
		edges = append(edges, []seg{{x0, y0, x0, y1}, {x0, y1, x1, y1}})
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
// commits, the fork tree's SVG has no edge through a node that is not
// its own end, no two edges crossing, no label overprinting another
// label, a node or an edge.
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
			forest(t, st, c.seed, c.threads, c.commits)
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
			nodes, edges, texts, words := treeGeometry(t, body)
			if m := regexp.MustCompile(`<svg [^>]*class="graph" width="(\d+)" height="(\d+)"`).FindStringSubmatch(body); m != nil {
				t.Logf("%d nodes, %d edges, %d texts; the drawing is %s (labels) + %s × %s px (one column per node would be %d px wide)",
					len(nodes), len(edges), len(texts), strconv.Itoa(labelWidth), m[1], m[2], labelWidth+len(nodes)*columnWidth+40)
			}
			if len(edges) != c.threads-1 {
				t.Errorf("%d edges for %d forks", len(edges), c.threads-1)
			}
			if n := strings.Count(body, `<g class="lane`); n != c.threads {
				t.Errorf("%d lanes on the page, want %d", n, c.threads)
			}
			if n := strings.Count(body, `class="thread"`); n != c.threads {
				t.Errorf("%d lanes on the page, want %d", n, c.threads)
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
