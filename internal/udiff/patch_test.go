package udiff

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/satchel-dev/satchel/internal/testenv"
)

// TestRealTools applies the diffs with GNU patch -p1 and git apply, each
// skipped when the tool is not installed: the table cases and random
// ones, including CRLF lines and missing final newlines.
func TestRealTools(t *testing.T) {
	type pair struct{ name, a, b string }
	var pairs []pair
	for _, c := range cases {
		if c.a != c.b {
			pairs = append(pairs, pair{c.name, c.a, c.b})
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; len(pairs) < len(cases)+60; i++ {
		a := randomText(r, r.IntN(50))
		b := mutate(r, a)
		if i%3 == 0 {
			b = randomText(r, r.IntN(50))
		}
		if a != b {
			pairs = append(pairs, pair{"random", a, b})
		}
	}
	for _, tool := range []struct {
		name string
		args []string
	}{
		{"patch", []string{"-p1", "--batch", "--silent", "--no-backup-if-mismatch", "-i"}},
		{"git", []string{"apply", "-p1"}},
	} {
		t.Run(tool.name, func(t *testing.T) {
			if _, err := exec.LookPath(tool.name); err != nil {
				testenv.Skip(t, "%s is not installed", tool.name)
			}
			for _, p := range pairs {
				dir := t.TempDir()
				file, diff := filepath.Join(dir, "f"), filepath.Join(dir, "change.diff")
				d := Unified("a/f", "b/f", p.a, p.b, 3)
				if err := os.WriteFile(file, []byte(p.a), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(diff, []byte(d), 0o644); err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command(tool.name, append(tool.args, diff)...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("%s: %s failed: %v\n%s\na = %q\nb = %q\ndiff:\n%s", p.name, tool.name, err, out, p.a, p.b, d)
					continue
				}
				// An emptied file must stay, empty: the names are not
				// /dev/null, so neither tool removes it.
				got, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != p.b {
					t.Errorf("%s: %s gave %q, want %q\na = %q\ndiff:\n%s", p.name, tool.name, got, p.b, p.a, d)
				}
			}
		})
	}
}

// TestRealToolsDevNull checks the documented way to show a file that is
// created or removed: /dev/null as the name of the side without it.
func TestRealToolsDevNull(t *testing.T) {
	for _, tool := range [][]string{
		{"patch", "-p1", "--batch", "--silent", "--no-backup-if-mismatch", "-i"},
		{"git", "apply", "-p1"},
	} {
		t.Run(tool[0], func(t *testing.T) {
			if _, err := exec.LookPath(tool[0]); err != nil {
				testenv.Skip(t, "%s is not installed", tool[0])
			}
			dir := t.TempDir()
			file, diff := filepath.Join(dir, "f"), filepath.Join(dir, "change.diff")
			run := func(d string) {
				t.Helper()
				if err := os.WriteFile(diff, []byte(d), 0o644); err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command(tool[0], append(tool[1:], diff)...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%v: %v\n%s\ndiff:\n%s", tool, err, out, d)
				}
			}
			const content = "x\ny"
			run(Unified("/dev/null", "b/f", "", content, 3))
			if got, err := os.ReadFile(file); err != nil || string(got) != content {
				t.Fatalf("after creation: %q, %v", got, err)
			}
			run(Unified("a/f", "/dev/null", content, "", 3))
			if _, err := os.Stat(file); !os.IsNotExist(err) {
				t.Fatalf("after removal: stat gives %v, want not exist", err)
			}
		})
	}
}
