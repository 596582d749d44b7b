package luahost_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/luahost"
)

const declared = `--[[
name: summarize
description: Summarize the input
input: {path: in/text.md, description: the text}
output: out/summary.md
]]
`

// TestInputOutput: the declared input is written before the run, the
// declared output read after it, with the refusals' exact messages.
func TestInputOutput(t *testing.T) {
	for _, kind := range backends {
		t.Run(kind, func(t *testing.T) {
			st := open(t, kind)
			s, err := luahost.Compile("summarize.lua", declared+`store.write("out/summary.md", "# " .. store.read("in/text.md"))`)
			if err != nil {
				t.Fatal(err)
			}
			if s.Front.Name != "summarize" || s.Front.Input.Path != "in/text.md" || s.Front.Input.Description != "the text" || s.Front.Output.Path != "out/summary.md" {
				t.Fatalf("frontmatter %+v", s.Front)
			}
			in, err := s.ResolveInput(luahost.InputSource{Text: "hello", HasText: true})
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Run(context.Background(), luahost.Config{Store: st, Input: in})
			if err != nil || !res.Produced || res.Output != "# hello" {
				t.Fatalf("result %+v, error %v", res, err)
			}
			if _, err := s.ResolveInput(luahost.InputSource{Text: "a", HasText: true, File: "f", HasFile: true}); err == nil ||
				err.Error() != "input_file and input_text are mutually exclusive; specify one, not both" {
				t.Errorf("both: %v", err)
			}
			read := func(name string) (string, error) { return "", errors.New("no such file or directory") }
			if _, err := s.ResolveInput(luahost.InputSource{File: "gone.md", HasFile: true, Read: read}); err == nil ||
				err.Error() != `cannot read input_file "gone.md": no such file or directory` {
				t.Errorf("unreadable: %v", err)
			}
			bare, _ := luahost.Compile("bare.lua", `print(1)`)
			if _, err := bare.ResolveInput(luahost.InputSource{Text: "a", HasText: true}); err == nil ||
				err.Error() != "input_file or input_text was provided but the script declares no input" {
				t.Errorf("undeclared: %v", err)
			}
			lazy, _ := luahost.Compile("lazy.lua", declared+`print("nothing written")`)
			if _, err := lazy.Run(context.Background(), luahost.Config{Store: st, Thread: "other"}); err == nil ||
				err.Error() != `the script declares output "out/summary.md" but it was not produced` {
				t.Errorf("not produced: %v", err)
			}
		})
	}
}

