package satchel

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/satchel-dev/satchel/internal/engine"
	"github.com/satchel-dev/satchel/internal/errs"
	"github.com/satchel-dev/satchel/internal/lines"
	"github.com/satchel-dev/satchel/internal/vpath"
)

// The read operations are written once, over engine.View, and serve the
// head of a Workspace, a Snapshot at any retained commit, and a Batch.

// bounds turns the variadic bounds of Read into lines.Bounds: none, a
// start, or a start and an end.
func bounds(b []int) (lines.Bounds, error) {
	switch len(b) {
	case 0:
		return lines.All(), nil
	case 1:
		return lines.From(b[0]), nil
	case 2:
		return lines.Range(b[0], b[1]), nil
	}
	return lines.Bounds{}, errs.New(errs.ErrInvalidRange, "read takes at most two bounds (start, end), got %d", len(b))
}

func readView(ctx context.Context, v engine.View, path string, numbered bool, b []int) (string, error) {
	return readViewSeen(ctx, v, path, numbered, b, nil)
}

// readViewSeen is readView that passes the file it read to seen (when
// not nil), as readWithSeen does.
func readViewSeen(ctx context.Context, v engine.View, path string, numbered bool, b []int, seen func(*engine.Entry, string)) (string, error) {
	lb, err := bounds(b)
	if err != nil {
		return "", err
	}
	r, err := readWithSeen(ctx, v, path, ReadOptions{Bounds: lb, Numbered: numbered}, seen)
	return r.Text, err
}

// Bounds are optional 1-based, inclusive line bounds: Start and End, each
// with a flag saying whether it was given (so an explicit 0 is refused
// with DESIGN's message rather than read as "unset").
type Bounds = lines.Bounds

// ReadOptions are the options of ReadWith.
type ReadOptions struct {
	// Bounds are optional 1-based inclusive line bounds.
	Bounds Bounds
	// Numbered prefixes each line with its number (read_numbered).
	Numbered bool
	// MaxChars caps the result in characters (0: no cap). A capped result
	// says where to continue.
	MaxChars int
	// StartChar skips the first StartChar characters of the first line
	// read (Bounds.Start, or line 1), to continue inside a line longer
	// than MaxChars. A line shorter than that reads as empty.
	StartChar int
	// Binary asks that binary content (IsBinary) not be read as text: the
	// result then has Binary, Type and Size set and the bytes in Data,
	// whatever the other options. Without it a read returns the bytes as
	// they are (line operations refuse them).
	Binary bool
}

// Lines returns read bounds from start (1-based) to end inclusive; end 0
// means to the last line.
func Lines(start, end int) Bounds {
	if end == 0 {
		return lines.From(start)
	}
	return lines.Range(start, end)
}

// ReadResult is the result of ReadWith.
type ReadResult struct {
	// Text is what the read returns (possibly capped).
	Text string `json:"text"`
	// Truncated is set when MaxChars cut the text.
	Truncated bool `json:"truncated,omitempty"`
	// NextLine is the first line not wholly returned when Truncated: read
	// again from it to continue.
	NextLine int `json:"next_line,omitempty"`
	// NextChar, when the cut is inside the first line read (one longer
	// than MaxChars), is how many of its characters were returned: read
	// again from NextLine with StartChar NextChar to continue.
	NextChar int `json:"next_char,omitempty"`
	// Notice explains a truncation to a person or a model.
	Notice string `json:"notice,omitempty"`
	// Binary is set when ReadOptions.Binary was and the file is binary:
	// Type is its sniffed type (FileType), Size its length, and Data its
	// bytes; Text is empty.
	Binary bool   `json:"binary,omitempty"`
	Type   string `json:"type,omitempty"`
	Size   int64  `json:"size,omitempty"`
	Data   string `json:"-"`
}

func readWith(ctx context.Context, v engine.View, path string, o ReadOptions) (ReadResult, error) {
	return readWithSeen(ctx, v, path, o, nil)
}

