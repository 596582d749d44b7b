package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
)

// docFlags are the flags every doc command shares.
type docFlags struct {
	dir            string
	includeExpired bool
}

func newDocCmd(a *app) *cobra.Command {
	f := &docFlags{}
	cmd := newGroupCmd("doc", "Read and change the documents of collections",
		`The typed collections of a project directory (--dir, default .): each
stores/<name>.json defines a store (see "satchel schema store"), and its
documents live in the database, per scope (--scope), or in one collection
for every scope when the store is shared.

These commands act as an operator: they may write shared stores, and
remove from a store without "deletable" when told --force. Documents are
validated against the store's schema, every violation reported with its
field path. Expired documents are hidden unless --include-expired is given;
"doc sweep" deletes them.

Plain output: a document as JSON (get), one document a line (query, list),
and a short line for the others; --json prints one JSON value.`,
		`  satchel doc set notes '{"company_id": "acme", "topic": "pricing", "summary": "Per seat.", "confidence": 0.7, "status": "draft", "updated_at": "2026-12-01T09:00:00Z", "tags": ["pricing"]}'
  satchel doc get notes acme:pricing --history
  satchel doc query notes --where "status = 'draft' AND confidence >= 0.5" --sort -updated_at
  satchel doc import notes notes.jsonl
  satchel doc check`)
	cmd.GroupID = groupCollections
	cmd.PersistentFlags().StringVar(&f.dir, "dir", ".", "project `DIR` with stores/ and agents/")
	cmd.AddCommand(
		newDocGetCmd(a, f),
		newDocSetCmd(a, f),
		newDocQueryCmd(a, f),
		newDocListCmd(a, f),
		newDocRmCmd(a, f),
		newDocImportCmd(a, f),
		newDocSweepCmd(a),
		newDocCheckCmd(a, f),
	)
	return cmd
}

// collection opens a store of the project in --scope, as an operator.
func (a *app) collection(ctx context.Context, f *docFlags, store string, opts ...satchel.CollectionOption) (*satchel.Collection, error) {
	p, err := satchel.LoadProject(f.dir)
	if err != nil {
		return nil, err
	}
	s, err := a.open(ctx)
	if err != nil {
		return nil, err
	}
	if f.includeExpired {
		opts = append(opts, satchel.IncludeExpired())
	}
	opts = append(opts, satchel.CollectionActor(a.actor()), satchel.CallerThread(a.thread))
	return s.Collection(ctx, p, a.scope, store, opts...)
}

// docHistory is what `doc get --history` prints.
type docHistory struct {
	Document json.RawMessage `json:"document"`
	History  []docVersion    `json:"history"`
}

type docVersion struct {
	Version  int64           `json:"version"`
	Document json.RawMessage `json:"document"`
}

func newDocGetCmd(a *app, f *docFlags) *cobra.Command {
	var history bool
	cmd := &cobra.Command{
		Use:   "get STORE KEY",
		Short: "Print a document",
		Long: `Print the document of STORE with KEY, as JSON. A missing (or expired)
document exits 1 with "document not found: KEY".

With --history, {"document": ..., "history": [{"version": N, "document":
...}, ...]}: the previous versions, newest first, as many as the store's
history.versions keeps.`,
		Example: `  satchel doc get notes acme:pricing
  satchel doc get notes acme:pricing --history --json`,
		Args: exactArgs("STORE", "KEY"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			c, err := a.collection(ctx, f, args[0])
			if err != nil {
				return err
			}
			d, err := c.Get(ctx, args[1], history)
			if err != nil {
				return err
			}
			if why := c.Misfit(d); why != nil {
				a.notice("%s does not fit the store's definition: %s", d.Key, strings.Join(why, "; "))
			}
			var v any = d.JSON
			if history {
				h := docHistory{Document: d.JSON, History: make([]docVersion, len(d.History))}
				for i, o := range d.History {
					h.History[i] = docVersion{o.Version, o.JSON}
				}
				v = h
			}
			return a.emit(v, func(w io.Writer) error { return printIndented(w, v) })
		},
	}
	cmd.Flags().BoolVar(&history, "history", false, "also print the previous versions, newest first")
	cmd.Flags().BoolVar(&f.includeExpired, "include-expired", false, "show the document even if it has expired")
	return cmd
}

