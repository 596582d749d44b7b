package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/memory"
)

// packStore is a memory backend that keeps its packs as any other backend
// does (its PartsAppender and PartsReader hidden, so the engine caches
// what it reads), and counts the calls that read packs. With many set it
// reads many packs in one call (backend.PacksReader); lost names packs
// it has lost, as if collected.
type packStore struct {
	*memory.Backend
	hideMemParts

	mu    sync.Mutex
	pack  int            // calls of Pack
	packs int            // calls of Packs
	named []int          // the IDs each call of Packs named
	reads map[int64]int  // times each pack was read, by either
	lost  map[int64]bool // packs missing as if collected
}

// hideMemParts hides memory's PartsAppender and PartsReader (ambiguous
// names: the wrapper has neither method).
type hideMemParts struct{}

func (hideMemParts) AppendParts() {}
func (hideMemParts) PackParts()   {}

// manyPacks is a packStore that implements backend.PacksReader.
type manyPacks struct{ *packStore }

func newPackStore() *packStore {
	return &packStore{Backend: memory.New(), reads: map[int64]int{}, lost: map[int64]bool{}}
}

func (b *packStore) Pack(ctx context.Context, id int64) (string, error) {
	b.mu.Lock()
	b.pack++
	lost := b.lost[id]
	if !lost {
		b.reads[id]++
	}
	b.mu.Unlock()
	if lost {
		return "", backend.ErrNoPack
	}
	return b.Backend.Pack(ctx, id)
}

// Packs reads the packs in the order of their IDs, as PostgreSQL does.
func (b manyPacks) Packs(ctx context.Context, ids []int64, maxBytes int64) (map[int64]string, []int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	b.mu.Lock()
	b.packs++
	b.named = append(b.named, len(ids))
	b.mu.Unlock()
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	packs := map[int64]string{}
	var rest []int64
	total := int64(0)
	for _, id := range sorted {
		b.mu.Lock()
		lost := b.lost[id]
		b.mu.Unlock()
		if lost {
			continue
		}
		p, err := b.Backend.Pack(ctx, id)
		if errors.Is(err, backend.ErrNoPack) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if total += int64(len(p)); total > maxBytes && len(packs) > 0 {
			rest = append(rest, id)
			continue
		}
		b.mu.Lock()
		b.reads[id]++
		b.mu.Unlock()
		packs[id] = p
	}
	return packs, rest, nil
}

// calls returns the calls that read packs so far, and forgets them.
func (b *packStore) calls() (pack, packs int, named []int, reads map[int64]int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	pack, packs, named, reads = b.pack, b.packs, b.named, b.reads
	b.pack, b.packs, b.named, b.reads = 0, 0, nil, map[int64]int{}
	return pack, packs, named, reads
}

// fillPacks writes n files to a thread of b, each in a commit of its own
// (so each file's content is in a pack of its own), of size bytes each,
// and returns the last commit.
func fillPacks(t *testing.T, b backend.Backend, n, size int) (backend.Commit, map[string]string) {
	t.Helper()
	th, err := b.Thread(context.Background(), "s", "main", true)
	if err != nil {
		t.Fatal(err)
	}
	e := New(b, Options{})
	files := map[string]string{}
	var c backend.Commit
	for i := range n {
		p := fmt.Sprintf("notes/d%02d/file-%04d.md", i%7, i)
		files[p] = fmt.Sprintf("file %d\n%s\n", i, strings.Repeat(string(rune('a'+i%26)), size))
		c = put(t, e, th.ID, map[string]string{p: files[p]})
	}
	return c, files
}

type scanned struct {
	Path, Content string
}

// scanFiles reads every file ScanFiles gives, with a fresh engine (and so
// a cold cache) over b.
func scanFiles(t *testing.T, b backend.Backend, root backend.Commit, from, to string, want func(string) bool) ([]scanned, error) {
	return scanFilesCache(t, b, root, from, to, want, 0)
}