// readWithSeen is readWith that passes the file's entry and whole content
// to seen (when not nil) once they are read, whatever part of it the read
// returns: a read ledger records them (workspace_stale.go).
func readWithSeen(ctx context.Context, v engine.View, path string, o ReadOptions, seen func(*engine.Entry, string)) (ReadResult, error) {
	if err := vpath.Validate(path); err != nil {
		return ReadResult{}, err
	}
	ent, err := needFile(ctx, v, path)
	if err != nil {
		return ReadResult{}, err
	}
	content, err := v.Content(ctx, &ent)
	if err != nil {
		return ReadResult{}, err
	}
	if seen != nil {
		seen(&ent, content)
	}
	if o.Binary && IsBinary(content) {
		return ReadResult{Binary: true, Type: FileType(content), Size: int64(len(content)), Data: content}, nil
	}
	var text string
	if o.Numbered {
		text, err = lines.Numbered(path, content, o.Bounds)
	} else {
		text, err = lines.Slice(path, content, o.Bounds)
	}
	if err != nil {
		return ReadResult{}, err
	}
	text = skipChars(text, o.StartChar, o.Numbered)
	r := ReadResult{Text: text}
	if o.MaxChars > 0 {
		if out, cut := lines.Cap(text, o.MaxChars); cut {
			first := 1
			if o.Bounds.HasStart {
				first = o.Bounds.Start
			}
			next := first + lines.LineAt(text, len(out)) - 1
			r.Text, r.Truncated, r.NextLine = out, true, next
			// The characters of line next that out shows, after its
			// number when numbered, and after those skipped.
			shown := out[strings.LastIndexByte(out, '\n')+1:]
			if o.Numbered {
				if i := strings.Index(shown, "| "); i >= 0 {
					shown = shown[i+2:]
				} else {
					shown = ""
				}
			}
			if next == first {
				r.NextChar = o.StartChar
			}
			r.NextChar += utf8.RuneCountInString(shown)
			// Only a cut inside the first line read needs start_char: a
			// read from any later line makes progress without it.
			if next == first && r.NextChar > o.StartChar {
				r.Notice = fmt.Sprintf("[output truncated at %d characters; line %d is cut. Continue with start_line=%d, start_char=%d]", o.MaxChars, next, next, r.NextChar)
			} else {
				r.NextChar = 0
				r.Notice = fmt.Sprintf("[output truncated at %d characters; line %d is cut. Continue with start_line=%d]", o.MaxChars, next, next)
			}
		}
	}
	return r, nil
}

// skipChars drops the first n characters of text's first line (after its
// "N| " number when numbered); a shorter line is left empty.
func skipChars(text string, n int, numbered bool) string {
	if n <= 0 || text == "" {
		return text
	}
	from := 0
	if numbered {
		i := strings.Index(text, "| ")
		if i < 0 {
			return text
		}
		from = i + 2
	}
	end := strings.IndexByte(text[from:], '\n')
	if end < 0 {
		end = len(text)
	} else {
		end += from
	}
	line := text[from:end]
	if strings.HasSuffix(line, "\r") && end < len(text) {
		line = line[:len(line)-1]
	}
	k := 0
	for i := range line {
		if k == n {
			return text[:from] + text[from+i:]
		}
		k++
	}
	return text[:from] + text[from+len(line):]
}

func existsView(ctx context.Context, v engine.View, path string) (bool, error) {
	if err := vpath.Validate(path); err != nil {
		return false, err
	}
	_, ok, err := v.Get(ctx, path)
	return ok, err
}

// upper returns the smallest string greater than every string with prefix
// p ("" when p is empty: no upper bound).
func upper(p string) string {
	if p == "" {
		return ""
	}
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return ""
}

func globView(ctx context.Context, v engine.View, pattern string) ([]string, error) {
	g, err := vpath.Compile(pattern)
	if err != nil {
		return nil, err
	}
	if lit, ok := g.Literal(); ok {
		if _, found, err := v.Get(ctx, lit); err != nil || !found {
			return []string{}, err
		}
		return []string{lit}, nil
	}
	prefix := g.Prefix()
	out := []string{}
	err = v.ScanPaths(ctx, prefix, upper(prefix), func(path string) (bool, error) {
		if g.Match(path) {
			out = append(out, path)
		}
		return true, ctx.Err()
	})
	return out, err
}

// ListOptions are the options of List.
type ListOptions struct {
	// Accept, when set, filters the files before Limit counts them.
	Accept func(path string) bool
	// Limit bounds the number of results (0: no limit).
	Limit int
	// After, when set, starts the listing after this path (for paging:
	// pass the last path of the previous page).
	After string
}

func listView(ctx context.Context, v engine.View, under string, o ListOptions) ([]string, error) {
	dir, err := vpath.Dir(under)
	if err != nil {
		return nil, err
	}
	from := ""
	if dir != "" {
		from = dir + "/"
	}
	start := from
	if o.After != "" && o.After >= from {
		start = o.After + "\x00"
	}
	out := []string{}
	err = v.ScanPaths(ctx, start, upper(from), func(path string) (bool, error) {
		if o.Accept != nil && !o.Accept(path) {
			return true, nil
		}
		out = append(out, path)
		return o.Limit <= 0 || len(out) < o.Limit, ctx.Err()
	})
	return out, err
}