// printIndented writes v as indented JSON, for a person.
func printIndented(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// docSetResult is what `doc set --json` prints.
type docSetResult struct {
	Key     string `json:"key"`
	Version int64  `json:"version"`
}

func newDocSetCmd(a *app, f *docFlags) *cobra.Command {
	var kf *keyFlag
	cmd := &cobra.Command{
		Use:   "set STORE [JSON]",
		Short: "Create or replace a document",
		Long: `Validate JSON (or standard input when it is omitted), one document, against
the schema of STORE and store it: a new document, or a new version of the
one with the same key, whose previous version moves into its history. The
key comes from the store's key template. Every violation is reported, with
its field path, and nothing is written.

Prints the key and the new version; with --json, {"key": ..., "version": N}.`,
		Example: `  satchel doc set notes '{"company_id": "acme", "topic": "pricing", "summary": "Per seat.", "confidence": 0.7, "status": "draft", "updated_at": "2026-12-01T09:00:00Z", "tags": ["pricing"]}'
  satchel doc set notes < note.json`,
		Args: argsBetween([]string{"STORE"}, "JSON"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			doc, err := a.input(args, 1, maxImportLine, "the document limit")
			if err != nil {
				return err
			}
			c, err := a.collection(ctx, f, args[0])
			if err != nil {
				return err
			}
			key, version, err := c.Set(ctx, json.RawMessage(doc), kf.opts()...)
			if err != nil {
				return err
			}
			return a.emit(docSetResult{key, version}, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "%s version %d\n", key, version)
				return err
			})
		},
	}
	kf = addKeyFlag(cmd)
	return cmd
}

// docPageResult is what `doc query --json` and `doc list --json` print.
type docPageResult struct {
	Documents  []json.RawMessage `json:"documents"`
	NextCursor *string           `json:"next_cursor"`
}

// emitPage prints a page: one document a line, and the cursor of the next
// page on standard error; with --json, {"documents": [...],
// "next_cursor": ...}.
func (a *app) emitPage(c *satchel.Collection, pg satchel.DocumentPage) error {
	r := docPageResult{Documents: make([]json.RawMessage, len(pg.Documents))}
	lines := make([]string, len(pg.Documents))
	misfits := 0
	for i, d := range pg.Documents {
		r.Documents[i] = d.JSON
		lines[i] = string(d.JSON)
		if c.Misfit(d) != nil {
			misfits++
		}
	}
	if misfits > 0 {
		what := fmt.Sprintf("%d documents of this page do not fit", misfits)
		if misfits == 1 {
			what = "1 document of this page does not fit"
		}
		defer a.notice("%s the store's definition (satchel doc check says why)", what)
	}
	if pg.NextCursor != "" {
		r.NextCursor = &pg.NextCursor
	}
	if err := a.emit(r, linesOfDocs(lines)); err != nil {
		return err
	}
	if pg.NextCursor != "" && !a.json {
		a.notice("more documents: --cursor %s", pg.NextCursor)
	}
	return nil
}

// linesOfDocs writes each document on its own line.
func linesOfDocs(docs []string) func(w io.Writer) error { return lines(docs) }

// pageFlags are the flags of query and list.
type pageFlags struct {
	where, sort, cursor string
	limit               int
}

func (p *pageFlags) add(cmd *cobra.Command) {
	cmd.Flags().IntVar(&p.limit, "limit", 20, "documents per page, 1 to 100")
	cmd.Flags().StringVar(&p.cursor, "cursor", "", "continue after the page that printed `C`")
}

