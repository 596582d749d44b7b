package shell

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

func base() fstest.MapFS {
	return fstest.MapFS{"a.txt": {Data: []byte("one\ntwo\n")}, "d/b.txt": {Data: []byte("b\n")}}
}

// TestLimits: each runaway script ends with its own message; nothing of
// it is kept.
func TestLimits(t *testing.T) {
	if DefaultMaxCommands != 1_000_000 || DefaultTimeout != 30*time.Second || DefaultMaxOutput != 1<<20 {
		t.Fatal("the documented defaults changed")
	}
	cases := []struct {
		name, script string
		o            Options
		want         string
	}{
		{"loop", "while true; do :; done", Options{MaxCommands: 5000}, "sh: the run was stopped after 5000 commands (the cap on commands run)"},
		{"timeout", "while true; do :; done", Options{Timeout: 50 * time.Millisecond, MaxCommands: 1 << 40}, "sh: the run took longer than --timeout (50ms): it was stopped"},
		{"recursion", "f() { f; }; f", Options{MaxDepth: 2000}, "sh: the calls nest too deeply (a recursive function?): the run was stopped"},
		{"pipe recursion", "f() { f | cat; }; f", Options{}, "sh: more than 1000 commands run at once (a function that pipes into itself?): the run was stopped"},
		{"10 GiB seq", "seq 10737418240", Options{}, "sh: the output is over --max-output (1 MiB): the run was stopped"},
		{"10 GiB seq to a file", "seq 10737418240 > f", Options{MaxMemory: 1 << 20}, "sh: the run's pending writes are over the memory limit (1 MiB): the run was stopped"},
		{"file size", "seq 10737418240 > f", Options{MaxFileBytes: 1000}, "sh: file f is over the largest file size (1000 bytes): the run was stopped"},
		{"sort of too much", "seq 10737418240 | sort", Options{MaxMemory: 1 << 20}, "sh: sort: its input is over the memory limit (1 MiB): the run was stopped"},
		{"jq building a value", "jq -n '[range(100000000) | \"" + strings.Repeat("x", 200) + "\" + tostring] | length'", Options{MaxMemory: 1 << 20, Timeout: 10 * time.Minute}, "sh: the run took more memory than its limit allows (68 MiB): the run was stopped"},
		{"xargs loop", "seq 100000 | xargs -n 1 true", Options{MaxCommands: 1000}, "sh: the run was stopped after 1000 commands (the cap on commands run)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := Run(context.Background(), c.script, base(), c.o)
			var le *LimitError
			if !errors.As(err, &le) || le.Msg != c.want {
				t.Fatalf("got %v (result %+v), want %q", err, res, c.want)
			}
		})
	}
}

// TestRunawaysThatEnd: scripts that would not end alone in a naive shell
// end with the right output.
func TestRunawaysThatEnd(t *testing.T) {
	for script, want := range map[string]string{
		"yes | head -1":               "y\n",
		"yes | grep y | head -2":      "y\ny\n",
		"yes | tr y n | head -1":      "n\n",
		"yes | cat | head -1":         "y\n",
		"seq 10737418240 | head -3":   "1\n2\n3\n",
		"cat a.txt >> a.txt; echo $?": "1\n",
	} {
		res, err := Run(context.Background(), script, base(), Options{})
		if err != nil || res.Stdout != want {
			t.Errorf("%s: got %+v, %v; want stdout %q", script, res, err, want)
		}
	}
	res, _ := Run(context.Background(), "cat a.txt >> a.txt", base(), Options{})
	if res.Stderr != "cat: a.txt: input file is output file\n" || res.Exit != 1 || len(res.Changes) != 0 {
		t.Errorf("cat a.txt >> a.txt: %+v", res)
	}
}

// TestNoHostAccess: no host file, program or environment variable is
// reachable from a script.
func TestNoHostAccess(t *testing.T) {
	t.Setenv("SATCHEL_SH_SECRET", "leaked")
	probe := t.TempDir() + "/probe"
	script := strings.Join([]string{
		"cat /etc/passwd", "cat < /etc/hostname", "cd /etc && ls", "source /etc/profile",
		"echo \"[$SATCHEL_SH_SECRET]\"", "env", "printenv", "exec /bin/ls", "/bin/ls",
		"command -v /bin/ls", "type -p ls", "echo x > " + probe, "ls /", "echo $HOME $PATH",
		"declare -p | grep -c SATCHEL", "echo $(</etc/passwd)", "awk 'BEGIN { while ((getline l < \"/etc/passwd\") > 0) print l }'",
		"awk 'BEGIN { system(\"id\") }'", "awk 'BEGIN { print ENVIRON[\"SATCHEL_SH_SECRET\"] }'", "jq -n env", "jq -n '$ENV'",
		"awk 'BEGIN { print \"x\" > \"/tmp/awk-probe\" }'", "cat <(echo hi)",
	}, "\n")
	for _, line := range strings.Split(script, "\n") {
		res, err := Run(context.Background(), line, base(), Options{})
		if err != nil {
			if !strings.Contains(err.Error(), "process substitution") {
				t.Errorf("%s: %v", line, err)
			}
			continue
		}
		all := res.Stdout + res.Stderr
		for _, leak := range []string{"root:", "leaked", "/usr/bin", "uid="} {
			if strings.Contains(all, leak) {
				t.Errorf("%s: the output shows the host (%q):\n%s", line, leak, all)
			}
		}
	}
	if _, err := os.Stat(probe); err == nil {
		t.Errorf("a script wrote the host file %s", probe)
	}
	if _, err := os.Stat("/tmp/awk-probe"); err == nil {
		t.Error("awk wrote the host file /tmp/awk-probe")
	}
}

// FuzzRun feeds the parser and the interpreter any script: a run ends
// without panicking, within its bounds.
func FuzzRun(f *testing.F) {
	for _, s := range []string{
		"echo hi", "cat a.txt | sort | uniq -c", "for f in *; do wc -l $f; done", "x=$((1/0))",
		"sed -n '/a/,/b/p' a.txt", "grep -rn '[' .", "awk '{' a.txt", "jq '.[' a.txt", "f() { f; }; f",
		"cat <<EOF\n$(echo x)\nEOF", "case x in (*) ;; esac", "echo ${x:?unset}", "[[ a =~ ( ]]",
		"tr -d '[:alpha:]' < a.txt", "cut -f 2- -d, a.txt", "sort -k 3,1 a.txt", "ls -R / | head",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		_, err := Run(context.Background(), script, base(), Options{Timeout: 2 * time.Second, MaxCommands: 10_000, MaxOutput: 1 << 16, MaxMemory: 1 << 20, MaxDepth: 2000})
		var le *LimitError
		var pe *ParseError
		if err != nil && !errors.As(err, &le) && !errors.As(err, &pe) {
			t.Fatalf("%q: %v", script, err)
		}
	})
}
