package satchel_test

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
)

// TestAudit lists commits and document changes with their actors, newest
// first, filtered and paged, on each backend; text planted in a file and
// in a document never appears, and agent-chosen text is escaped in lines.
func TestAudit(t *testing.T) {
	p, err := satchel.LoadProjectFS(fuzzProject)
	if err != nil {
		t.Fatal(err)
	}
	const plantedFile = "PLANTED-FILE-CONTENT-7f3a"
	const plantedDoc = "PLANTED-DOC-BODY-9c1e"
	for name, open := range exportBackends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			st := open(t)
			start := time.Now().Add(-time.Minute)
			agent := satchel.Actor{Agent: "research", Credential: "tok_abc", Via: "mcp:write_file", Client: "evil\tclient<x>", ClientVersion: "1.0\n"}
			ws, err := st.Workspace(ctx, "acme", "main", satchel.WorkspaceActor(agent))
			if err != nil {
				t.Fatal(err)
			}
			if err := ws.Write(ctx, "notes/a b<i>.md", plantedFile+"\n", satchel.IdempotencyKey("k1")); err != nil {
				t.Fatal(err)
			}
			op, _ := st.Workspace(ctx, "other", "main", satchel.WorkspaceActor(satchel.Actor{Via: "cli:fs append"}))
			if err := op.Append(ctx, "log", plantedFile); err != nil {
				t.Fatal(err)
			}
			c, err := st.Collection(ctx, p, "acme", "s", satchel.Force(), satchel.CollectionActor(satchel.Actor{Agent: "research", Credential: "tok_abc", Via: "mcp:store__s__set"}))
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := c.Set(ctx, map[string]any{"id": "doc1", "o": map[string]any{"x": []any{plantedDoc}}}, satchel.IdempotencyKey("k2")); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Remove(ctx, "doc1"); err != nil {
				t.Fatal(err)
			}

			page, err := st.Audit(ctx, satchel.AuditQuery{})
			if err != nil {
				t.Fatal(err)
			}
			if docs, err := st.Audit(ctx, satchel.AuditQuery{Scope: "acme", Collection: "s", Key: "doc1"}); err != nil || len(docs.Entries) != 2 || docs.Entries[0].Op != "remove" || docs.Entries[1].Version != 1 {
				t.Errorf("audit of one document: %+v, %v", docs.Entries, err)
			}
			if docs, err := st.Audit(ctx, satchel.AuditQuery{Scope: "acme", Collection: "s", Key: "other"}); err != nil || len(docs.Entries) != 0 {
				t.Errorf("audit of another document: %+v, %v", docs.Entries, err)
			}
			if len(page.Entries) != 4 {
				t.Fatalf("audit lists %d entries, want 4: %+v", len(page.Entries), page.Entries)
			}
			for i := 1; i < len(page.Entries); i++ {
				if page.Entries[i].Time.After(page.Entries[i-1].Time) {
					t.Errorf("entry %d is newer than entry %d", i, i-1)
				}
			}
			rm := page.Entries[0]
			if rm.Op != "remove" || rm.Collection != "s" || rm.Key != "doc1" || rm.Agent != "research" || rm.Credential != "tok_abc" || rm.Scope != "acme" {
				t.Errorf("newest entry: %+v, want the remove of s/doc1 by research", rm)
			}
			var set, write *satchel.AuditEntry
			for i, e := range page.Entries {
				switch e.Op {
				case "set":
					set = &page.Entries[i]
				case "write":
					write = &page.Entries[i]
				}
			}
			if set == nil || set.IdempotencyKey != "k2" || set.Version != 1 || set.Via != "mcp:store__s__set" {
				t.Errorf("the set: %+v", set)
			}
			if write == nil || write.Thread != "main" || write.Seq != 1 || write.IdempotencyKey != "k1" || write.Client != agent.Client || write.ClientVersion != "1.0\n" {
				t.Errorf("the write: %+v", write)
			}

			js, _ := json.Marshal(page)
			var lines strings.Builder
			for _, e := range page.Entries {
				lines.WriteString(e.String() + "\n")
			}
			for _, out := range []string{string(js), lines.String()} {
				for _, planted := range []string{plantedFile, plantedDoc} {
					if strings.Contains(out, planted) {
						t.Errorf("audit output holds stored text %s:\n%s", planted, out)
					}
				}
			}
			if strings.Count(lines.String(), "\n") != 4 || strings.Contains(lines.String(), "<") {
				t.Errorf("agent-chosen text is not escaped in the lines:\n%s", lines.String())
			}
			for _, l := range strings.Split(strings.TrimSuffix(lines.String(), "\n"), "\n") {
				if n := strings.Count(l, "\t"); n != 8 {
					t.Errorf("line has %d tabs, want 8: %q", n, l)
				}
			}

			// Filters and pages.
			for _, tc := range []struct {
				q    satchel.AuditQuery
				want int
			}{
				{satchel.AuditQuery{Scope: "other"}, 1},
				{satchel.AuditQuery{Agent: "research"}, 3},
				{satchel.AuditQuery{Agent: "-"}, 1},
				{satchel.AuditQuery{Tool: "write_file"}, 1},
				{satchel.AuditQuery{Tool: "fs append"}, 1},
				{satchel.AuditQuery{Since: start}, 4},
				{satchel.AuditQuery{Since: time.Now().Add(time.Hour)}, 0},
			} {
				pg, err := st.Audit(ctx, tc.q)
				if err != nil || len(pg.Entries) != tc.want {
					t.Errorf("Audit(%+v): %d entries (%v), want %d", tc.q, len(pg.Entries), err, tc.want)
				}
			}
			var seen []satchel.AuditEntry
			q := satchel.AuditQuery{Limit: 1}
			for range 10 {
				pg, err := st.Audit(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				seen = append(seen, pg.Entries...)
				if pg.NextCursor == "" {
					break
				}
				q.Cursor = pg.NextCursor
			}
			if len(seen) != 4 {
				t.Fatalf("paging one at a time saw %d entries, want 4", len(seen))
			}
			// A scan bound ends a page early, and the pages still see
			// every match once.
			var scanned []satchel.AuditEntry
			partial := 0
			sq := satchel.AuditQuery{Agent: "research", Scan: 1, Limit: 10}
			for range 10 {
				pg, err := st.Audit(ctx, sq)
				if err != nil {
					t.Fatal(err)
				}
				if len(pg.Entries) > 1 {
					t.Errorf("a page that examines one change has %d entries", len(pg.Entries))
				}
				if pg.Partial {
					partial++
					if pg.NextCursor == "" || pg.Through.IsZero() {
						t.Errorf("a partial page with no cursor or time: %+v", pg)
					}
				}
				scanned = append(scanned, pg.Entries...)
				if pg.NextCursor == "" {
					break
				}
				sq.Cursor = pg.NextCursor
			}
			if len(scanned) != 3 || partial < 3 {
				t.Errorf("paging with a scan bound of 1 saw %d entries in %d partial pages, want 3 in 3 or more", len(scanned), partial)
			}
			// File rules leave out a commit of hidden paths only, before
			// the path filter looks.
			hide, err := satchel.ParseFileRules("notes/**=none,**=read")
			if err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				q    satchel.AuditQuery
				want int
			}{
				{satchel.AuditQuery{Scope: "acme", Path: "notes/**"}, 1},
				{satchel.AuditQuery{Scope: "acme", Path: "notes/**", Files: []satchel.WorkspaceOption{satchel.WithFileRules(hide)}}, 0},
				{satchel.AuditQuery{Scope: "acme", Files: []satchel.WorkspaceOption{satchel.WithFileRules(hide)}}, 2},
				{satchel.AuditQuery{Scope: "other", Files: []satchel.WorkspaceOption{satchel.WithFileRules(hide)}}, 1},
			} {
				pg, err := st.Audit(ctx, tc.q)
				if err != nil || len(pg.Entries) != tc.want {
					t.Errorf("Audit(%+v): %d entries (%v), want %d", tc.q, len(pg.Entries), err, tc.want)
				}
				for _, e := range pg.Entries {
					if strings.Contains(e.Summary, "notes/") && len(tc.q.Files) > 0 {
						t.Errorf("a hidden path in %+v", e)
					}
				}
			}
			if _, err := st.Audit(ctx, satchel.AuditQuery{Scan: -1}); err == nil {
				t.Errorf("a negative scan bound is taken")
			}
			for i := range seen {
				if seen[i].Op != page.Entries[i].Op || !seen[i].Time.Equal(page.Entries[i].Time) {
					t.Errorf("page %d: %+v, want %+v", i, seen[i], page.Entries[i])
				}
			}
		})
	}
}

