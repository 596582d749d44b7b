package luahost

import (
	"fmt"

	"github.com/satchel-dev/satchel"
)

var errNoInput = noInput("input_file", "input_text")

func noInput(file, text string) error {
	return &satchel.Error{Kind: satchel.ErrInvalidArgument,
		Msg: file + " or " + text + " was provided but the script declares no input"}
}

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
	// FileName and TextName are what the caller calls the two
	// (default input_file and input_text, the MCP arguments; the CLI's
	// are --input-file and --input-text), for the refusals.
	FileName, TextName string
}

// ResolveInput returns the content to write at the script's declared
// input path (nil: none), with the refusals in this order:
// `input_file and input_text are mutually exclusive; specify one, not
// both`, `input_file or input_text was provided but the script declares
// no input`, `cannot read input_file "F": REASON`.
// Another FileName and TextName replace the two names.
func (s *Script) ResolveInput(in InputSource) (*string, error) {
	file, text := in.FileName, in.TextName
	if file == "" {
		file = "input_file"
	}
	if text == "" {
		text = "input_text"
	}
	switch {
	case in.HasFile && in.HasText:
		return nil, &satchel.Error{Kind: satchel.ErrInvalidArgument,
			Msg: file + " and " + text + " are mutually exclusive; specify one, not both"}
	case !in.HasFile && !in.HasText:
		return nil, nil
	case s.Front.Input == nil:
		return nil, noInput(file, text)
	case in.HasText:
		return &in.Text, nil
	}
	content, err := in.Read(in.File)
	if err != nil {
		return nil, &Error{Msg: fmt.Sprintf("cannot read %s %q: %s", file, in.File, err), Err: err}
	}
	return &content, nil
}