// scanFilesCache is scanFiles with a cache of cacheBytes (0: the default).
func scanFilesCache(t *testing.T, b backend.Backend, root backend.Commit, from, to string, want func(string) bool, cacheBytes int64) ([]scanned, error) {
	t.Helper()
	e := New(b, Options{CacheBytes: cacheBytes})
	snap, err := e.At(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	var out []scanned
	err = snap.ScanFiles(context.Background(), from, to, want, func(ent *Entry) (bool, error) {
		c, err := snap.Content(context.Background(), ent)
		if err != nil {
			return false, err
		}
		out = append(out, scanned{ent.Path, c})
		return true, nil
	})
	return out, err
}

// TestScanFilesReadsAhead: a walk of a cold cache over a backend that
// reads many packs at once reads them in a few calls, each naming at most
// aheadPacks packs and reading each pack once, and finds exactly what the
// walk over the same backend without the capability finds, pack by pack.
func TestScanFilesReadsAhead(t *testing.T) {
	ps := newPackStore()
	root, files := fillPacks(t, ps, 600, 100)
	ps.calls()

	one, err := scanFiles(t, ps, root, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	pack1, packs1, _, _ := ps.calls()
	many, err := scanFiles(t, manyPacks{ps}, root, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	pack2, packs2, named, reads := ps.calls()

	if diff := cmp.Diff(one, many); diff != "" {
		t.Errorf("the walk with PacksReader differs (-without +with):\n%s", diff)
	}
	if len(one) != len(files) {
		t.Errorf("the walk read %d files, want %d", len(one), len(files))
	}
	for _, f := range one {
		if files[f.Path] != f.Content {
			t.Errorf("%s read as %q", f.Path, f.Content)
		}
	}
	if packs1 != 0 {
		t.Errorf("without PacksReader: %d calls of Packs", packs1)
	}
	if pack1 < len(files) {
		t.Errorf("without PacksReader: %d calls of Pack for %d files in packs of their own", pack1, len(files))
	}
	// 600 files and the nodes above them, 64 packs a call, and the root
	// read on its own.
	if calls := pack2 + packs2; calls*8 > pack1 {
		t.Errorf("with PacksReader: %d calls of Pack and %d of Packs, against %d calls of Pack without", pack2, packs2, pack1)
	}
	for i, n := range named {
		if n > aheadPacks {
			t.Errorf("call %d of Packs named %d packs, over %d", i, n, aheadPacks)
		}
	}
	for id, n := range reads {
		if n > 1 {
			t.Errorf("pack %d read %d times", id, n)
		}
	}
	t.Logf("without: %d calls of Pack; with: %d calls of Pack, %d of Packs", pack1, pack2, packs2)
}

// TestScanFilesBound: packs too big for one call to read together are
// left for the next window, never read twice nor lost.
func TestScanFilesBound(t *testing.T) {
	ps := newPackStore()
	root, files := fillPacks(t, ps, 40, 200<<10)
	ps.calls()
	one, err := scanFiles(t, ps, root, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	pack1, _, _, _ := ps.calls()
	many, err := scanFiles(t, manyPacks{ps}, root, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	pack2, packs2, _, reads := ps.calls()
	if diff := cmp.Diff(one, many); diff != "" {
		t.Errorf("the walk with PacksReader differs (-without +with):\n%s", diff)
	}
	if len(many) != len(files) {
		t.Errorf("read %d files, want %d", len(many), len(files))
	}
	for id, n := range reads {
		if n > 1 {
			t.Errorf("pack %d read %d times", id, n)
		}
	}
	// 40 packs of 200 KiB, 1 MiB a call: more than one call, fewer than
	// one a pack.
	if packs2 < 2 || pack2+packs2 >= pack1 {
		t.Errorf("with PacksReader: %d calls of Pack and %d of Packs, against %d calls of Pack without", pack2, packs2, pack1)
	}
}

// TestScanFilesSmallCache: with a cache smaller than a window of packs,
// the read-ahead reads no more at once than the cache keeps, so that its
// packs are not evicted before the walk reads them: the walk reads no
// more packs in all than it does reading each on its own.
func TestScanFilesSmallCache(t *testing.T) {
	ps := newPackStore()
	root, files := fillPacks(t, ps, 300, 2000)
	ps.calls()
	total := func(reads map[int64]int) (n int) {
		for _, r := range reads {
			n += r
		}
		return n
	}
	one, err := scanFilesCache(t, ps, root, "", "", nil, 256<<10)
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, readsOne := ps.calls()
	many, err := scanFilesCache(t, manyPacks{ps}, root, "", "", nil, 256<<10)
	if err != nil {
		t.Fatal(err)
	}
	pack, packs, _, readsMany := ps.calls()
	if diff := cmp.Diff(one, many); diff != "" || len(many) != len(files) {
		t.Errorf("the walk with PacksReader differs (-without +with):\n%s", diff)
	}
	if total(readsMany) > total(readsOne) {
		t.Errorf("through a 256 KiB cache, the walk read %d packs with PacksReader, %d without", total(readsMany), total(readsOne))
	}
	if pack+packs >= len(readsOne) {
		t.Errorf("%d calls of Pack and %d of Packs, against %d without", pack, packs, total(readsOne))
	}
	t.Logf("packs read without: %d, with: %d in %d calls of Pack and %d of Packs", total(readsOne), total(readsMany), pack, packs)
}

// TestScanFilesWant: ScanFiles gives fn only the entries want accepts,
// asks want once a path, and a range and a walk that stops early read no
// more than a window ahead.
func TestScanFilesWant(t *testing.T) {
	ps := newPackStore()
	root, _ := fillPacks(t, ps, 300, 50)
	ps.calls()
	for _, b := range []backend.Backend{ps, manyPacks{ps}} {
		name := fmt.Sprintf("%T", b)
		asked := map[string]int{}
		want := func(p string) bool { asked[p]++; return strings.Contains(p, "/d03/") }
		got, err := scanFiles(t, b, root, "notes/d0", "notes/d05", want)
		if err != nil {
			t.Fatal(err)
		}
		all, err := scanFiles(t, b, root, "notes/d0", "notes/d05", nil)
		if err != nil {
			t.Fatal(err)
		}
		var filtered []scanned
		for _, f := range all {
			if strings.Contains(f.Path, "/d03/") {
				filtered = append(filtered, f)
			}
		}
		if diff := cmp.Diff(filtered, got); diff != "" || len(got) == 0 {
			t.Errorf("%s: ScanFiles with want differs from Scan filtered (%d files) (-filtered +want):\n%s", name, len(got), diff)
		}
		for p, n := range asked {
			if n != 1 {
				t.Errorf("%s: want asked %d times of %s", name, n, p)
			}
			if p < "notes/d0" || p >= "notes/d05" {
				t.Errorf("%s: want asked of %s, out of range", name, p)
			}
		}
		ps.calls()
	}

	// A walk that stops after three files reads at most one window of
	// packs ahead besides the nodes on its way.
	e := New(manyPacks{ps}, Options{})
	snap, err := e.At(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = snap.ScanFiles(context.Background(), "", "", nil, func(ent *Entry) (bool, error) {
		n++
		return n < 3, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, reads := ps.calls()
	if len(reads) > 3*aheadPacks {
		t.Errorf("a walk that stopped after 3 files read %d packs", len(reads))
	}
}

// TestScanFilesLostPack: a pack that is gone fails the walk when, and as,
// it would without the read-ahead.
func TestScanFilesLostPack(t *testing.T) {
	ps := newPackStore()
	root, _ := fillPacks(t, ps, 200, 50)
	e := New(ps, Options{})
	snap, err := e.At(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	ent, ok, err := snap.Get(context.Background(), "notes/d03/file-0101.md")
	if err != nil || !ok {
		t.Fatalf("Get: %v %v", ok, err)
	}
	ps.lost[ent.Chunks[0].Ref.Pack] = true
	one, err1 := scanFiles(t, ps, root, "", "", nil)
	many, err2 := scanFiles(t, manyPacks{ps}, root, "", "", nil)
	if !errors.Is(err1, ErrCollected) || !errors.Is(err2, ErrCollected) {
		t.Errorf("walks over a lost pack: %v without PacksReader, %v with; want ErrCollected", err1, err2)
	}
	if diff := cmp.Diff(one, many); diff != "" {
		t.Errorf("the files read before the lost pack differ (-without +with):\n%s", diff)
	}
}

// TestScanFilesCancel: a walk whose context ends stops with its error.
func TestScanFilesCancel(t *testing.T) {
	ps := newPackStore()
	root, _ := fillPacks(t, ps, 300, 50)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := New(manyPacks{ps}, Options{})
	snap, err := e.At(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = snap.ScanFiles(ctx, "", "", nil, func(ent *Entry) (bool, error) {
		if n++; n == 10 {
			cancel()
		}
		return true, nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("walk cancelled after 10 files: %v after %d files", err, n)
	}
	if n >= 300 {
		t.Errorf("walk cancelled after 10 files went on to the end")
	}
}

// TestTxScanFiles: a transaction's ScanFiles merges its pending changes
// as Scan does, filtered by want.
func TestTxScanFiles(t *testing.T) {
	ps := newPackStore()
	fillPacks(t, ps, 100, 20)
	e := New(manyPacks{ps}, Options{})
	th, err := ps.Thread(context.Background(), "s", "main", false)
	if err != nil {
		t.Fatal(err)
	}
	want := func(p string) bool { return strings.Contains(p, "/d02/") || strings.HasSuffix(p, "9.md") }
	_, _, err = e.Update(context.Background(), th.ID, func(tx *Tx) (CommitInfo, error) {
		ctx := context.Background()
		for _, p := range []string{"notes/d02/new.md", "notes/d04/file-0039.md", "notes/d05/x.md", "a.md"} {
			if err := tx.Put(ctx, p, "new "+p); err != nil {
				return CommitInfo{}, err
			}
		}
		for _, p := range []string{"notes/d02/file-0009.md", "notes/d03/file-0010.md", "notes/d04/file-0018.md"} {
			if err := tx.Delete(ctx, p); err != nil {
				return CommitInfo{}, err
			}
		}
		var all, got []scanned
		read := func(out *[]scanned) func(*Entry) (bool, error) {
			return func(ent *Entry) (bool, error) {
				c, err := tx.Content(ctx, ent)
				*out = append(*out, scanned{ent.Path, c})
				return true, err
			}
		}
		if err := tx.Scan(ctx, "", "", read(&all)); err != nil {
			return CommitInfo{}, err
		}
		if err := tx.ScanFiles(ctx, "", "", want, read(&got)); err != nil {
			return CommitInfo{}, err
		}
		var filtered []scanned
		for _, f := range all {
			if want(f.Path) {
				filtered = append(filtered, f)
			}
		}
		if diff := cmp.Diff(filtered, got); diff != "" || len(got) == 0 {
			t.Errorf("Tx.ScanFiles differs from Tx.Scan filtered (-filtered +ScanFiles):\n%s", diff)
		}
		return CommitInfo{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
