package luahost

import (
	"fmt"

	"github.com/satchel-dev/satchel"
)

var (
	errBothInputs = &satchel.Error{Kind: satchel.ErrInvalidArgument,
		Msg: "input_file and input_text are mutually exclusive; specify one, not both"}
	errNoInput = &satchel.Error{Kind: satchel.ErrInvalidArgument,
		Msg: "input_file or input_text was provided but the script declares no input"}
)

// InputSource is what a caller gave as a script's input: a file to read
// (File, read with Read) or a text, or neither.
type InputSource struct {
	File    string
	HasFile bool
	Text    string
	HasText bool
	// Read reads File: the host file system for the CLI, the caller's
	// workspace for the MCP server.
	Read func(name string) (string, error)
}

// ResolveInput returns the content to write at the script's declared
// input path (nil: none), with the refusals in this order:
// `input_file and input_text are mutually exclusive; specify one, not
// both`, `input_file or input_text was provided but the script declares
// no input`, `cannot read input_file "F": REASON`.
func (s *Script) ResolveInput(in InputSource) (*string, error) {
	switch {
	case in.HasFile && in.HasText:
		return nil, errBothInputs
	case !in.HasFile && !in.HasText:
		return nil, nil
	case s.Front.Input == nil:
		return nil, errNoInput
	case in.HasText:
		return &in.Text, nil
	}
	content, err := in.Read(in.File)
	if err != nil {
		return nil, &Error{Msg: fmt.Sprintf("cannot read input_file %q: %s", in.File, err), Err: err}
	}
	return &content, nil
}
