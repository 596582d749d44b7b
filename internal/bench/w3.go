package bench

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/sqlite"
	"github.com/satchel-dev/satchel/internal/backendof"
)

// W3 defaults (WORKLOADS.md).
const (
	W3DefaultF     = 1000 // files
	W3DefaultS     = 500  // steps: edit one line, then checkpoint
	W3DefaultForks = 100  // forks from random earlier checkpoints
	W3DefaultReads = 1000 // reads at an old checkpoint, and as many at the head
)

// W3 targets: storage per checkpoint after a one-line edit, a
// step 100× faster than LangGraph's SqliteSaver (8.5 steps/s), fork under
// 1 ms, a read at an old commit within 2× of one at the head.
const (
	W3TargetBytesPerCheckpoint = 16 << 10
	W3SqliteSaverStepsPerSec   = 8.5
	W3TargetStepUs             = 1e6 / (100 * W3SqliteSaverStepsPerSec)
	W3TargetForkUs             = 1000
	W3TargetOldReadRatio       = 2
)

// W3Options configure the W3 checkpoints workload.
type W3Options struct {
	System string // e.g. "satchel-sqlite"
	F      int    // files (default 1,000)
	S      int    // steps (default 500)
	Forks  int    // forks (default 100)
	Reads  int    // reads at old checkpoints, and as many at the head (default 1,000)
	Seed   uint32 // default 1
	// Progress, when set, is called after each operation.
	Progress func()
	// Size, when set, returns the bytes the database occupies; by default
	// the backend's DiskSize (SQLite: the file after a WAL checkpoint;
	// PostgreSQL: its tables' total relation size), else the bytes of the
	// commits stored (memory).
	Size func(ctx context.Context) (int64, error)
}

// W3Scale returns the options of W3 at scale f (the number of files) as
// `satchel bench --n` runs it: WORKLOADS.md's S = 500 steps, 100 forks and
// 1,000 reads, scaled down in proportion below f = 1,000 (S = f/2, f/10
// forks, f reads), so that a small run is short.
func W3Scale(f int) W3Options {
	return W3Options{
		F:     f,
		S:     min(W3DefaultS, max(10, f/2)),
		Forks: min(W3DefaultForks, max(5, f/10)),
		Reads: min(W3DefaultReads, max(20, f)),
	}
}

// W3Ops returns how many operations W3 runs at scale f (for progress
// bars).
func W3Ops(f int) int {
	o := W3Scale(f)
	return o.F + o.S + 2*o.Forks + 2*o.Reads
}

// StoreSize returns the bytes a store occupies: for SQLite the main file
// after a checkpoint that empties the write-ahead log into it; else the
// backend's DiskSize when it has one (PostgreSQL: the total relation size
// of satchel's tables); else the bytes of the packs, roots and metadata of
// every retained commit of scope (what the memory backend holds).
func StoreSize(ctx context.Context, st *satchel.Store, scope string) (int64, error) {
	b := backendof.Store(st)
	if d, ok := backend.As[backend.DiskSizer](b); ok {
		if f, ok := backend.As[*sqlite.Backend](b); ok {
			return sqliteSize(ctx, d, f.Path())
		}
		return d.DiskSize(ctx)
	}
	snap, err := b.GCSnapshot(ctx, scope, time.Time{})
	if err != nil {
		return 0, err
	}
	var n int64
	for _, c := range snap.Retained {
		p, err := b.Pack(ctx, c.ID)
		if err != nil {
			return 0, err
		}
		n += int64(len(p) + len(c.Root) + len(c.Meta))
	}
	return n, nil
}

