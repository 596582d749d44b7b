package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel/backend"
)

// packSwap serves one pack's bytes in place of what is stored.
type packSwap struct {
	backend.Backend
	id   int64
	data string
}

func (b packSwap) Pack(ctx context.Context, id int64) (string, error) {
	if id == b.id {
		return b.data, nil
	}
	return b.Backend.Pack(ctx, id)
}

// rewritePack returns pack data with object idx replaced by obj.
func rewritePack(t *testing.T, id int64, data string, idx uint32, obj string) string {
	t.Helper()
	v, err := parsePack(id, data)
	if err != nil {
		t.Fatal(err)
	}
	v.objs[idx] = obj
	b := []byte{'P', 1}
	b = binary.AppendUvarint(b, uint64(len(v.objs)))
	for i, o := range v.objs {
		b = append(b, v.kinds[i])
		b = binary.AppendUvarint(b, uint64(len(o)))
	}
	for _, o := range v.objs {
		b = append(b, o...)
	}
	return string(b)
}

// TestCheckerFaults: a checker over sound storage finds nothing; over a
// root whose first child's totals are off, or a file whose size is off,
// it names the object and the fault.
func TestCheckerFaults(t *testing.T) {
	ctx := context.Background()
	e, th := newThread(t)
	files := map[string]string{}
	for i := range 200 {
		files[fmt.Sprintf("notes/d%02d/file-%04d.md", i%10, i)] = strings.Repeat("x", i)
	}
	c := put(t, e, th, files)
	root, err := decodeRoot(c.Root, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	n, err := e.node(ctx, root)
	if err != nil || n.leaf {
		t.Fatalf("root: %v, leaf %v: want an internal node", err, n != nil && n.leaf)
	}
	data, err := e.b.Pack(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}

	if faults, err := NewChecker(New(e.b, Options{})).Commit(ctx, c); err != nil || len(faults) != 0 {
		t.Fatalf("sound storage: %v, %v", faults, err)
	}

	// The root's first child counts one file too many.
	enc := binary.AppendUvarint(nil, uint64(n.count()))
	for i := range n.count() {
		ch := n.child(i)
		if i == 0 {
			ch.files++
		}
		enc = appendChild(enc, &ch)
	}
	bad := packSwap{Backend: e.b, id: c.ID, data: rewritePack(t, c.ID, data, root.Idx, string(enc))}
	faults, err := NewChecker(New(bad, Options{})).Commit(ctx, c)
	want := fmt.Sprintf("counts %d files", n.child(0).files+1)
	if err != nil || len(faults) != 1 || faults[0].Object != "node "+root.String() || !strings.Contains(faults[0].Problem, want) {
		t.Errorf("wrong totals: %+v, %v; want one fault of node %s: %s", faults, err, root, want)
	}

	// A file whose entry says it is a byte longer than its chunk.
	leafRef := n.child(0).ref
	leaf, err := e.node(ctx, leafRef)
	if err != nil || !leaf.leaf {
		t.Fatalf("first child: %v", err)
	}
	ent := leaf.entry(1, nil)
	enc = binary.AppendUvarint(nil, uint64(leaf.count()))
	for i := range leaf.count() {
		en := leaf.entry(i, nil)
		if i == 1 {
			en.Size++
		}
		enc = appendEntry(enc, &en)
	}
	bad = packSwap{Backend: e.b, id: leafRef.Pack, data: rewritePack(t, c.ID, data, leafRef.Idx, string(enc))}
	faults, err = NewChecker(New(bad, Options{})).Commit(ctx, c)
	want = fmt.Sprintf("is %d bytes, its chunks hold %d", ent.Size+1, ent.Size)
	if err != nil || len(faults) != 1 || faults[0].Object != "file "+ent.Path || faults[0].Problem != want {
		t.Errorf("wrong size: %+v, %v; want one fault of file %s: %s", faults, err, ent.Path, want)
	}

	// A file whose entry miscounts its lines.
	enc = binary.AppendUvarint(nil, uint64(leaf.count()))
	for i := range leaf.count() {
		en := leaf.entry(i, nil)
		if i == 1 {
			en.Lines += 2
		}
		enc = appendEntry(enc, &en)
	}
	bad = packSwap{Backend: e.b, id: leafRef.Pack, data: rewritePack(t, c.ID, data, leafRef.Idx, string(enc))}
	faults, err = NewChecker(New(bad, Options{})).Commit(ctx, c)
	want = fmt.Sprintf("counts %d lines (final newline false), its content has %d (false)", ent.Lines+2, ent.Lines)
	if err != nil || len(faults) != 1 || faults[0].Object != "file "+ent.Path || faults[0].Problem != want {
		t.Errorf("wrong lines: %+v, %v; want one fault of file %s: %s", faults, err, ent.Path, want)
	}

	// A chunk that is a tree node.
	enc = binary.AppendUvarint(nil, uint64(leaf.count()))
	for i := range leaf.count() {
		en := leaf.entry(i, nil)
		if i == 1 {
			en.Chunks = []Chunk{{Ref: leafRef, Len: en.Size}}
		}
		enc = appendEntry(enc, &en)
	}
	bad = packSwap{Backend: e.b, id: leafRef.Pack, data: rewritePack(t, c.ID, data, leafRef.Idx, string(enc))}
	faults, err = NewChecker(New(bad, Options{})).Commit(ctx, c)
	if err != nil || len(faults) == 0 || !strings.HasPrefix(faults[0].Object, "file "+ent.Path+", chunk") || !strings.Contains(faults[0].Problem, "is not a chunk") {
		t.Errorf("a node as a chunk: %+v, %v", faults, err)
	}
}
