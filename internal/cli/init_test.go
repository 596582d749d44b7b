package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yuin/gopher-lua/parse"
	"go.yaml.in/yaml/v3"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/tooldesc"
)

func mainIn(t *testing.T, args ...string) (string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	if code := Main(args, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("satchel %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
	}
	return out.String(), errb.String()
}

func TestInit(t *testing.T) {
	t.Setenv("SATCHEL_DB", "")
	proj := filepath.Join(t.TempDir(), "proj")
	db := filepath.Join(proj, "satchel.db")
	out, _ := mainIn(t, "init", proj)
	for _, p := range []string{"stores/notes.json", "agents/research/agent.json", "scripts/summarize.lua", "satchel.json", "satchel.db"} {
		full := filepath.Join(proj, filepath.FromSlash(p))
		if _, err := os.Stat(full); err != nil {
			t.Errorf("init did not create %s: %v", p, err)
		}
		if !strings.Contains(out, "created "+full+"\n") {
			t.Errorf("output does not list %s as created:\n%s", full, out)
		}
	}
	// The database is the project's own, and the project file names it.
	if got, found, err := ProjectDB(proj); err != nil || !found || got != db {
		t.Errorf("ProjectDB = %q, %v, %v; want %q", got, found, err, db)
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "satchel.json")); !strings.Contains(string(b), `"db": "satchel.db"`) {
		t.Errorf("satchel.json = %s, want the database relative to the project", b)
	}
	if _, err := os.Stat("satchel.db"); err == nil {
		t.Errorf("init made ./satchel.db in the working directory")
	}

	// The example project passes satchel check, and the agent gets the
	// store's tools.
	if got, _ := mainIn(t, "check", "--dir", proj); got != "ok: 1 store (notes), 1 agent (research)\n" {
		t.Errorf("check: %q", got)
	}
	p, err := satchel.LoadProject(proj)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := p.Tools("research")
	if err != nil || len(tools) != 5 {
		t.Errorf("agent research has %d tools (%v), want get, set, query, list, remove", len(tools), err)
	}

	// The client configurations are printed with absolute paths.
	var r initResult
	jout, _ := mainIn(t, "init", proj, "--json")
	if err := json.Unmarshal([]byte(jout), &r); err != nil {
		t.Fatalf("init --json: %v: %s", err, jout)
	}
	if len(r.Created) != 0 {
		t.Errorf("a second init created %v", r.Created)
	}
	wantArgs := []any{"serve", "--db", db, "--dir", proj, "--agent", "research", "--scripts", filepath.Join(proj, "scripts")}
	for _, name := range []string{"claude_desktop", "cursor"} {
		srv := r.Clients[name].(map[string]any)["mcpServers"].(map[string]any)["satchel"].(map[string]any)
		checkClient(t, name, srv, wantArgs)
	}
	checkClient(t, "vscode", r.Clients["vscode"].(map[string]any)["servers"].(map[string]any)["satchel"].(map[string]any), wantArgs)
	if cc := r.Clients["claude_code"].(string); !strings.HasPrefix(cc, "claude mcp add satchel -- ") || !strings.HasSuffix(cc, "serve --db "+db+" --dir "+proj+" --agent research --scripts "+filepath.Join(proj, "scripts")) {
		t.Errorf("claude_code = %q", cc)
	}
	for _, want := range []string{"Claude Desktop", "Cursor", "VS Code", "Claude Code", `"--dir",`, proj} {
		if !strings.Contains(out, want) {
			t.Errorf("init's output does not mention %q:\n%s", want, out)
		}
	}
}

func checkClient(t *testing.T, name string, srv map[string]any, wantArgs []any) {
	t.Helper()
	if cmd, _ := srv["command"].(string); cmd != "satchel" && !filepath.IsAbs(cmd) {
		t.Errorf("%s: command %q is not absolute", name, cmd)
	}
	args, _ := srv["args"].([]any)
	if len(args) != len(wantArgs) {
		t.Fatalf("%s: args %v, want %v", name, args, wantArgs)
	}
	for i := range args {
		if args[i] != wantArgs[i] {
			t.Errorf("%s: args %v, want %v", name, args, wantArgs)
			break
		}
	}
}

// TestInitKeepsEdits: init creates only what is missing; an explicit
// --db names the database of a new project.
func TestInitKeepsEdits(t *testing.T) {
	t.Setenv("SATCHEL_DB", "")
	proj := t.TempDir()
	mine := filepath.Join(proj, "stores", "notes.json")
	if err := os.MkdirAll(filepath.Dir(mine), 0o755); err != nil {
		t.Fatal(err)
	}
	const def = `{"name": "notes", "key": "{id}", "schema": {"id": {"type": "string"}}}`
	if err := os.WriteFile(mine, []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "elsewhere.db")
	mainIn(t, "--db", other, "init", proj)
	if b, _ := os.ReadFile(mine); string(b) != def {
		t.Errorf("init overwrote stores/notes.json: %s", b)
	}
	if got, _, err := ProjectDB(proj); err != nil || got != other {
		t.Errorf("ProjectDB = %q, %v; want %q", got, err, other)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("the database was not created: %v", err)
	}
}