// Match is one line grep found.
type Match struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// GrepOptions are the options of Grep.
type GrepOptions struct {
	// Include filters files like ripgrep's --glob: a pattern without "/"
	// matches a file's name, one with "/" its path relative to under; a
	// leading "!" excludes the files the rest matches ("!*.md").
	Include string
	// Accept, when set, filters files before Limit counts their matches.
	Accept func(path string) bool
	// Limit bounds the matches returned (0: DefaultGrepLimit).
	Limit int
	// Timeout bounds the search (0: DefaultGrepTimeout).
	Timeout time.Duration
}

// Grep's bounds.
const (
	MaxRegexBytes      = 4096
	DefaultGrepLimit   = 1000
	MaxGrepLineChars   = 2000
	DefaultGrepTimeout = 10 * time.Second
)

// GrepResult is what Grep found.
type GrepResult struct {
	Matches []Match `json:"matches"`
	// Truncated is set when Limit stopped the search early.
	Truncated bool `json:"truncated,omitempty"`
	// SkippedBinary counts the binary files (IsBinary) the search skipped.
	SkippedBinary int `json:"skipped_binary,omitempty"`
	// Stopped, when set, says why the search stopped before its end (its
	// timeout or the context's deadline): Matches holds those found so far.
	Stopped string `json:"stopped,omitempty"`
}

// regexNameChars is how much of a refused regex its refusal quotes.
const regexNameChars = 100

// quoteRegex names a regex in a refusal: quoted, its first 100 characters
// and "..." when it is longer.
func quoteRegex(expr string) string {
	if utf8.RuneCountInString(expr) <= regexNameChars {
		return strconv.Quote(expr)
	}
	n := 0
	for i := range expr {
		if n == regexNameChars {
			return strconv.Quote(expr[:i]) + "..."
		}
		n++
	}
	return strconv.Quote(expr)
}

// regexReason is why regexp refused a pattern, with the part of the
// pattern it quotes cut as quoteRegex cuts it.
func regexReason(err error) string {
	var se *syntax.Error
	if errors.As(err, &se) {
		part := se.Expr
		if q := quoteRegex(part); utf8.RuneCountInString(part) > regexNameChars {
			part = q
		} else {
			part = "`" + part + "`"
		}
		return string(se.Code) + ": " + part
	}
	return strings.TrimPrefix(err.Error(), "error parsing regexp: ")
}

func grepView(ctx context.Context, v engine.View, expr, under string, o GrepOptions) (GrepResult, error) {
	res := GrepResult{Matches: []Match{}}
	if expr == "" {
		return res, errs.New(errs.ErrInvalidPattern, "invalid regex: must not be empty")
	}
	if len(expr) > MaxRegexBytes {
		return res, errs.New(errs.ErrInvalidPattern, "invalid regex: longer than %d bytes", MaxRegexBytes)
	}
	cost, err := lines.CheckRegexCost(expr)
	if err != nil {
		return res, err
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return res, errs.New(errs.ErrInvalidPattern, "invalid regex %s: %s", quoteRegex(expr), regexReason(err))
	}
	dir, err := vpath.Dir(under)
	if err != nil {
		return res, err
	}
	var include *vpath.Glob
	pattern, exclude := strings.CutPrefix(o.Include, "!")
	if exclude && pattern == "" {
		return res, errs.New(errs.ErrInvalidPattern, `invalid pattern "!": a "!" must be followed by the glob to exclude`)
	}
	if pattern != "" {
		if include, err = vpath.Compile(pattern); err != nil {
			return res, err
		}
	}
	limit := o.Limit
	if limit <= 0 {
		limit = DefaultGrepLimit
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultGrepTimeout
	}
	budget := &grepBudget{ctx: ctx, deadline: time.Now().Add(timeout), timeout: timeout, cost: cost}
	lit, _ := re.LiteralPrefix()
	from := ""
	if dir != "" {
		from = dir + "/"
	}
	// The files grep reads are those want accepts: the scan reads their
	// packs ahead when the backend can read many at once.
	var want func(string) bool
	if include != nil || o.Accept != nil {
		want = func(path string) bool {
			return (include == nil || vpath.IncludeMatch(include, dir, path) != exclude) && (o.Accept == nil || o.Accept(path))
		}
	}
	err = v.ScanFiles(ctx, from, upper(from), want, func(ent *engine.Entry) (bool, error) {
		if !budget.spend(1) {
			return false, nil
		}
		content, err := v.Content(ctx, ent)
		if err != nil {
			return false, err
		}
		if IsBinary(content) {
			res.SkippedBinary++
			return true, nil
		}
		more := grepContent(re, lit, ent.Path, content, budget, func(m Match) bool {
			if len(res.Matches) == limit {
				res.Truncated = true
				return false
			}
			res.Matches = append(res.Matches, m)
			return true
		})
		return more, nil
	})
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		budget.check() // the scan saw the context end first
		err = nil
	}
	if err == nil {
		err = budget.err
	}
	res.Stopped = budget.stopped
	return res, err
}

