package diff3

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/satchel-dev/satchel/internal/testenv"
)

func TestMergeCases(t *testing.T) {
	cases := []struct {
		name, base, ours, theirs, want string
		conflicts                      int
	}{
		{"ours only", "a\nb\nc\n", "a\nB\nc\n", "a\nb\nc\n", "a\nB\nc\n", 0},
		{"theirs only", "a\nb\nc\n", "a\nb\nc\n", "a\nb\nC\n", "a\nb\nC\n", 0},
		{"apart", "a\nb\nc\nd\ne\n", "A\nb\nc\nd\ne\n", "a\nb\nc\nd\nE\n", "A\nb\nc\nd\nE\n", 0},
		{"same change", "a\nb\nc\n", "a\nX\nc\n", "a\nX\nc\n", "a\nX\nc\n", 0},
		{"overlap", "a\nb\nc\n", "a\nX\nc\n", "a\nY\nc\n", "a\n<<<<<<< main\nX\n=======\nY\n>>>>>>> try-b\nc\n", 1},
		{"touching", "a\nb\nc\nd\n", "a\nB\nc\nd\n", "a\nb\nC\nd\n", "a\n<<<<<<< main\nB\nc\n=======\nb\nC\n>>>>>>> try-b\nd\n", 1},
		{"no final newline", "a\nb", "a\nX", "a\nY", "a\n<<<<<<< main\nX\n=======\nY\n>>>>>>> try-b\n", 1},
		{"both add", "", "x\n", "y\n", "<<<<<<< main\nx\n=======\ny\n>>>>>>> try-b\n", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Merge(c.base, c.ours, c.theirs, "main", "try-b")
			if r.Text != c.want || len(r.Conflicts) != c.conflicts {
				t.Errorf("Merge = %q, %d conflicts; want %q, %d", r.Text, len(r.Conflicts), c.want, c.conflicts)
			}
		})
	}
}

// genCase makes a three-way case: a base of unique lines and two sides
// that each change a few random places (replace, delete or insert runs of
// lines, new lines unique too), seeded.
func genCase(rng *rand.Rand, n int) (base, ours, theirs string) {
	next := 0
	line := func(tag string) string { next++; return fmt.Sprintf("%s line %d\n", tag, next) }
	var bl []string
	for range rng.IntN(n) + 1 {
		bl = append(bl, line("base"))
	}
	side := func(tag string) string {
		ls := append([]string(nil), bl...)
		for range rng.IntN(4) + 1 {
			at := rng.IntN(len(ls) + 1)
			del := min(rng.IntN(3), len(ls)-at)
			var ins []string
			for range rng.IntN(3) {
				ins = append(ins, line(tag))
			}
			if rng.IntN(5) == 0 && at+del <= len(bl) && at < len(bl) {
				// The same change on both sides, now and then.
				ins = []string{fmt.Sprintf("shared %d\n", at)}
			}
			ls = append(ls[:at], append(ins, ls[at+del:]...)...)
		}
		return strings.Join(ls, "")
	}
	return strings.Join(bl, ""), side("ours"), side("theirs")
}

// TestMergeMatchesGit merges generated cases with Merge and with `git
// merge-file -p` and expects the same text, conflicts marked alike.
func TestMergeMatchesGit(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		testenv.Skip(t, "git is not installed: the merge is not compared with git merge-file")
		return
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(35, 1))
	n := 400
	if testing.Short() {
		n = 60
	}
	conflicted := 0
	for k := range n {
		base, ours, theirs := genCase(rng, 12)
		paths := make([]string, 3)
		for i, s := range []string{ours, base, theirs} {
			paths[i] = filepath.Join(dir, fmt.Sprint(i))
			if err := os.WriteFile(paths[i], []byte(s), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(git, "merge-file", "-p", "-L", "main", "-L", "base", "-L", "try-b", paths[0], paths[1], paths[2])
		out, err := cmd.Output()
		gitConflicts := 0
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() > 0 {
			gitConflicts = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		r := Merge(base, ours, theirs, "main", "try-b")
		if r.Text != string(out) || len(r.Conflicts) != gitConflicts {
			t.Fatalf("case %d:\nbase:\n%s\nours:\n%s\ntheirs:\n%s\ngit (%d conflicts):\n%s\nMerge (%d conflicts):\n%s",
				k, base, ours, theirs, gitConflicts, out, len(r.Conflicts), r.Text)
		}
		if gitConflicts > 0 {
			conflicted++
		}
	}
	if conflicted == 0 || conflicted == n {
		t.Fatalf("%d of %d cases conflicted: the generator must make both kinds", conflicted, n)
	}
	t.Logf("%d cases, %d with conflicts, the same as git merge-file", n, conflicted)
}

func FuzzMerge(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n", "a\nb\nC\n")
	f.Add("", "x", "y")
	f.Add("a\nb", "a\r\nb", "b\n")
	f.Fuzz(func(t *testing.T, base, ours, theirs string) {
		r := Merge(base, ours, theirs, "O", "T")
		if len(r.Conflicts) == 0 {
			// A merge without conflicts keeps a side that alone changed.
			if ours == base && r.Text != theirs || theirs == base && r.Text != ours {
				t.Fatalf("Merge(%q, %q, %q) = %q", base, ours, theirs, r.Text)
			}
		}
		if ours == theirs && (len(r.Conflicts) != 0 || r.Text != ours) {
			t.Fatalf("same sides: Merge(%q, %q, %q) = %q, %d conflicts", base, ours, theirs, r.Text, len(r.Conflicts))
		}
	})
}