// TestInitScript checks the example script's frontmatter (a Lua block
// comment on the first line holding YAML) and that it is valid Lua.
func TestInitScript(t *testing.T) {
	src, err := template.ReadFile("template/scripts/summarize.lua")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	if !strings.HasPrefix(s, "--[[\n") {
		t.Fatalf("the script does not begin with a frontmatter block: %q", s[:20])
	}
	front, body, ok := strings.Cut(strings.TrimPrefix(s, "--[[\n"), "]]\n")
	if !ok {
		t.Fatal("the frontmatter block is not closed")
	}
	var fm struct {
		Name        string `yaml:"name"`
		Description string `yaml:"description"`
		Input       struct {
			Path, Description string
		} `yaml:"input"`
		Output struct {
			Path, Description string
		} `yaml:"output"`
	}
	dec := yaml.NewDecoder(strings.NewReader(front))
	dec.KnownFields(true)
	if err := dec.Decode(&fm); err != nil {
		t.Fatalf("frontmatter: %v", err)
	}
	if fm.Name != "summarize" || fm.Description == "" || fm.Input.Path != "input/document.md" || fm.Output.Path != "notes/summary.md" {
		t.Errorf("frontmatter = %+v", fm)
	}
	for _, use := range []string{"store.write(", "store.read(doc, 20, 40)", "untrusted("} {
		if !strings.Contains(body, use) {
			t.Errorf("the script does not show %s", use)
		}
	}
	if _, err := parse.Parse(strings.NewReader(s), "summarize.lua"); err != nil {
		t.Errorf("not valid Lua: %v", err)
	}
}

// TestInitScriptRuns runs the example script as satchel run does, with an
// input of 50 lines: it keeps lines 20 to 40, in the envelope.
func TestInitScriptRuns(t *testing.T) {
	proj := t.TempDir()
	mainIn(t, "--db", "memory:", "init", proj)
	var doc strings.Builder
	for i := 1; i <= 50; i++ {
		fmt.Fprintf(&doc, "line %d\n", i)
	}
	out, _ := mainIn(t, "--db", "memory:", "run", filepath.Join(proj, "scripts", "summarize.lua"), "first", "--input-text", doc.String())
	if !strings.HasPrefix(out, "# Summary of input/document.md\n\nThe text inside the untrusted_input_") ||
		!strings.Contains(out, "\nline 20\n") || !strings.Contains(out, "\nline 40\n") ||
		strings.Contains(out, "line 19\n") || strings.Contains(out, "line 41") {
		t.Errorf("the script printed:\n%s", out)
	}
}

// TestCollectionsDoc: docs/collections.md shows the store and agent that
// init writes, as they are.
func TestCollectionsDoc(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "collections.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"template/stores/notes.json", "template/agents/research/agent.json"} {
		b, err := template.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var want any
		_ = json.Unmarshal(b, &want)
		found := false
		for _, block := range strings.Split(string(doc), "```json\n")[1:] {
			block, _, _ = strings.Cut(block, "```")
			var got any
			if json.Unmarshal([]byte(block), &got) == nil && string(mustMarshal(got)) == string(mustMarshal(want)) {
				found = true
			}
		}
		if !found {
			t.Errorf("docs/collections.md does not show %s as init writes it", f)
		}
	}
}

func mustMarshal(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// TestInitConfigServes starts satchel serve with the arguments init
// prints, as a client would, and finds the agent's store tools and the
// script tools.
func TestInitConfigServes(t *testing.T) {
	proj := t.TempDir()
	var r initResult
	out, _ := mainIn(t, "--db", "memory:", "init", proj, "--json")
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, v := range r.Clients["claude_desktop"].(map[string]any)["mcpServers"].(map[string]any)["satchel"].(map[string]any)["args"].([]any) {
		args = append(args, v.(string))
	}
	h := newHarness(t)
	stdin, stdout, stderr, wait := h.serving(context.Background(), args...)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(),
		&mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range tools.Tools {
		names[tl.Name] = true
	}
	for _, want := range []string{"read_file", "store__notes__set", "store__notes__remove", "run_script"} {
		if !names[want] {
			t.Errorf("serving %q: no tool %s (tools: %v)", args, want, names)
		}
	}
	_ = cs.Close()
	if code := wait(); code != 0 {
		t.Errorf("serve exited %d: %s", code, stderr)
	}
}

// TestServedToolDescriptions checks every tool that serve lists for the
// project init makes, the script tools included, against its schema.
func TestServedToolDescriptions(t *testing.T) {
	proj := t.TempDir()
	mainIn(t, "--db", "memory:", "init", proj)
	h := newHarness(t)
	stdin, stdout, stderr, wait := h.serving(context.Background(), "serve", "--dir", proj, "--agent", "research", "--scripts", filepath.Join(proj, "scripts"))
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(),
		&mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, problem := range tooldesc.Check(tools.Tools, "") {
		t.Error(problem)
	}
	// The script tools have titles and an output schema, and speak of
	// MCP's arguments, not the CLI's flags.
	for _, tl := range tools.Tools {
		if tl.Name != "run_script" && tl.Name != "check_run" {
			continue
		}
		if tl.Title == "" || tl.OutputSchema == nil {
			t.Errorf("%s: title %q, output schema %v", tl.Name, tl.Title, tl.OutputSchema)
		}
		if strings.Contains(tl.Description, "--input-") {
			t.Errorf("%s names CLI flags: %s", tl.Name, tl.Description)
		}
	}
	_ = cs.Close()
	if code := wait(); code != 0 {
		t.Errorf("serve exited %d: %s", code, stderr)
	}
}