// grepContent reports the matching lines of content. With a literal
// prefix, only lines containing it are tried (a fast substring search
// skips the rest). It returns false when the search must end: the limit
// was reached, or the budget stopped it.
func grepContent(re *regexp.Regexp, lit, path, content string, budget *grepBudget, emit func(Match) bool) bool {
	line := 1
	pos := 0 // start of the current line
	for pos < len(content) {
		if lit != "" {
			i := strings.Index(content[pos:], lit)
			if i < 0 {
				return budget.spend(0)
			}
			// Advance to the line holding the literal.
			skipped := content[pos : pos+i]
			if k := strings.LastIndexByte(skipped, '\n'); k >= 0 {
				line += strings.Count(skipped, "\n")
				pos += k + 1
			}
		}
		end := strings.IndexByte(content[pos:], '\n')
		var text string
		next := len(content)
		if end >= 0 {
			text = content[pos : pos+end]
			next = pos + end + 1
			text = strings.TrimSuffix(text, "\r")
		} else {
			text = content[pos:]
		}
		matched, more := budget.matchLine(re.MatchString, re.MatchReader, text)
		if !more {
			return false
		}
		if matched {
			if len(text) > MaxGrepLineChars {
				text, _ = lines.Cap(text, MaxGrepLineChars)
			}
			if !emit(Match{Path: path, Line: line, Text: text}) {
				return false
			}
		}
		pos = next
		line++
	}
	return true
}

// FileInfo is what Stat reports.
type FileInfo struct {
	Path    string    `json:"path"`
	Size    int64     `json:"size"`
	Lines   int64     `json:"lines"`
	ModTime time.Time `json:"modified"`
	// Hash is the SHA-256 of the content, in hex: what IfHash expects.
	Hash string `json:"hash"`
	// Type is the content's sniffed type (FileType): TypeText for text.
	Type string `json:"type"`
}

func statView(ctx context.Context, v engine.View, path string) (FileInfo, error) {
	if err := vpath.Validate(path); err != nil {
		return FileInfo{}, err
	}
	ent, err := needFile(ctx, v, path)
	if err != nil {
		return FileInfo{}, err
	}
	content, err := v.Content(ctx, &ent)
	if err != nil {
		return FileInfo{}, err
	}
	return FileInfo{Path: path, Size: ent.Size, Lines: ent.Lines, ModTime: time.UnixMicro(ent.ModTime).UTC(), Hash: Hash(content), Type: FileType(content)}, nil
}

// Reader is the read side of a workspace: its head (Workspace) or any
// retained commit (Snapshot).
type Reader interface {
	Read(ctx context.Context, path string, bounds ...int) (string, error)
	ReadNumbered(ctx context.Context, path string, bounds ...int) (string, error)
	ReadWith(ctx context.Context, path string, o ReadOptions) (ReadResult, error)
	Glob(ctx context.Context, pattern string) ([]string, error)
	List(ctx context.Context, under string, o ListOptions) ([]string, error)
	Grep(ctx context.Context, regex, under string, o GrepOptions) (GrepResult, error)
	Exists(ctx context.Context, path string) (bool, error)
	Stat(ctx context.Context, path string) (FileInfo, error)
}

var (
	_ Reader = (*Workspace)(nil)
	_ Reader = (*Snapshot)(nil)
)

