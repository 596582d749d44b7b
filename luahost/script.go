package luahost

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"

	"github.com/satchel-dev/satchel"
)

// MaxScriptBytes bounds a script's source.
const MaxScriptBytes = 4 << 20

// Script is a compiled script and its frontmatter. Compile it once and
// run it as often as needed, concurrently too: the compiled code is
// immutable and shared by every run.
type Script struct {
	// Name is the name errors give for the script ("summarize.lua:12: ...").
	Name string
	// Front is what the script declares (name, description, input, output).
	Front Frontmatter

	proto *lua.FunctionProto
	src   string // what a child process compiles again
}

// Load reads and compiles the script at path; errors name it by its base
// name.
func Load(path string) (*Script, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read script %q: %w", path, unwrapPathError(err))
	}
	if fi.Size() > MaxScriptBytes {
		return nil, &satchel.Error{Kind: satchel.ErrLimitExceeded,
			Msg: fmt.Sprintf("script %s is %d bytes, over the limit of %d", path, fi.Size(), MaxScriptBytes)}
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read script %q: %w", path, unwrapPathError(err))
	}
	return Compile(filepath.Base(path), string(src))
}

// unwrapPathError drops the *fs.PathError's repetition of the path.
func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// Compile parses the frontmatter of src and compiles it. name is what
// errors call the script.
func Compile(name, src string) (*Script, error) {
	if len(src) > MaxScriptBytes {
		return nil, &satchel.Error{Kind: satchel.ErrLimitExceeded,
			Msg: fmt.Sprintf("script %s is %d bytes, over the limit of %d", name, len(src), MaxScriptBytes)}
	}
	fm, err := parseFrontmatter(name, src)
	if err != nil {
		return nil, err
	}
	body := strings.TrimPrefix(src, "\ufeff")
	if strings.HasPrefix(body, "#!") {
		body = "--" + body // keep the line count
	}
	chunk, err := parse.Parse(strings.NewReader(body), name)
	if err != nil {
		return nil, &satchel.Error{Kind: satchel.ErrInvalidArgument, Msg: syntaxMessage(name, err)}
	}
	hookConcat(chunk)
	proto, err := lua.Compile(chunk, name)
	if err != nil {
		return nil, &satchel.Error{Kind: satchel.ErrInvalidArgument, Msg: syntaxMessage(name, err)}
	}
	noTailCalls(proto)
	return &Script{Name: name, Front: fm, proto: proto, src: src}, nil
}

// syntaxMessage puts the parser's error on one line after the script's
// name, as a runtime error reads.
func syntaxMessage(name string, err error) string {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	if !strings.HasPrefix(msg, name) {
		msg = name + ": " + msg
	}
	return msg
}
