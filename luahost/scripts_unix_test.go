//go:build unix

package luahost_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
	"time"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/luahost"
)

// TestScriptsSkipsWhatIsNotAScript: a FIFO among the scripts (which
// blocked the load forever) and a link leading out of the directory are
// skipped and named; a link within it is a script; a run of either is
// refused, naming what it is.
func TestScriptsSkipsWhatIsNotAScript(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	write := func(path, src string) {
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "a.lua"), `print("a")`)
	write(filepath.Join(outside, "secret.lua"), `print("secret")`)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.lua"), 0o600); err != nil {
		t.Skipf("cannot make a FIFO: %v", err)
	}
	for link, target := range map[string]string{"in.lua": "a.lua", "out.lua": filepath.Join(outside, "secret.lua"), "up.lua": "../" + filepath.Base(outside) + "/secret.lua"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	st := open(t, "memory")
	type opened struct {
		s   *luahost.Scripts
		err error
	}
	done := make(chan opened, 1)
	go func() {
		s, err := luahost.OpenScripts(dir, luahost.Config{Store: st})
		done <- opened{s, err}
	}()
	var o opened
	select {
	case o = <-done:
	case <-time.After(time.Minute): // a failure guard, not a measure
		t.Fatal("OpenScripts still blocked after a minute")
	}
	if o.err != nil {
		t.Fatal(o.err)
	}
	var files []string
	for _, s := range o.s.List() {
		files = append(files, s.File)
	}
	if !reflect.DeepEqual(files, []string{"a.lua", "in.lua"}) {
		t.Errorf("scripts %v", files)
	}
	want := []string{
		"fifo.lua: skipped: a FIFO, not a regular file",
		"out.lua: skipped: a link leading out of the scripts directory",
		"up.lua: skipped: a link leading out of the scripts directory",
	}
	if got := o.s.Skipped(); !reflect.DeepEqual(got, want) {
		t.Errorf("skipped %q, want %q", got, want)
	}
	for name, msg := range map[string]string{
		"fifo": "script fifo.lua is a FIFO, not a regular file",
		"out":  "script out.lua is a link leading out of the scripts directory",
	} {
		_, err := o.s.Start(context.Background(), luahost.Caller{Scope: "default", Thread: "main"}, luahost.StartRequest{Script: name, Wait: time.Minute})
		if err == nil || err.Error() != msg || !errors.Is(err, satchel.ErrInvalidArgument) {
			t.Errorf("start %s: %v, want %q", name, err, msg)
		}
	}
	rs, err := o.s.Start(context.Background(), luahost.Caller{Scope: "default", Thread: "main"}, luahost.StartRequest{Script: "in", Wait: time.Minute})
	if err != nil || rs.State != "succeeded" || rs.Printed != "a\n" {
		t.Errorf("start in: %+v %v", rs, err)
	}
}
