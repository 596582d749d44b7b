package luahost

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/satchel-dev/satchel"
)

// Frontmatter is what a script declares about itself, in a Lua block
// comment that opens its first line:
//
//	--[[
//	name: summarize
//	description: Summarize the input into notes/summary.md
//	input: {path: input.md, description: the text to summarize}
//	output: notes/summary.md
//	]]
//
// The comment holds YAML; unknown keys are refused. input and output are
// either a path or {path, description}.
type Frontmatter struct {
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	Input       *Decl  `json:"input,omitempty"`
	Output      *Decl  `json:"output,omitempty"`
}

// Decl is a declared input or output: a workspace path and what it holds.
type Decl struct {
	Path        string `json:"path"`
	Description string `json:"description,omitempty"`
}

// UnmarshalYAML accepts a path alone or {path, description}.
func (d *Decl) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		return n.Decode(&d.Path)
	}
	var full struct {
		Path        string `yaml:"path"`
		Description string `yaml:"description"`
	}
	if err := decodeStrict(n, &full); err != nil {
		return err
	}
	d.Path, d.Description = full.Path, full.Description
	return nil
}

// decodeStrict decodes n into v, refusing keys v has no field for.
func decodeStrict(n *yaml.Node, v any) error {
	b, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	return dec.Decode(v)
}

// maxFrontmatter bounds the frontmatter block.
const maxFrontmatter = 64 << 10

// parseFrontmatter reads the frontmatter of src, if its first line opens
// a block comment `--[[`. It returns nothing when there is none.
func parseFrontmatter(name, src string) (Frontmatter, error) {
	var fm Frontmatter
	src = strings.TrimPrefix(src, "\ufeff")
	if strings.HasPrefix(src, "#!") { // a shebang line: Lua skips it too
		if i := strings.IndexByte(src, '\n'); i >= 0 {
			src = src[i+1:]
		}
	}
	if !strings.HasPrefix(src, "--[[") {
		return fm, nil
	}
	end := strings.Index(src, "]]")
	if end < 0 {
		return fm, fmt.Errorf("%s: frontmatter: the --[[ comment of the first line is not closed with ]]", name)
	}
	body := src[len("--[["):end]
	if len(body) > maxFrontmatter {
		return fm, fmt.Errorf("%s: frontmatter: over %d bytes", name, maxFrontmatter)
	}
	if strings.TrimSpace(body) == "" {
		return fm, nil
	}
	dec := yaml.NewDecoder(strings.NewReader(body))
	dec.KnownFields(true)
	if err := dec.Decode(&fm); err != nil {
		return Frontmatter{}, fmt.Errorf("%s: frontmatter: %s", name, yamlMessage(err))
	}
	var problems []string
	for _, d := range []struct {
		key string
		d   *Decl
	}{{"input", fm.Input}, {"output", fm.Output}} {
		if d.d == nil {
			continue
		}
		if err := satchel.ValidPath(d.d.Path); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %s", d.key, err))
		}
	}
	if len(problems) > 0 {
		return Frontmatter{}, &satchel.Error{Kind: satchel.ErrInvalidArgument,
			Msg: fmt.Sprintf("%s: frontmatter: %s", name, strings.Join(problems, "; "))}
	}
	return fm, nil
}

// yamlMessage makes the YAML library's errors read as one line:
// "line 3: field inputs not found in type luahost.Frontmatter" becomes
// "line 3: unknown key inputs".
func yamlMessage(err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs := make([]string, len(te.Errors))
		for i, m := range te.Errors {
			msgs[i] = unknownKey(m)
		}
		return strings.Join(msgs, "; ")
	}
	return strings.TrimPrefix(err.Error(), "yaml: ")
}

func unknownKey(m string) string {
	if i := strings.Index(m, "field "); i >= 0 {
		if j := strings.Index(m, " not found in type"); j > i {
			return m[:i] + "unknown key " + m[i+len("field "):j]
		}
	}
	return m
}