// Read returns the file's content, or with bounds (start, or start and
// end: 1-based, inclusive) those lines joined by "\n" (DESIGN §2.3).
func (w *Workspace) Read(ctx context.Context, path string, bounds ...int) (string, error) {
	if w.rv != nil {
		rw, err := w.reading(ctx)
		if err != nil {
			return "", err
		}
		return rw.Read(ctx, path, bounds...)
	}
	v, err := w.view(ctx)
	if err != nil {
		return "", err
	}
	out, err := readViewSeen(ctx, v, path, false, bounds, w.seen(path))
	if err != nil {
		err = w.readSpill(ctx, path, err, func(sw *Workspace) (serr error) { out, serr = sw.Read(ctx, path, bounds...); return })
	}
	return out, err
}

// ReadNumbered is Read with each line prefixed by its number,
// right-aligned to the width of the last number: " 9| ..." "10| ...".
func (w *Workspace) ReadNumbered(ctx context.Context, path string, bounds ...int) (string, error) {
	if w.rv != nil {
		rw, err := w.reading(ctx)
		if err != nil {
			return "", err
		}
		return rw.ReadNumbered(ctx, path, bounds...)
	}
	v, err := w.view(ctx)
	if err != nil {
		return "", err
	}
	out, err := readViewSeen(ctx, v, path, true, bounds, w.seen(path))
	if err != nil {
		err = w.readSpill(ctx, path, err, func(sw *Workspace) (serr error) { out, serr = sw.ReadNumbered(ctx, path, bounds...); return })
	}
	return out, err
}

// ReadWith reads with every option: bounds, numbering and a character cap.
func (w *Workspace) ReadWith(ctx context.Context, path string, o ReadOptions) (ReadResult, error) {
	if w.rv != nil {
		rw, err := w.reading(ctx)
		if err != nil {
			return ReadResult{}, err
		}
		return rw.ReadWith(ctx, path, o)
	}
	v, err := w.view(ctx)
	if err != nil {
		return ReadResult{}, err
	}
	out, err := readWithSeen(ctx, v, path, o, w.seen(path))
	if err != nil {
		err = w.readSpill(ctx, path, err, func(sw *Workspace) (serr error) { out, serr = sw.ReadWith(ctx, path, o); return })
	}
	return out, err
}

// Glob returns the files matching pattern, sorted: `*` matches within one
// segment, `**` (a whole segment) zero or more segments.
func (w *Workspace) Glob(ctx context.Context, pattern string) ([]string, error) {
	if w.rv != nil {
		rw, err := w.reading(ctx)
		if err != nil {
			return nil, err
		}
		return rw.Glob(ctx, pattern)
	}
	v, err := w.view(ctx)
	if err != nil {
		return nil, err
	}
	return globView(ctx, v, pattern)
}

// List returns the files under a directory ("" for all), in path order.
func (w *Workspace) List(ctx context.Context, under string, o ListOptions) ([]string, error) {
	if w.rv != nil {
		rw, err := w.reading(ctx)
		if err != nil {
			return nil, err
		}
		return rw.List(ctx, under, o)
	}
	v, err := w.view(ctx)
	if err != nil {
		return nil, err
	}
	return listView(ctx, v, under, o)
}

// Grep returns the lines matching regex (Go's linear-time RE2 syntax) in
// the files under a directory, in path then line order.
func (w *Workspace) Grep(ctx context.Context, regex, under string, o GrepOptions) (GrepResult, error) {
	if w.rv != nil {
		rw, err := w.reading(ctx)
		if err != nil {
			return GrepResult{}, err
		}
		return rw.Grep(ctx, regex, under, o)
	}
	v, err := w.view(ctx)
	if err != nil {
		return GrepResult{}, err
	}
	return grepView(ctx, v, regex, under, o)
}

// Exists reports whether path is a file (false for a directory).
func (w *Workspace) Exists(ctx context.Context, path string) (bool, error) {
	if w.rv != nil {
		rw, err := w.reading(ctx)
		if err != nil {
			return false, err
		}
		return rw.Exists(ctx, path)
	}
	v, err := w.view(ctx)
	if err != nil {
		return false, err
	}
	return existsView(ctx, v, path)
}

// Stat returns a file's size, lines, modification time and content hash.
func (w *Workspace) Stat(ctx context.Context, path string) (FileInfo, error) {
	if w.rv != nil {
		rw, err := w.reading(ctx)
		if err != nil {
			return FileInfo{}, err
		}
		return rw.Stat(ctx, path)
	}
	v, err := w.view(ctx)
	if err != nil {
		return FileInfo{}, err
	}
	return statView(ctx, v, path)
}

func (w *Workspace) view(ctx context.Context) (engine.View, error) {
	snap, _, err := w.head(ctx)
	return w.filter(snap), err
}
