package luahost

import (
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// TestPanicCarriesLine: a Go panic inside a library function (a nil
// pointer, say) still reads `script.lua:LINE: ...`, the line of the call.
func TestPanicCarriesLine(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	L.SetGlobal("lib", L.NewFunction(func(*lua.LState) int {
		var p *struct{ n int }
		return p.n // a nil pointer
	}))
	fn, err := L.Load(strings.NewReader("local s = 'a'\nfor w in (s .. \"\\n\"):gmatch('a') do\n  lib(w)\nend"), "script.lua")
	if err != nil {
		t.Fatal(err)
	}
	L.Push(fn)
	err = L.PCall(0, 0, nil)
	r := &run{script: &Script{Name: "script.lua"}}
	got := r.scriptError(err)
	if !strings.HasPrefix(got, "script.lua:3: ") || !strings.Contains(got, "nil pointer") {
		t.Errorf("got %q, want script.lua:3: and the panic", got)
	}
	for _, c := range [][3]string{
		{"script.lua:2: x", "\tscript.lua:9: in main chunk", "script.lua:2: x"},
		{"boom", "stack traceback:\n\t[G]: in function 'f'\n\tscript.lua:12: in main chunk", "script.lua:12: boom"},
		{"boom", "\tother.lua:1: in x", "boom"},
	} {
		if got := atLine("script.lua", c[0], c[1]); got != c[2] {
			t.Errorf("atLine(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}