// sqliteSize checkpoints the log of the SQLite database at path
// (DiskSize runs PRAGMA wal_checkpoint(TRUNCATE)) until the log is empty,
// and returns the size of the main file. A checkpoint can be held back for
// a moment (it reports busy, which DiskSize does not say), and a log not
// yet copied would make the main file look smaller than the database.
func sqliteSize(ctx context.Context, d backend.DiskSizer, path string) (int64, error) {
	for attempt := 0; ; attempt++ {
		if _, err := d.DiskSize(ctx); err != nil {
			return 0, err
		}
		wal, err := os.Stat(path + "-wal")
		if err == nil && wal.Size() > 0 {
			if attempt == 200 {
				return 0, fmt.Errorf("bench: the write-ahead log of %s stays at %d bytes after checkpoints", path, wal.Size())
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, err
		}
		main, err := os.Stat(path)
		if err != nil {
			return 0, err
		}
		return main.Size(), nil
	}
}

// w3Version is a file's content from a step on (step -1: the start).
type w3Version struct {
	step    int
	content string
}

// w3Line returns what step s writes in place of a line of file f: a line
// of the same width, unique in the workspace.
func w3Line(m *Mulberry32, s, k, f int) string {
	var b strings.Builder
	b.WriteString("step " + strconv.Itoa(s) + " edited line " + strconv.Itoa(k) + " of file " + strconv.Itoa(f) + ": ")
	fill(&b, m, b.Len(), W1LineWidth)
	return b.String()
}

// RunW3 runs the W3 workload of WORKLOADS.md in scope "bench" of st, which
// should be empty: F files of W1 are written, then S steps each replace one
// line of one file and take a checkpoint, then forks start new threads at
// random earlier checkpoints, each followed by one write, and reads at old
// checkpoints alternate with reads at the head. Every read is checked
// against the content the file had at that commit. It reports the phases
// write (the F files), edit (the steps) and read (old and head reads),
// each carrying W3's figures: step_us, bytes_per_checkpoint, fork_us,
// old_read_us and head_read_us (means, in µs).
func RunW3(ctx context.Context, st *satchel.Store, o W3Options, report func(Result)) error {
	if o.F <= 0 {
		o.F = W3DefaultF
	}
	if o.S <= 0 {
		o.S = W3DefaultS
	}
	if o.Forks <= 0 {
		o.Forks = W3DefaultForks
	}
	if o.Reads <= 0 {
		o.Reads = W3DefaultReads
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	tick := o.Progress
	if tick == nil {
		tick = func() {}
	}
	size := o.Size
	if size == nil {
		size = func(ctx context.Context) (int64, error) { return StoreSize(ctx, st, "bench") }
	}
	const scope = "bench"
	ws, err := st.Workspace(ctx, scope, "w3")
	if err != nil {
		return err
	}
	m := NewMulberry32(o.Seed*0x9E3779B1 + 0x3C6EF372) // W3's own stream: edits, forks, reads
	pick := func(n int) int { return int(m.Next() % uint32(n)) }

	// Setup: the first F files of W1.
	versions := make([][]w3Version, o.F)
	tw := newTimer(o.F)
	for i := 0; i < o.F; i++ {
		c := W1Content(o.Seed, i)
		versions[i] = []w3Version{{step: -1, content: c}}
		if err := tw.op(func() error { return ws.Write(ctx, W1Path(i), c) }); err != nil {
			return err
		}
		tick()
	}
	write := tw.result(o.System, "W3", "write")
	if files, err := ws.Glob(ctx, "notes/**"); err != nil || len(files) != o.F {
		return mismatch("W3", "write", "%d files exist, want %d (%v)", len(files), o.F, err)
	}

	// Steps: edit one line, checkpoint.
	before, err := size(ctx)
	if err != nil {
		return fmt.Errorf("bench W3: database size: %w", err)
	}
	seqs := make([]int64, o.S) // the checkpoint of each step
	edited := make([]int, o.S) // the file each step edited
	ts := newTimer(o.S)
	for s := 0; s < o.S; s++ {
		var f, k int
		var old, next string
		var lines []string
		ts.aside(func() {
			f = pick(o.F)
			k = 1 + pick(W1Lines)
			cur := versions[f][len(versions[f])-1].content
			lines = strings.SplitAfter(cur, "\n")
			old = lines[k-1]
			lines[k-1] = w3Line(m, s, k, f) + "\n"
			next = strings.Join(lines, "")
		})
		var replaced int
		err := ts.op(func() (err error) {
			// The edit and its checkpoint are one commit (WithCheckpoint).
			replaced, err = ws.StrReplace(ctx, W1Path(f), old, lines[k-1], false,
				satchel.WithCheckpoint("step-"+strconv.Itoa(s)))
			return err
		})
		if err != nil {
			return err
		}
		if replaced != 1 {
			return mismatch("W3", "edit", "step %d: %d occurrences replaced in %s, want 1", s, replaced, W1Path(f))
		}
		versions[f] = append(versions[f], w3Version{step: s, content: next})
		edited[s] = f
		tick()
	}
	// The phase ends with its last step: the history listed below to find
	// each step's checkpoint holds F + S commits, and timed with the steps
	// it made their time grow with F (at F = 100,000 on SQLite, 6 ms a
	// step, against 0.5 ms for the step alone).
	edit := ts.result(o.System, "W3", "edit")
	hist, err := ws.History(ctx, 0, 0)
	if err != nil {
		return err
	}
	for _, c := range hist {
		for _, name := range c.Checkpoints {
			if n, ok := strings.CutPrefix(name, "step-"); ok {
				if i, err := strconv.Atoi(n); err == nil && i < o.S {
					seqs[i] = c.Seq
				}
			}
		}
	}
	for i, seq := range seqs {
		if seq == 0 {
			return mismatch("W3", "edit", "step %d has no checkpoint", i)
		}
	}
	after, err := size(ctx)
	if err != nil {
		return fmt.Errorf("bench W3: database size: %w", err)
	}
	if h, err := ws.History(ctx, 0, 0); err != nil || len(h) != o.F+o.S {
		return mismatch("W3", "edit", "%d commits in the history, want %d (%v)", len(h), o.F+o.S, err)
	}
	contentAt := func(f, step int) string {
		vs := versions[f]
		for i := len(vs) - 1; i >= 0; i-- {
			if vs[i].step <= step {
				return vs[i].content
			}
		}
		return vs[0].content
	}

	// Forks from random earlier checkpoints, each followed by one write.
	var forkTotal time.Duration
	for k := 0; k < o.Forks; k++ {
		s := pick(o.S)
		name := "fork-" + strconv.Itoa(k)
		t0 := time.Now()
		fw, err := ws.Fork(ctx, "step-"+strconv.Itoa(s), name)
		forkTotal += time.Since(t0)
		if err != nil {
			return err
		}
		tick()
		p := "forks/" + name + ".md"
		if err := fw.Write(ctx, p, "written on "+name+"\n"); err != nil {
			return err
		}
		f := edited[s]
		if got, err := fw.Read(ctx, W1Path(f)); err != nil || got != contentAt(f, s) {
			return mismatch("W3", "edit", "fork %s of step %d: %s differs from the checkpoint's (%v)", name, s, W1Path(f), err)
		}
		if ok, err := fw.Exists(ctx, p); err != nil || !ok {
			return mismatch("W3", "edit", "fork %s: its write is missing (%v)", name, err)
		}
		tick()
	}
	if files, err := ws.Glob(ctx, "forks/*"); err != nil || len(files) != 0 {
		return mismatch("W3", "edit", "the forks' writes show in the main thread: %v (%v)", files, err)
	}

	// Reads at an old checkpoint, alternating with reads at the head.
	tr := newTimer(2 * o.Reads)
	var oldTotal, headTotal time.Duration
	for r := 0; r < o.Reads; r++ {
		s, f := pick(o.S), pick(o.F)
		var got string
		t0 := time.Now()
		err := tr.op(func() error {
			snap, err := ws.At(ctx, strconv.FormatInt(seqs[s], 10))
			if err != nil {
				return err
			}
			got, err = snap.Read(ctx, W1Path(f))
			return err
		})
		oldTotal += time.Since(t0)
		if err != nil {
			return err
		}
		if got != contentAt(f, s) {
			return mismatch("W3", "read", "%s at step %d differs from what it was", W1Path(f), s)
		}
		tick()
		f = pick(o.F)
		t0 = time.Now()
		err = tr.op(func() (err error) { got, err = ws.Read(ctx, W1Path(f)); return })
		headTotal += time.Since(t0)
		if err != nil {
			return err
		}
		if got != contentAt(f, o.S) {
			return mismatch("W3", "read", "%s at the head differs from the last write", W1Path(f))
		}
		tick()
	}
	read := tr.result(o.System, "W3", "read")

	figures := func(r Result) Result {
		r.BytesPerCheckpoint = float64(after-before) / float64(o.S)
		r.StepUs = us(time.Duration(edit.Seconds*1e9)) / float64(o.S)
		r.ForkUs = us(forkTotal) / float64(o.Forks)
		r.OldReadUs = us(oldTotal) / float64(o.Reads)
		r.HeadReadUs = us(headTotal) / float64(o.Reads)
		return r
	}
	report(figures(write))
	report(figures(edit))
	report(figures(read))
	return nil
}

// w3Targets holds W3's figures (from its edit line) against the targets.
func w3Targets(rs []Result) []Verdict {
	var out []Verdict
	for _, r := range rs {
		if r.Workload != "W3" || r.Phase != "edit" {
			continue
		}
		stepsPerSec := 1e6 / r.StepUs
		out = append(out,
			Verdict{r.System, "W3 bytes per checkpoint", fmt.Sprintf("%.0f B", r.BytesPerCheckpoint),
				fmt.Sprintf("< %d B", W3TargetBytesPerCheckpoint), r.BytesPerCheckpoint < W3TargetBytesPerCheckpoint},
			Verdict{r.System, "W3 step (edit + checkpoint)", fmt.Sprintf("%.0f µs, %.0f steps/s = %.0f× SqliteSaver", r.StepUs, stepsPerSec, stepsPerSec/W3SqliteSaverStepsPerSec),
				fmt.Sprintf("≥ 100× SqliteSaver (%.0f µs)", W3TargetStepUs), r.StepUs <= W3TargetStepUs},
			Verdict{r.System, "W3 fork", fmt.Sprintf("%.0f µs", r.ForkUs), fmt.Sprintf("< %d µs", W3TargetForkUs), r.ForkUs < W3TargetForkUs},
			Verdict{r.System, "W3 read at an old commit", fmt.Sprintf("%.0f µs vs %.0f µs at the head (%.2f×)", r.OldReadUs, r.HeadReadUs, r.OldReadUs/r.HeadReadUs),
				fmt.Sprintf("≤ %d× the head", W3TargetOldReadRatio), r.OldReadUs <= W3TargetOldReadRatio*r.HeadReadUs},
		)
	}
	return out
}

func init() {
	Register(Workload{
		Name:     "W3",
		About:    "checkpoints: F = N files, S steps of a one-line edit and a checkpoint, forks, reads at old commits",
		DefaultN: W3DefaultF,
		Ops:      W3Ops,
		Run: func(ctx context.Context, env Env, report func(Result)) error {
			n := env.N
			if n <= 0 {
				n = W3DefaultF
			}
			o := W3Scale(n)
			o.System, o.Seed, o.Progress = env.System, env.Seed, env.Progress
			return RunW3(ctx, env.Store, o, report)
		},
		Targets: w3Targets,
	})
}