func newDocQueryCmd(a *app, f *docFlags) *cobra.Command {
	var p pageFlags
	cmd := &cobra.Command{
		Use:   "query STORE --where EXPR",
		Short: "Find documents",
		Long: `Print the documents of STORE that match --where, one a line, in the order of
--sort (a field, -field for descending; default the key, which also breaks
ties), at most --limit (default 20, at most 100). When more follow, the
cursor of the next page is printed on standard error: pass it as --cursor
with the same --where and --sort.

--where is conditions "field op value" joined by AND: =, != and IN
['a', 'b'] on any field, <, <=, >, >= on numbers and datetimes; values are
'single-quoted' strings ('' for a quote), numbers, true, false and null;
a datetime compares as a quoted RFC 3339 string; a field inside an object
is written with a dot. field = null matches null or missing fields, and
field != v matches them too. An empty --where matches every document.

With --json, {"documents": [...], "next_cursor": C or null}.`,
		Example: `  satchel doc query notes --where "company_id = 'acme'"
  satchel doc query notes --where "topic IN ['pricing', 'team'] AND confidence > 0.5" --sort -confidence --limit 5
  satchel doc query notes --where "updated_at >= '2026-01-01T00:00:00Z'" --cursor eyJ...`,
		Args: exactArgs("STORE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if err := checkLimit(cmd, p.limit); err != nil {
				return err
			}
			c, err := a.collection(ctx, f, args[0])
			if err != nil {
				return err
			}
			pg, err := c.Query(ctx, satchel.QueryRequest{Where: p.where, Sort: p.sort, Limit: p.limit, Cursor: p.cursor})
			if err != nil {
				return err
			}
			return a.emitPage(c, pg)
		},
	}
	cmd.Flags().StringVar(&p.where, "where", "", "conditions joined by AND, such as \"status = 'done' AND n > 2\"")
	cmd.Flags().StringVar(&p.sort, "sort", "", "sort by `FIELD`, -FIELD for descending (default the key)")
	p.add(cmd)
	cmd.Flags().BoolVar(&f.includeExpired, "include-expired", false, "also show expired documents")
	return cmd
}

// checkLimit refuses a --limit out of range in the CLI's words (the API
// would say "limit", and reads 0 as the default).
func checkLimit(cmd *cobra.Command, limit int) error {
	if cmd.Flags().Changed("limit") && (limit < 1 || limit > 100) {
		return refuse("--limit must be between 1 and 100, was %d", limit)
	}
	return nil
}

func newDocListCmd(a *app, f *docFlags) *cobra.Command {
	var p pageFlags
	cmd := &cobra.Command{
		Use:   "list STORE",
		Short: "List documents in key order",
		Long: `Print the documents of STORE in key order, one a line, at most --limit
(default 20, at most 100). When more follow, the cursor of the next page is
printed on standard error: pass it as --cursor.

With --json, {"documents": [...], "next_cursor": C or null}.`,
		Example: `  satchel doc list notes
  satchel doc list notes --limit 100 --json`,
		Args: exactArgs("STORE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if err := checkLimit(cmd, p.limit); err != nil {
				return err
			}
			c, err := a.collection(ctx, f, args[0])
			if err != nil {
				return err
			}
			pg, err := c.List(ctx, p.limit, p.cursor)
			if err != nil {
				return err
			}
			return a.emitPage(c, pg)
		},
	}
	p.add(cmd)
	cmd.Flags().BoolVar(&f.includeExpired, "include-expired", false, "also show expired documents")
	return cmd
}

// docRmResult is what `doc rm --json` prints.
type docRmResult struct {
	Removed bool `json:"removed"`
}