func TestFrontmatter(t *testing.T) {
	cases := []struct{ src, err string }{
		{"--[[\nname: x\ninputs: a.md\n]]\n", "unknown key inputs"},
		{"--[[\ninput: {path: a.md, desc: x}\n]]\n", "unknown key desc"},
		{"--[[\ninput: ../a.md\n]]\n", `input: invalid path "../a.md"`},
		{"--[[\nname: x\n", "is not closed"},
		{"--[[\nname: [x\n]]\n", "frontmatter"},
		{"-- a plain comment\nprint(1)\n", ""},
		{"--[[\n]]\nprint(1)\n", ""},
	}
	for _, c := range cases {
		_, err := luahost.Compile("f.lua", c.src)
		if c.err == "" {
			if err != nil {
				t.Errorf("%q: %v", c.src, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) || !strings.HasPrefix(err.Error(), "f.lua: ") {
			t.Errorf("%q: %v, want %q", c.src, err, c.err)
		}
	}
}

func FuzzFrontmatter(f *testing.F) {
	f.Add(declared + "print(1)")
	f.Add("--[[\ninput: a.md\noutput: {path: b.md}\n]]")
	f.Add("--[[ name: [ ]]")
	f.Fuzz(func(t *testing.T, src string) {
		s, err := luahost.Compile("f.lua", src)
		if err != nil {
			return
		}
		for _, d := range []*luahost.Decl{s.Front.Input, s.Front.Output} {
			if d != nil && satchel.ValidPath(d.Path) != nil {
				t.Fatalf("accepted the invalid path %q", d.Path)
			}
		}
	})
}

// TestAtomic: an atomic run publishes all its commits in one, or none.
func TestAtomic(t *testing.T) {
	for _, kind := range backends {
		t.Run(kind, func(t *testing.T) { checkAtomic(t, kind) })
	}
}

func checkAtomic(t *testing.T, kind string) {
	{
		{
			st := open(t, kind)
			ctx := context.Background()
			main, _ := st.Workspace(ctx, "default", "main")
			_ = main.Write(ctx, "plan.md", "step one\n")
			before, _ := main.Head(ctx)

			_, res, err := exec(t, st, `store.read("plan.md") store.str_replace("plan.md", "one", "two") store.write("b.md", "x")`, luahost.Config{Atomic: true})
			if err != nil {
				t.Fatal(err)
			}
			after, _ := main.Head(ctx)
			if after.Seq != before.Seq+1 || res.Published == nil || len(res.Commits) != 3 {
				t.Fatalf("head %d after %d, result %+v: want one published commit", after.Seq, before.Seq, res)
			}
			if got, _ := main.Read(ctx, "plan.md"); got != "step two\n" {
				t.Errorf("plan.md: %q", got)
			}

			// A failing run publishes nothing and leaves no thread behind.
			_, _, err = exec(t, st, `store.write("c.md", "x") error("stop")`, luahost.Config{Atomic: true})
			if err == nil || !strings.Contains(err.Error(), "stop") {
				t.Fatalf("failing run: %v", err)
			}
			if ok, _ := main.Exists(ctx, "c.md"); ok {
				t.Error("a failed atomic run published")
			}
			if ths, _ := st.Threads(ctx, "default"); len(ths) != 1 {
				t.Errorf("threads after a failed run: %+v", ths)
			}

			// The thread moves during the run: nothing published, the fork kept.
			moved := movedDuringRun(t, st)
			m := regexp.MustCompile(`^thread main changed during the run; nothing was published \(the run's work is kept on thread (main-run-[0-9a-f]{8})\)$`).FindStringSubmatch(moved.Error())
			if m == nil || !errors.Is(moved, satchel.ErrConflict) {
				t.Fatalf("moved: %v", moved)
			}
			kept, _ := st.Workspace(ctx, "default", m[1])
			if got, _ := kept.Read(ctx, "d.md"); got != "mine" {
				t.Errorf("kept fork d.md: %q", got)
			}
			if ok, _ := main.Exists(ctx, "d.md"); ok {
				t.Error("a conflicting run published")
			}
		}
	}
}

// movedDuringRun runs an atomic script whose thread another writer
// moves while it runs, and returns the run's error. The script waits
// until the writer, once it has moved the thread, writes signal.txt into
// the run's fork.
func movedDuringRun(t *testing.T, st *satchel.Store) error {
	ctx := context.Background()
	s, err := luahost.Compile("script.lua", `store.write("d.md", "mine") while not store.exists("signal.txt") do end`)
	if err != nil {
		t.Fatal(err)
	}
	main, _ := st.Workspace(ctx, "default", "main")
	done := make(chan error, 1)
	go func() {
		for {
			ths, err := st.Threads(ctx, "default")
			if err != nil {
				done <- err
				return
			}
			for _, th := range ths {
				if strings.HasPrefix(th.Name, "main-run-") && th.Head >= 2 { // d.md written
					fork, _ := st.Workspace(ctx, "default", th.Name)
					if err := main.Write(ctx, "other.md", "someone else"); err != nil {
						done <- err
						return
					}
					done <- fork.Write(ctx, "signal.txt", "go")
					return
				}
			}
		}
	}()
	_, err = s.Run(ctx, luahost.Config{Store: st, Atomic: true, Timeout: 20e9})
	if werr := <-done; werr != nil {
		t.Fatal(werr)
	}
	return err
}
