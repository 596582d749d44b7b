package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/memory"
	"github.com/satchel-dev/satchel/internal/jsonsize"
)

func newThread(t *testing.T) (*Engine, int64) {
	t.Helper()
	b := memory.New()
	th, err := b.Thread(context.Background(), "s", "main", true)
	if err != nil {
		t.Fatal(err)
	}
	return New(b, Options{}), th.ID
}

func put(t *testing.T, e *Engine, th int64, files map[string]string) backend.Commit {
	t.Helper()
	c, _, err := e.Update(context.Background(), th, func(tx *Tx) (CommitInfo, error) {
		for p, c := range files {
			if err := tx.Put(context.Background(), p, c); err != nil {
				return CommitInfo{}, err
			}
		}
		return CommitInfo{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// model checks a snapshot against the expected map: every file, its
// content, order of scan, and the totals.
func model(t *testing.T, e *Engine, s *Snapshot, want map[string]string) {
	t.Helper()
	ctx := context.Background()
	var paths []string
	err := s.Scan(ctx, "", "", func(ent *Entry) (bool, error) {
		paths = append(paths, ent.Path)
		c, err := s.Content(ctx, ent)
		if err != nil {
			return false, err
		}
		if c != want[ent.Path] {
			t.Errorf("%s: content %d bytes, want %d", ent.Path, len(c), len(want[ent.Path]))
		}
		if ent.Size != int64(len(c)) {
			t.Errorf("%s: size %d, want %d", ent.Path, ent.Size, len(c))
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != len(want) {
		t.Fatalf("scan found %d files, want %d", len(paths), len(want))
	}
	for i := 1; i < len(paths); i++ {
		if paths[i-1] >= paths[i] {
			t.Fatalf("scan out of order: %q then %q", paths[i-1], paths[i])
		}
	}
	var bytes int64
	for p, c := range want {
		bytes += int64(jsonsize.Entry(p, c))
		ent, ok, err := s.Get(ctx, p)
		if err != nil || !ok {
			t.Fatalf("get %s: %v %v", p, ok, err)
		}
		if ent.Path != p {
			t.Fatalf("get %s returned %s", p, ent.Path)
		}
	}
	files, gotBytes, err := s.Totals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if files != int64(len(want)) || gotBytes != bytes {
		t.Fatalf("totals %d files %d bytes, want %d %d", files, gotBytes, len(want), bytes)
	}
}

func TestRandomOpsAgainstModel(t *testing.T) {
	ctx := context.Background()
	e, th := newThread(t)
	r := rand.New(rand.NewPCG(1, 2))
	want := map[string]string{}
	var commits []backend.Commit
	var wants []map[string]string
	for step := 0; step < 300; step++ {
		ops := 1 + r.IntN(20)
		c, _, err := e.Update(ctx, th, func(tx *Tx) (CommitInfo, error) {
			for i := 0; i < ops; i++ {
				p := fmt.Sprintf("d%02d/f%04d.md", r.IntN(30), r.IntN(200))
				switch r.IntN(5) {
				case 0, 1:
					size := r.IntN(200)
					if r.IntN(10) == 0 {
						size = 9000 + r.IntN(100000)
					}
					content := strings.Repeat(string(rune('a'+r.IntN(26))), size) + fmt.Sprint(r.Int())
					want[p] = content
					if err := tx.Put(ctx, p, content); err != nil {
						return CommitInfo{}, err
					}
				case 2:
					text := fmt.Sprintf("line %d\n", r.Int())
					want[p] += text
					if err := tx.Append(ctx, p, text); err != nil {
						return CommitInfo{}, err
					}
				case 3:
					delete(want, p)
					if err := tx.Delete(ctx, p); err != nil {
						return CommitInfo{}, err
					}
				case 4:
					q := fmt.Sprintf("d%02d/f%04d.md", r.IntN(30), r.IntN(200))
					if _, ok := want[p]; ok && p != q {
						want[q] = want[p]
						delete(want, p)
						if err := tx.Rename(ctx, p, q); err != nil {
							return CommitInfo{}, err
						}
					}
				}
			}
			return CommitInfo{}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		snapshot := map[string]string{}
		for k, v := range want {
			snapshot[k] = v
		}
		commits = append(commits, c)
		wants = append(wants, snapshot)
	}
	head, _, _, err := e.Head(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	model(t, e, head, want)
	// Every old commit still reads exactly as it was, through a fresh engine
	// (no cache).
	fresh := New(e.b, Options{})
	for i := 0; i < len(commits); i += 37 {
		s, err := fresh.At(ctx, commits[i])
		if err != nil {
			t.Fatal(err)
		}
		model(t, fresh, s, wants[i])
	}
	// Diff between two commits equals the model's difference.
	a, _ := e.At(ctx, commits[100])
	b, _ := e.At(ctx, commits[200])
	changes, err := e.Diff(ctx, a, b)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]ChangeKind{}
	for _, c := range changes {
		got[c.Path] = c.Kind
	}
	wa, wb := wants[100], wants[200]
	for p := range wa {
		if _, ok := wb[p]; !ok && got[p] != Removed {
			t.Errorf("diff: %s should be removed, got %v", p, got[p])
		}
	}
	for p, cb := range wb {
		ca, ok := wa[p]
		switch {
		case !ok && got[p] != Added:
			t.Errorf("diff: %s should be added, got %v", p, got[p])
		case ok && ca != cb && got[p] != Modified:
			t.Errorf("diff: %s should be changed, got %v", p, got[p])
		case ok && ca == cb && got[p] != 0:
			t.Errorf("diff: %s is unchanged, got %v", p, got[p])
		}
	}
}

func TestAppendStoresOnlyTheTail(t *testing.T) {
	ctx := context.Background()
	e, th := newThread(t)
	big := strings.Repeat("0123456789abcdef\n", 64<<10/17*4) // ~256 KiB
	put(t, e, th, map[string]string{"log.txt": big})
	c, _, err := e.Update(ctx, th, func(tx *Tx) (CommitInfo, error) { return CommitInfo{}, tx.Append(ctx, "log.txt", "one more line\n") })
	if err != nil {
		t.Fatal(err)
	}
	data, _ := e.b.Pack(ctx, c.ID)
	if len(data) > chunkMax+8<<10 {
		t.Fatalf("append of 14 bytes to a %d-byte file stored a %d-byte pack", len(big), len(data))
	}
	c, _, err = e.Update(ctx, th, func(tx *Tx) (CommitInfo, error) {
		ent, _, _ := tx.Get(ctx, "log.txt")
		old, _ := tx.Content(ctx, &ent)
		return CommitInfo{}, tx.Put(ctx, "log.txt", strings.Replace(old, "0123", "XYZW", 1))
	})
	if err != nil {
		t.Fatal(err)
	}
	data, _ = e.b.Pack(ctx, c.ID)
	if len(data) > chunkMax+8<<10 {
		t.Fatalf("a one-line edit of a %d-byte file stored a %d-byte pack", len(big), len(data))
	}
}

func TestConcurrentAppendsLoseNothing(t *testing.T) {
	ctx := context.Background()
	e, th := newThread(t)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				_, _, err := e.Update(ctx, th, func(tx *Tx) (CommitInfo, error) {
					return CommitInfo{}, tx.Append(ctx, "log", fmt.Sprintf("g%d i%d\n", g, i))
				})
				if err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	s, _, _, _ := e.Head(ctx, th)
	ent, _, _ := s.Get(ctx, "log")
	c, _ := s.Content(ctx, &ent)
	if n := strings.Count(c, "\n"); n != 400 || ent.Lines != 400 {
		t.Fatalf("%d lines (entry says %d), want 400", n, ent.Lines)
	}
}

// TestReadsWhileWriting: reads of the head race with commits that copy the
// entries of the nodes being read (run with -race).
func TestReadsWhileWriting(t *testing.T) {
	ctx := context.Background()
	e, th := newThread(t)
	files := map[string]string{}
	for i := 0; i < 50; i++ {
		files[fmt.Sprintf("f%02d", i)] = strings.Repeat("x", i)
	}
	put(t, e, th, files)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			s, _, _, err := e.Head(ctx, th)
			if err != nil {
				t.Error(err)
				return
			}
			_ = s.Scan(ctx, "", "", func(ent *Entry) (bool, error) {
				_, err := s.Content(ctx, ent)
				return err == nil, err
			})
		}
	}()
	for i := 0; i < 200; i++ {
		_, _, err := e.Update(ctx, th, func(tx *Tx) (CommitInfo, error) {
			return CommitInfo{}, tx.Put(ctx, fmt.Sprintf("g%03d", i), "y")
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
}

func TestTailsJoin(t *testing.T) {
	var tl tails
	a := tl.join("head", "1")
	b := tl.join(a, "2") // a is the newest string of its buffer: extended in place
	if unsafe.StringData(b) != unsafe.StringData(a) {
		t.Error("joining the newest string copied it")
	}
	c := tl.join(a, "3") // a is no longer the newest: copied
	if unsafe.StringData(c) == unsafe.StringData(a) {
		t.Error("joining an older string wrote over the room a newer one uses")
	}
	d := tl.join(b, "4")
	e := tl.join("other", "x")
	for got, want := range map[string]string{a: "head1", b: "head12", c: "head13", d: "head124", e: "otherx"} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	long := strings.Repeat("x", chunkMax)
	if got := tl.join(long, "y"); got != long+"y" {
		t.Error("a long join is wrong")
	}
}

// TestAppendVersions appends to one file from two versions of it (a
// restore in between): each version keeps its content, and so does each
// branch, though appends share the room after the last chunk.
func TestAppendVersions(t *testing.T) {
	ctx := context.Background()
	for _, size := range []int{10, 5000, 40000} {
		e, th := newThread(t)
		base := strings.Repeat("a", size)
		put := func(fn func(tx *Tx) error) backend.Commit {
			t.Helper()
			c, _, err := e.Update(ctx, th, func(tx *Tx) (CommitInfo, error) { return CommitInfo{}, fn(tx) })
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		c0 := put(func(tx *Tx) error { return tx.Put(ctx, "f", base) })
		c1 := put(func(tx *Tx) error { return tx.Append(ctx, "f", "1") })
		c2 := put(func(tx *Tx) error { return tx.Append(ctx, "f", "2") })
		if _, err := e.Point(ctx, th, c1, nil, "", nil); err != nil {
			t.Fatal(err)
		}
		c3 := put(func(tx *Tx) error { return tx.Append(ctx, "f", "3") })
		c4 := put(func(tx *Tx) error {
			if err := tx.Append(ctx, "f", "4"); err != nil {
				return err
			}
			return tx.Append(ctx, "f", "5")
		})
		for _, v := range []struct {
			c    backend.Commit
			want string
		}{{c0, base}, {c1, base + "1"}, {c2, base + "12"}, {c3, base + "13"}, {c4, base + "1345"}} {
			c, want := v.c, v.want
			s, err := e.At(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			ent, ok, err := s.Get(ctx, "f")
			if err != nil || !ok {
				t.Fatalf("commit %d: %v %v", c.Seq, ok, err)
			}
			got, err := s.Content(ctx, &ent)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("size %d, commit %d: %d bytes ending %q, want %d ending %q", size, c.Seq, len(got), got[max(0, len(got)-5):], len(want), want[max(0, len(want)-5):])
			}
		}
	}
}

// bytesOnly hides a backend's optional capabilities (AppendParts): the
// engine then encodes each pack as bytes, as it does for the SQL backends.
type bytesOnly struct{ backend.Backend }

// TestPacksReadCold writes through one engine and reads everything back
// through a new one, whose cache is empty: each pack is read from the
// backend and parsed, whether the engine gave it as parts (memory) or as
// bytes.
func TestPacksReadCold(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"parts", "bytes"} {
		t.Run(name, func(t *testing.T) {
			mem := memory.New()
			var b backend.Backend = mem
			if name == "bytes" {
				b = bytesOnly{mem}
			}
			th, err := b.Thread(ctx, "s", "main", true)
			if err != nil {
				t.Fatal(err)
			}
			e := New(b, Options{})
			if _, ok := e.b.(backend.PartsAppender); ok != (name == "parts") {
				t.Fatalf("PartsAppender detected: %v", ok)
			}
			r := rand.New(rand.NewPCG(3, 4))
			want := map[string]string{}
			for i := range 300 {
				_, _, err := e.Update(ctx, th.ID, func(tx *Tx) (CommitInfo, error) {
					p := fmt.Sprintf("d%d/f%03d", i%7, r.IntN(60))
					switch r.IntN(4) {
					case 0:
						want[p] = strings.Repeat(fmt.Sprintf("%d ", i), r.IntN(9000))
						return CommitInfo{}, tx.Put(ctx, p, want[p])
					case 1:
						delete(want, p)
						return CommitInfo{}, tx.Delete(ctx, p)
					default:
						text := fmt.Sprintf("append %d\n", i)
						want["log"] += text
						return CommitInfo{}, tx.Append(ctx, "log", text)
					}
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			cold := New(b, Options{})
			s, _, _, err := cold.Head(ctx, th.ID)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			err = s.Scan(ctx, "", "", func(ent *Entry) (bool, error) {
				c, err := s.Content(ctx, ent)
				got[ent.Path] = c
				return true, err
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Errorf("%d files, want %d", len(got), len(want))
			}
			for p, w := range want {
				if got[p] != w {
					t.Errorf("%s: %d bytes, want %d", p, len(got[p]), len(w))
				}
			}
		})
	}
}

func TestLRU(t *testing.T) {
	c := newLRU[int, string](40)
	for i := range 4 {
		c.put(i, fmt.Sprint(i), 10)
	}
	c.get(0)                // 0 becomes the most recent: 1 is the oldest
	c.put(4, "4", 10)       // evicts 1
	c.put(2, "two", 10)     // replaces 2, now the most recent
	c.remove(3)             // leaves 0, 4, 2
	c.put(5, "5", 10)       // fits
	c.put(6, "6", 10)       // evicts 0, the oldest
	c.put(7, "too big", 11) // over a quarter: not cached
	want := map[int]string{2: "two", 4: "4", 5: "5", 6: "6"}
	for k := range 8 {
		v, ok := c.get(k)
		if w, in := want[k]; ok != in || v != w {
			t.Errorf("get(%d) = %q, %v; want %q, %v", k, v, ok, w, in)
		}
	}
	if c.size != 40 || len(c.m) != 4 {
		t.Errorf("size %d, %d entries; want 40, 4", c.size, len(c.m))
	}
}

// TestHasUnder checks a transaction's HasUnder against its own Scan as it
// changes more and more paths (it walks the pending paths while they are
// few, then keeps counts per directory).
func TestHasUnder(t *testing.T) {
	ctx := context.Background()
	e, th := newThread(t)
	put(t, e, th, map[string]string{"a/b/c": "1", "a/d": "2", "e/f": "3"})
	dirs := []string{"", "a", "a/b", "a/b/c", "a/d", "e", "g", "g/h", "a/x", "ab"}
	r := rand.New(rand.NewPCG(7, 8))
	paths := []string{"a/b/c", "a/d", "e/f", "g/h/i", "g/j", "a/x/y", "ab", "k/l", "m/n", "o", "p/q", "a/b/z"}
	_, _, err := e.Update(ctx, th, func(tx *Tx) (CommitInfo, error) {
		for step := range 80 {
			p := paths[r.IntN(len(paths))]
			if step < 40 { // few paths: walked, not counted
				p = paths[r.IntN(4)]
			}
			if r.IntN(2) == 0 {
				if err := tx.Delete(ctx, p); err != nil {
					return CommitInfo{}, err
				}
			} else if err := tx.Put(ctx, p, "x"); err != nil {
				return CommitInfo{}, err
			}
			for _, d := range dirs {
				got, err := tx.HasUnder(ctx, d)
				if err != nil {
					return CommitInfo{}, err
				}
				want := false
				err = tx.Scan(ctx, d+"/", d+"0", func(*Entry) (bool, error) { want = true; return false, nil })
				if err != nil {
					return CommitInfo{}, err
				}
				if got != want {
					t.Fatalf("step %d (%d pending): HasUnder(%q) = %v, want %v", step, len(tx.pending), d, got, want)
				}
			}
		}
		if tx.under == nil {
			t.Error("under was never made")
		}
		return CommitInfo{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNodesMatchTheirEncoding: nodes built by splicing runs of an older
// node's encoding (tree.go) index their bytes, and count their totals,
// exactly as a fresh parse of those bytes does, and a cold engine reads the same tree:
// over thousands of single-file writes and deletes in a three-level tree,
// and batches that split and merge nodes.
func TestNodesMatchTheirEncoding(t *testing.T) {
	ctx := context.Background()
	e, th := newThread(t)
	r := rand.New(rand.NewPCG(5, 6))
	want := map[string]string{}
	path := func() string { return fmt.Sprintf("notes/d%02d/f%05d.md", r.IntN(100), r.IntN(4000)) }
	for step := range 4000 {
		ops := 1
		if step%100 == 0 {
			ops = 300 // a batch: splits, several changed children per node
		}
		_, _, err := e.Update(ctx, th, func(tx *Tx) (CommitInfo, error) {
			for range ops {
				p := path()
				if r.IntN(4) == 0 {
					delete(want, p)
					if err := tx.Delete(ctx, p); err != nil {
						return CommitInfo{}, err
					}
					continue
				}
				want[p] = fmt.Sprint(step, p)
				if err := tx.Put(ctx, p, want[p]); err != nil {
					return CommitInfo{}, err
				}
			}
			return CommitInfo{}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	head, _, _, err := e.Head(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	depth, internals := 0, 0
	var walk func(r Ref, d int)
	walk = func(r Ref, d int) {
		n, err := e.node(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		depth = max(depth, d)
		kind := kindInternal
		if n.leaf {
			kind = kindLeaf
		}
		p, err := parseNode(kind, n.data, n.pack)
		if err != nil {
			t.Fatalf("node %v: %v", r, err)
		}
		if !slices.Equal(p.offs, n.offs) || p.files != n.files || p.bytes != n.bytes {
			t.Fatalf("node %v as built: offs %v totals %d/%d; parsed: offs %v totals %d/%d",
				r, n.offs, n.files, n.bytes, p.offs, p.files, p.bytes)
		}
		if n.leaf {
			return
		}
		internals++
		for i := range n.count() {
			walk(n.ref(i), d+1)
		}
	}
	walk(head.root, 1)
	if depth < 3 || internals < 3 {
		t.Fatalf("tree of depth %d with %d internal nodes: too small to test", depth, internals)
	}
	model(t, e, head, want)
	cold := New(e.b, Options{})
	s, _, _, err := cold.Head(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	model(t, cold, s, want)
}

// TestNodeKey: refs in range get distinct cache keys; refs out of range
// are not cached (a shared key would return another node).
func TestNodeKey(t *testing.T) {
	seen := map[uint64]Ref{}
	for _, p := range []int64{1, 2, 1 << 20, 1<<40 - 1} {
		for _, i := range []uint32{0, 1, 1 << 23, 1<<24 - 1} {
			r := Ref{Pack: p, Idx: i}
			k, ok := nodeKey(r)
			if !ok {
				t.Fatalf("%v not cacheable", r)
			}
			if o, dup := seen[k]; dup {
				t.Fatalf("%v and %v share key %d", o, r, k)
			}
			seen[k] = r
		}
	}
	for _, r := range []Ref{{Pack: 1 << 40}, {Pack: 1, Idx: 1 << 24}, {Pack: -1}} {
		if _, ok := nodeKey(r); ok {
			t.Errorf("%v is cacheable", r)
		}
	}
}

// TestPackParts: a pack read as parts (PartsReader) is the pack read as
// bytes, and parts that disagree with their header are refused as
// corrupt rather than misread.
func TestPackParts(t *testing.T) {
	var pb packBuilder
	pb.addString(kindChunk, "hello")
	pb.addString(kindLeaf, "leaf bytes")
	parts := pb.parts()
	whole, err := parsePack(7, string(pb.bytes()))
	if err != nil {
		t.Fatal(err)
	}
	got, err := parsePackParts(7, parts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.kinds, whole.kinds) || !slices.Equal(got.objs, whole.objs) {
		t.Fatalf("parts %v %q, bytes %v %q", got.kinds, got.objs, whole.kinds, whole.objs)
	}
	for name, bad := range map[string][]string{
		"object missing":   parts[:2],
		"object too long":  {parts[0], "hello!", parts[2]},
		"object extra":     append(slices.Clone(parts), "x"),
		"header truncated": {parts[0][:3], parts[1], parts[2]},
	} {
		if _, err := parsePackParts(7, bad); !errors.Is(err, errCorrupt) {
			t.Errorf("%s: %v, want corrupt", name, err)
		}
	}
}

// TestScanPaths: ScanPaths lists the paths Scan does, on a snapshot and on
// a transaction whose pending writes and deletes it merges, over ranges.
func TestScanPaths(t *testing.T) {
	ctx := context.Background()
	e, th := newThread(t)
	files := map[string]string{}
	for i := range 500 {
		files[fmt.Sprintf("d%d/f%03d", i%5, i)] = fmt.Sprint(i)
	}
	put(t, e, th, files)
	head, _, _, err := e.Head(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	tx := &Tx{e: e, base: head.Root()}
	if err := tx.Put(ctx, "d2/new", "x"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Delete(ctx, "d2/f002"); err != nil {
		t.Fatal(err)
	}
	for _, v := range []View{head, tx} {
		for _, r := range [][2]string{{"", ""}, {"d2/", "d20"}, {"d1/f1", "d3"}, {"e", ""}} {
			var full, paths []string
			if err := v.Scan(ctx, r[0], r[1], func(ent *Entry) (bool, error) { full = append(full, ent.Path); return true, nil }); err != nil {
				t.Fatal(err)
			}
			if err := v.ScanPaths(ctx, r[0], r[1], func(p string) (bool, error) { paths = append(paths, p); return true, nil }); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(full, paths) {
				t.Fatalf("%T %q: Scan %d paths, ScanPaths %d", v, r, len(full), len(paths))
			}
		}
	}
	var got []string
	_ = tx.ScanPaths(ctx, "d2/f00", "d2/f01", func(p string) (bool, error) { got = append(got, p); return true, nil })
	if len(got) != 1 || got[0] != "d2/f007" {
		t.Fatalf("tx ScanPaths d2/f00*: %v", got)
	}
}

// TestUpdateRetriesCollectedBase: a mutation whose base was collected
// under it (ErrCollected: the grace period ran out while it ran) runs
// again on the backend's head, even when that head was not a cached one,
// as after a lost compare-and-swap; an error that is not ErrCollected is
// returned at once.
func TestUpdateRetriesCollectedBase(t *testing.T) {
	ctx := context.Background()
	b := memory.New()
	th, err := b.Thread(ctx, "s", "main", true)
	if err != nil {
		t.Fatal(err)
	}
	e := New(b, Options{}) // no cached head: the first attempt reads the backend's
	calls := 0
	_, changed, err := e.Update(ctx, th.ID, func(tx *Tx) (CommitInfo, error) {
		calls++
		if calls == 1 {
			return CommitInfo{}, fmt.Errorf("reading: %w", ErrCollected)
		}
		return CommitInfo{}, tx.Put(ctx, "f", "x")
	})
	if err != nil || !changed || calls != 2 {
		t.Fatalf("Update: changed %v, %v after %d calls; want a commit after 2", changed, err, calls)
	}
	other := errors.New("refused")
	calls = 0
	_, _, err = New(b, Options{}).Update(ctx, th.ID, func(tx *Tx) (CommitInfo, error) {
		calls++
		return CommitInfo{}, other
	})
	if !errors.Is(err, other) || calls != 1 {
		t.Fatalf("Update with a refusal: %v after %d calls; want it after 1", err, calls)
	}
}
