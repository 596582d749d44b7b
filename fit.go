package satchel

import (
	"context"

	"github.com/satchel-dev/satchel/internal/engine"
	"github.com/satchel-dev/satchel/internal/errs"
	"github.com/satchel-dev/satchel/internal/jsonsize"
)

// Fit counts files about to be written against a workspace's bounds
// (DESIGN §2.4) before their content is held, so that an import too
// large for the workspace is refused before it fills memory. It counts
// against the head when it was made; the commit that writes the files
// checks the bounds again, exactly, against the state it applies to.
type Fit struct {
	v      engine.View
	l      Limits
	files  int64
	bytes  int64
	counts map[string]int64 // path → the JSON bytes counted for it
}

// Fit starts counting writes against the workspace's head.
func (w *Workspace) Fit(ctx context.Context) (*Fit, error) {
	if w.rv != nil {
		rw, err := w.reading(ctx)
		if err != nil {
			return nil, err
		}
		return rw.Fit(ctx)
	}
	l, err := w.Limits(ctx)
	if err != nil {
		return nil, err
	}
	v, err := w.view(ctx)
	if err != nil {
		return nil, err
	}
	files, bytes, err := v.Totals(ctx)
	if err != nil {
		return nil, err
	}
	return &Fit{v: v, l: l, files: files, bytes: bytes, counts: map[string]int64{}}, nil
}

// Limits returns the bounds counted against.
func (f *Fit) Limits() Limits { return f.l }

// Add counts a file of size bytes written at path, replacing the file
// there (or the one counted for path before), whose path and content
// come to jsonBytes counted as JSON strings (EntryBytes). A file over the
// per-file limit, or one that would take the workspace past maxFiles or
// maxBytes, is refused with kind ErrLimitExceeded and not counted.
func (f *Fit) Add(ctx context.Context, path string, size, jsonBytes int64) error {
	return f.add(ctx, path, size, jsonBytes, "")
}

// AddAtLeast is Add for a file whose content is not read yet: it counts
// the least its content can come to (size bytes plus the quotes), and a
// refusal says the workspace would hold at least the figure it names.
func (f *Fit) AddAtLeast(ctx context.Context, path string, size int64) error {
	return f.add(ctx, path, size, int64(jsonsize.String(path))+size+2, "at least ")
}

func (f *Fit) add(ctx context.Context, path string, size, jsonBytes int64, atLeast string) error {
	if size > f.l.MaxFileBytes {
		return &errs.Error{Kind: errs.ErrLimitExceeded, Msg: errs.FileLimitMessage(path, "is", size, f.l.MaxFileBytes)}
	}
	files, bytes := f.files, f.bytes
	if old, ok := f.counts[path]; ok {
		files, bytes = files-1, bytes-old
	} else {
		ent, ok, err := f.v.Get(ctx, path)
		if err != nil {
			return err
		}
		if ok {
			files, bytes = files-1, bytes-ent.JSONBytes
		}
	}
	files, bytes = files+1, bytes+jsonBytes
	if files > f.l.MaxFiles {
		return &errs.Error{Kind: errs.ErrLimitExceeded, Msg: errs.LimitMessage("files", files, f.l.MaxFiles, false)}
	}
	if bytes > f.l.MaxBytes {
		return &errs.Error{Kind: errs.ErrLimitExceeded, Msg: errs.LimitMessage("bytes", bytes, f.l.MaxBytes, atLeast != "")}
	}
	f.files, f.bytes = files, bytes
	f.counts[path] = jsonBytes // the head's file at path is no longer counted
	return nil
}

// Counted returns the JSON bytes counted for path by Add (0: none).
func (f *Fit) Counted(path string) int64 { return f.counts[path] }

// EntryBytes returns what a file's path and content come to counted as
// JSON strings, the way the workspace's maxBytes counts them.
func EntryBytes(path, content string) int64 { return int64(jsonsize.Entry(path, content)) }