// FuzzAuditText escapes arbitrary text: the result holds no control
// character, no "<" and no tab or newline.
func FuzzAuditText(f *testing.F) {
	for _, s := range []string{"", "a\tb", "x\ny", "<tag>", "\\", "\u2028", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := satchel.AuditText(s)
		for _, r := range out {
			if r < 0x20 || r == 0x7f || r == '<' || r == 0x2028 || r == 0x2029 {
				t.Fatalf("AuditText(%q) = %q holds %U", s, out, r)
			}
		}
	})
}

// TestAuditFilters keeps the commits of a thread, a client, a path glob,
// a time range, and drops the operations asked.
func TestAuditFilters(t *testing.T) {
	ctx := t.Context()
	st, err := satchel.Open(ctx, "memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a := satchel.Actor{Agent: "a", Via: "mcp:write_file", Client: "claude"}
	ws, _ := st.Workspace(ctx, "s", "main", satchel.WorkspaceActor(a))
	for _, err := range []error{
		ws.Write(ctx, "src/auth.go", "x\n"),
		ws.Append(ctx, "logs/agent.log", "1\n"),
		ws.Append(ctx, "logs/agent.log", "2\n"),
		ws.Move(ctx, "src/auth.go", "src/login.go"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	mid := time.Now()
	other, _ := st.Workspace(ctx, "s", "other", satchel.WorkspaceActor(satchel.Actor{Agent: "b", Client: "cursor"}))
	if err := other.Write(ctx, "src/auth.go", "y\n"); err != nil {
		t.Fatal(err)
	}
	list := func(q satchel.AuditQuery) string {
		t.Helper()
		q.Scope = "s"
		p, err := st.Audit(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range p.Entries {
			out = append(out, e.Thread+"@"+strconv.FormatInt(e.Seq, 10))
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		q    satchel.AuditQuery
		want string
	}{
		{satchel.AuditQuery{Thread: "main"}, "main@4 main@3 main@2 main@1"},
		{satchel.AuditQuery{Client: "cursor"}, "other@1"},
		{satchel.AuditQuery{Path: "src/*.go"}, "other@1 main@4 main@1"},
		{satchel.AuditQuery{Path: "src/login.go"}, "main@4"},
		{satchel.AuditQuery{SkipOps: []string{"append"}, Thread: "main"}, "main@4 main@1"},
		{satchel.AuditQuery{Until: mid}, "main@4 main@3 main@2 main@1"},
		{satchel.AuditQuery{Since: mid}, "other@1"},
	} {
		if got := list(c.q); got != c.want {
			t.Errorf("audit %+v: %s, want %s", c.q, got, c.want)
		}
	}
	// Pages of two, merged across the threads, make the whole list.
	var paged []string
	for cursor := ""; ; {
		p, err := st.Audit(ctx, satchel.AuditQuery{Scope: "s", Limit: 2, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range p.Entries {
			paged = append(paged, e.Thread+"@"+strconv.FormatInt(e.Seq, 10))
		}
		if cursor = p.NextCursor; cursor == "" {
			break
		}
	}
	if got := strings.Join(paged, " "); got != "other@1 main@4 main@3 main@2 main@1" {
		t.Errorf("audit in pages of two: %s", got)
	}
	if _, err := st.Audit(ctx, satchel.AuditQuery{Path: "a/[b"}); !errors.Is(err, satchel.ErrInvalidPattern) {
		t.Errorf("audit of a bad glob: %v", err)
	}
	if _, err := st.Audit(ctx, satchel.AuditQuery{Thread: "a b"}); !errors.Is(err, satchel.ErrInvalidArgument) {
		t.Errorf("audit of a bad thread: %v", err)
	}
	if got := satchel.SummaryPaths("write a; move b -> c; fork of main@3"); strings.Join(got, ",") != "a,b,c,of main@3" {
		t.Errorf("SummaryPaths: %q", got)
	}
}