func newDocRmCmd(a *app, f *docFlags) *cobra.Command {
	var kf *keyFlag
	var force bool
	cmd := &cobra.Command{
		Use:   "rm STORE KEY",
		Short: "Remove a document",
		Long: `Remove the document of STORE with KEY, and its history. A store without
"deletable": true refuses it, unless --force says an operator means it:
store "x" is not deletable (--force removes it anyway). Removing a
document that does not exist is not an error.

Prints "removed KEY" or "no document KEY"; with --json, {"removed": true or
false}.`,
		Example: `  satchel doc rm notes acme:pricing
  satchel doc rm NOT-DELETABLE-STORE KEY --force`,
		Args: exactArgs("STORE", "KEY"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var opts []satchel.CollectionOption
			if force {
				opts = append(opts, satchel.Force())
			}
			c, err := a.collection(ctx, f, args[0], opts...)
			if err != nil {
				return err
			}
			ok, err := c.Remove(ctx, args[1], kf.opts()...)
			var se *satchel.Error
			if errors.As(err, &se) && errors.Is(err, satchel.ErrAccessDenied) && strings.HasSuffix(se.Msg, " is not deletable") {
				return &satchel.Error{Kind: se.Kind, Msg: se.Msg + " (--force removes it anyway)"}
			}
			if err != nil {
				return err
			}
			return a.emit(docRmResult{ok}, func(w io.Writer) error {
				what := "removed"
				if !ok {
					what = "no document"
				}
				_, err := fmt.Fprintf(w, "%s %s\n", what, args[1])
				return err
			})
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "remove even from a store that is not deletable")
	kf = addKeyFlag(cmd)
	return cmd
}

// docSweepResult is what `doc sweep --json` prints.
type docSweepResult struct {
	Swept int64 `json:"swept"`
}

func newDocSweepCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "sweep",
		Short: "Delete expired documents",
		Long: `Delete every expired document of every store and scope of the database,
with its history. Expired documents are already hidden from agents; the
sweep reclaims their space (satchel serve also sweeps, periodically).

Prints how many were deleted; with --json, {"swept": N}.`,
		Example: `  satchel doc sweep`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := a.open(ctx)
			if err != nil {
				return err
			}
			n, err := s.SweepDocuments(ctx)
			if err != nil {
				return err
			}
			return a.emit(docSweepResult{n}, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "swept %d expired documents\n", n)
				return err
			})
		},
	}
}

