package luahost_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel/luahost"
)

// TestExamples runs the scripts of examples/lua on every backend, as a
// user would: the seed's store tour unchanged, a fanout research script
// and an atomic edit.
func TestExamples(t *testing.T) {
	for _, kind := range backends {
		t.Run(kind, func(t *testing.T) { checkExamples(t, kind) })
	}
}

func checkExamples(t *testing.T, kind string) {
	{
		{
			ctx := context.Background()
			st := open(t, kind)
			run := func(file string, cfg luahost.Config) (string, *luahost.Result, error) {
				s, err := luahost.Load("../examples/lua/" + file)
				if err != nil {
					t.Fatal(err)
				}
				var out bytes.Buffer
				cfg.Store, cfg.Stdout = st, &out
				res, err := s.Run(ctx, cfg)
				return out.String(), res, err
			}

			out, res, err := run("seed.lua", luahost.Config{Thread: "seed", Args: []string{"first", "run"}})
			if err != nil {
				t.Fatal(err)
			}
			if want := "491\t21\t 1| # Summar\t20|\n1\ttrue\tfalse\ntrue\n"; out != want {
				t.Errorf("seed printed %q, want %q", out, want)
			}
			if res.Output != "processed: first run\n" {
				t.Errorf("seed output %q", res.Output)
			}

			out, res, err = run("research.lua", luahost.Config{Thread: "research"})
			if err != nil {
				t.Fatal(err)
			}
			if out != "3 topics researched\n" || !strings.Contains(res.Output, "## retention\n\nFindings of arm 2 on retention.") {
				t.Errorf("research: %q %q", out, res.Output)
			}

			ws, _ := st.Workspace(ctx, "default", "docs")
			_ = ws.Write(ctx, "docs/a.md", "a draft\n")
			_ = ws.Write(ctx, "docs/b.md", "draft and draft\n")
			before, _ := ws.Head(ctx)
			if _, _, err = run("edit.lua", luahost.Config{Thread: "docs", Atomic: true}); err == nil ||
				!strings.Contains(err.Error(), "anchor occurs 2 times in docs/b.md") {
				t.Fatalf("edit of an ambiguous file: %v", err)
			}
			if after, _ := ws.Head(ctx); after.Seq != before.Seq {
				t.Errorf("a failed atomic edit moved the thread from %d to %d", before.Seq, after.Seq)
			}
			_ = ws.Write(ctx, "docs/b.md", "one draft\n")
			if out, res, err = run("edit.lua", luahost.Config{Thread: "docs", Atomic: true}); err != nil || out != "renamed draft to final in 2 files\n" || res.Published == nil {
				t.Fatalf("edit: %q %+v %v", out, res, err)
			}
			if got, _ := ws.Read(ctx, "docs/b.md"); got != "one final\n" {
				t.Errorf("docs/b.md after the edit: %q", got)
			}
		}
	}
}
