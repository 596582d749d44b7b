package shell_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/testenv"
)

// fixture is the files every corpus script starts from, on both sides.
var fixture = map[string]string{
	"a.txt":              "apple\nbanana\ncherry\napple\n",
	"b.txt":              "one two three\nfour five\nsix\n",
	"nums.txt":           "10\n2\n33\n4\n2\n",
	"data.csv":           "name,age,city\nalice,30,paris\nbob,25,rome\ncarol,35,oslo\n",
	"src/main.go":        "package main\n\n// TODO: fix\nfunc main() {}\n",
	"src/util/helper.go": "package util\n// TODO later\nfunc Helper() int { return 1 }\n",
	"src/util/notes.md":  "# Notes\nTODO: write\nDone.\n",
	"docs/readme.md":     "# Readme\nHello World\nhello again\n",
	"j.json":             `{"items":[{"id":1,"tag":"a"},{"id":2,"tag":"b"}],"n":3,"name":"x"}` + "\n",
	"lines.txt":          "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nline 10\nline 11\nline 12\nline 13\nline 14\nline 15\nline 16\nline 17\nline 18\nline 19\nline 20\n",
	"mixed.txt":          "Foo bar\nfoo BAR\nbaz\n\nqux quux\na.b\n",
	"noeol.txt":          "no newline at end",
}

// A corpusCase is one script of testdata/corpus.sh.
type corpusCase struct {
	name, script, differs string
}

func loadCorpus(t *testing.T) []corpusCase {
	t.Helper()
	b, err := os.ReadFile("testdata/corpus.sh")
	if err != nil {
		t.Fatal(err)
	}
	var out []corpusCase
	for _, block := range strings.Split(string(b), "\n## ")[1:] {
		head, body, _ := strings.Cut(block, "\n")
		name, why, _ := strings.Cut(head, " ! ")
		out = append(out, corpusCase{name: strings.TrimSpace(name), script: body, differs: why})
	}
	return out
}

type outcome struct {
	stdout string
	status int
	files  map[string]string
	dirs   []string // every directory, empty ones too
}

func hostRun(t *testing.T, bash, script string) outcome {
	dir := t.TempDir()
	for p, c := range fixture {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bash, "--norc", "--noprofile", "-c", script)
	cmd.Dir = dir
	cmd.Env = []string{"LC_ALL=C", "PATH=/usr/bin:/bin", "HOME=" + dir}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stdin = strings.NewReader("")
	err := cmd.Run()
	status := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		status = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			dirs = append(dirs, filepath.ToSlash(rel))
			return nil
		}
		b, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	slices.Sort(dirs)
	return outcome{stdout: stdout.String(), status: status, files: files, dirs: dirs}
}

func satchelRun(t *testing.T, script string) (outcome, error) {
	ctx := context.Background()
	st, err := satchel.Open(ctx, "memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ws, err := st.Workspace(ctx, "default", "main")
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Batch(ctx, func(ctx context.Context, b *satchel.Batch) error {
		for p, c := range fixture {
			if err := b.Write(ctx, p, c); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	res, err := ws.Shell(ctx, script)
	if err != nil {
		return outcome{}, err
	}
	files := map[string]string{}
	paths, err := ws.List(ctx, "", satchel.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		c, err := ws.Read(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		files[p] = c
	}
	dirs := []string{"."}
	for p := range files {
		for d := path.Dir(p); d != "." && !slices.Contains(dirs, d); d = path.Dir(d) {
			dirs = append(dirs, d)
		}
	}
	slices.Sort(dirs)
	return outcome{stdout: res.Stdout, status: res.ExitStatus, files: files, dirs: dirs}, nil
}

// TestCorpus runs every script of testdata/corpus.sh both ways and
// compares what they printed, their exit status and the files left.
func TestCorpus(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		testenv.Skip(t, "bash is not installed")
	}
	if _, err := exec.LookPath("jq"); err != nil {
		testenv.Skip(t, "jq is not installed (apt-get install jq)")
	}
	cases := loadCorpus(t)
	if len(cases) < 150 {
		t.Fatalf("the corpus has %d scripts, fewer than 150", len(cases))
	}
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.name] {
			t.Fatalf("two scripts are named %s", c.name)
		}
		seen[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			want := hostRun(t, bash, c.script)
			got, err := satchelRun(t, c.script)
			same := err == nil && got.stdout == want.stdout && got.status == want.status && equalFiles(got.files, want.files)
			if c.differs != "" {
				if same && slices.Equal(got.dirs, want.dirs) {
					t.Errorf("listed as a deliberate difference (%s), but satchel sh and bash agree: remove the mark", c.differs)
				}
				return
			}
			if err != nil {
				t.Fatalf("satchel sh: %v", err)
			}
			if got.stdout != want.stdout {
				t.Errorf("stdout differs\nscript:\n%s\nsatchel sh:\n%s\nbash:\n%s", c.script, got.stdout, want.stdout)
			}
			if got.status != want.status {
				t.Errorf("exit status: satchel sh %d, bash %d\nscript:\n%s", got.status, want.status, c.script)
			}
			if !equalFiles(got.files, want.files) {
				t.Errorf("files differ\nscript:\n%s\nsatchel sh: %v\nbash: %v", c.script, keys(got.files), keys(want.files))
				for p, w := range want.files {
					if g, ok := got.files[p]; ok && g != w {
						t.Errorf("%s: satchel sh %q, bash %q", p, g, w)
					}
				}
			}
		})
	}
}

func equalFiles(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