func newDocCheckCmd(a *app, f *docFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "check [STORE...]",
		Short: "List the documents that no longer fit their store's definition",
		Long: `Check every stored document of the project's stores (of the STOREs
named; of --scope only, when given), expired ones included, against its
store's current definition in stores/*.json. A document set before the
definition changed (a required field added, a type changed, a field
removed) is still read as it was stored, and the read tools say it does
not fit; this lists them, one a line (STORE (scope S) KEY: why), then a
summary, and exits 1 if there is any. Setting a document again with the
current fields (doc set) makes it fit; see "Changing a store" in
docs/collections.md.

With --json, {"documents": N, "misfits": [{"store", "scope", "key",
"problems": [...]}]}.`,
		Example: `  satchel doc check
  satchel doc check notes --scope acme --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			p, err := satchel.LoadProject(f.dir)
			if err != nil {
				return err
			}
			s, err := a.open(ctx)
			if err != nil {
				return err
			}
			scope := ""
			if a.root != nil && a.root.PersistentFlags().Changed("scope") {
				scope = a.scope
			}
			rep, err := s.Misfits(ctx, p, scope, args...)
			if err != nil {
				return err
			}
			rep.Misfits = nonEmpty(rep.Misfits)
			if err := a.emit(rep, func(w io.Writer) error {
				var b strings.Builder
				for _, m := range rep.Misfits {
					b.WriteString(m.String())
					b.WriteByte('\n')
				}
				fmt.Fprintf(&b, "checked %s: %s\n", nouns(rep.Documents, "document", "documents"), misfitSummary(len(rep.Misfits)))
				_, err := io.WriteString(w, b.String())
				return err
			}); err != nil {
				return err
			}
			if n := len(rep.Misfits); n > 0 {
				return fmt.Errorf("doc check: %s", misfitSummary(n))
			}
			return nil
		},
	}
}

func misfitSummary(n int) string {
	switch n {
	case 0:
		return "every one fits its store's definition"
	case 1:
		return "1 does not fit its store's definition"
	}
	return fmt.Sprintf("%d do not fit their store's definition", n)
}

// nouns is "1 document", "2 documents".
func nouns(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// docImportResult is what `doc import --json` prints.
type docImportResult struct {
	Imported int              `json:"imported"`
	Refused  []docImportError `json:"refused"`
}

type docImportError struct {
	Line  int    `json:"line"`
	Error string `json:"error"`
}

// maxImportLine bounds one line of an import file.
const maxImportLine = 64 << 20

func newDocImportCmd(a *app, f *docFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "import STORE FILE",
		Short: "Set the documents of a JSON Lines file",
		Long: `Set every document of FILE (JSON Lines: one document a line; blank lines
are skipped; - reads standard input) in STORE, each validated as doc set
does. A bad line does not stop the import: the good ones are stored, and
the bad ones are reported by line number, after which the command exits 1.
A progress bar is drawn on standard error when it is a terminal.

Prints how many were imported; with --json, {"imported": N, "refused":
[{"line": N, "error": ...}]}.`,
		Example: `  satchel doc import notes notes.jsonl
  jq -c '.[]' notes.json | satchel doc import notes -`,
		Args: exactArgs("STORE", "FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			c, err := a.collection(ctx, f, args[0])
			if err != nil {
				return err
			}
			var in io.Reader = a.stdin
			total := 0
			if args[1] != "-" {
				file, err := os.Open(args[1])
				if err != nil {
					return refuse("cannot read %s: %v", args[1], unwrapPathError(err))
				}
				defer file.Close()
				if fi, err := file.Stat(); err == nil {
					total = int(fi.Size())
				}
				in = file
			}
			var done atomic.Int64
			stop := func() {}
			if total > 0 {
				stop = a.progress("import "+args[0], total, &done)
			}
			r := docImportResult{Refused: []docImportError{}}
			sc := bufio.NewScanner(in)
			sc.Buffer(make([]byte, 0, 64<<10), maxImportLine)
			line := 0
			for sc.Scan() {
				line++
				b := sc.Bytes()
				done.Add(int64(len(b)) + 1)
				if len(bytes.TrimSpace(b)) == 0 {
					continue
				}
				if _, _, err := c.Set(ctx, json.RawMessage(b)); err != nil {
					if ctx.Err() != nil {
						stop()
						return ctx.Err()
					}
					r.Refused = append(r.Refused, docImportError{line, err.Error()})
					continue
				}
				r.Imported++
			}
			stop()
			if err := sc.Err(); err != nil {
				if errors.Is(err, bufio.ErrTooLong) {
					return &satchel.Error{Kind: satchel.ErrLimitExceeded, Msg: fmt.Sprintf(
						"limit exceeded: line %d of %s is over %d bytes (64 MiB), the longest line doc import reads; documents imported before it: %d",
						line+1, args[1], maxImportLine, r.Imported)}
				}
				return fmt.Errorf("reading %s at line %d: %w", args[1], line+1, err)
			}
			if err := a.emit(r, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "imported %d documents\n", r.Imported)
				return err
			}); err != nil {
				return err
			}
			if len(r.Refused) == 0 {
				return nil
			}
			var msg strings.Builder
			fmt.Fprintf(&msg, "%d of %d documents of %s refused:", len(r.Refused), len(r.Refused)+r.Imported, args[1])
			for _, e := range r.Refused {
				fmt.Fprintf(&msg, "\nline %d: %s", e.Line, strings.ReplaceAll(e.Error, "\n", "\n  "))
			}
			return &satchel.Error{Kind: satchel.ErrValidation, Msg: msg.String()}
		},
	}
}

// unwrapPathError drops the "open FILE: " of an *os.PathError, which the
// message already names.
func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
