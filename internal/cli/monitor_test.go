package cli

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestMonitorEnv(t *testing.T) {
	for _, c := range []struct {
		env    []string
		want   []string
		change bool
	}{
		{[]string{"A=1"}, []string{"A=1", "GODEBUG=" + monitorSetting}, true},
		{[]string{"GODEBUG=", "A=1"}, []string{"GODEBUG=" + monitorSetting, "A=1"}, true},
		{[]string{"GODEBUG=madvdontneed=1"}, []string{"GODEBUG=madvdontneed=1," + monitorSetting}, true},
		// The user's own choice wins, turning it off included.
		{[]string{"GODEBUG=schedtrace=0"}, []string{"GODEBUG=schedtrace=0"}, false},
		{[]string{"GODEBUG=gctrace=1, schedtrace=5000"}, []string{"GODEBUG=gctrace=1, schedtrace=5000"}, false},
	} {
		got, change := monitorEnv(c.env)
		if change != c.change || !cmp.Equal(got, c.want) {
			t.Errorf("monitorEnv(%q) = %q, %v; want %q, %v", c.env, got, change, c.want, c.change)
		}
	}
}

// TestServeHTTPKeepsMonitorAwake: satchel serve --http restarts itself in
// the same process with the monitor's setting in GODEBUG; over stdio, or
// with a schedtrace of the user's, it runs as started.
func TestServeHTTPKeepsMonitorAwake(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the server's environment in /proc")
	}
	bin := buildBinary(t)
	tmp := t.TempDir()
	// environ starts the server and returns its environment once it
	// has logged its first line (after any restart).
	environ := func(godebug string, args ...string) []string {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"--db", filepath.Join(tmp, "m.db"), "serve"}, args...)...)
		cmd.Env = append(os.Environ(), "SATCHEL_DB=", "GODEBUG="+godebug)
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = pw
		stdin, err := cmd.StdinPipe() // kept open: stdio serves until it closes
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pw.Close()
		defer func() {
			stdin.Close()
			cmd.Process.Kill()
			cmd.Wait()
			pr.Close()
		}()
		if _, err := bufio.NewReader(pr).ReadString('\n'); err != nil {
			t.Fatalf("serve %q: no log line: %v", args, err)
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/environ")
		if err != nil {
			t.Fatal(err)
		}
		return slices.Collect(func(yield func(string) bool) {
			for kv := range bytes.SplitSeq(b, []byte{0}) {
				if bytes.HasPrefix(kv, []byte("GODEBUG=")) && !yield(string(kv)) {
					return
				}
			}
		})
	}
	http := []string{"--http", "127.0.0.1:0", "--insecure-no-auth"}
	if got := environ("", http...); !cmp.Equal(got, []string{"GODEBUG=" + monitorSetting}) {
		t.Errorf("serve --http: %q, want GODEBUG=%s", got, monitorSetting)
	}
	if got := environ("gctrace=0", http...); !cmp.Equal(got, []string{"GODEBUG=gctrace=0," + monitorSetting}) {
		t.Errorf("serve --http with GODEBUG=gctrace=0: %q", got)
	}
	if got := environ("schedtrace=0", http...); !cmp.Equal(got, []string{"GODEBUG=schedtrace=0"}) {
		t.Errorf("serve --http with GODEBUG=schedtrace=0: %q, want it as given", got)
	}
	if got := environ(""); !cmp.Equal(got, []string{"GODEBUG="}) {
		t.Errorf("serve over stdio: %q, want GODEBUG as given", got)
	}
}

// TestW5ClientsKeepMonitorAwake: W5's client processes stand for replicas
// and run with serve --http's setting, after the bench's own environment.
func TestW5ClientsKeepMonitorAwake(t *testing.T) {
	t.Setenv("GODEBUG", "madvdontneed=1")
	cmd := w5Client(context.Background(), "satchel", 2, 10*time.Second, "mixed")
	if !slices.Contains(cmd.Env, "GODEBUG=madvdontneed=1,"+monitorSetting) {
		t.Errorf("client environment %q lacks GODEBUG with %s", cmd.Env, monitorSetting)
	}
	if want := []string{"satchel", "bench", "--w5-client", "2 10 mixed"}; !cmp.Equal(cmd.Args, want) {
		t.Errorf("client arguments %q, want %q", cmd.Args, want)
	}
}
