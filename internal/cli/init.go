package cli

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
)

// template is the example project init writes: a store, an agent granted
// it, and a Lua script. TestInit checks that it passes satchel check.
//
//go:embed template
var template embed.FS

// exampleAgent is the agent of the template, which the printed client
// configurations serve.
const exampleAgent = "research"

// initResult is what `init --json` prints.
type initResult struct {
	Dir         string         `json:"dir"`
	Created     []string       `json:"created"`
	DB          string         `json:"db"`
	ProjectFile string         `json:"project_file"`
	Stores      []string       `json:"stores"`
	Agents      []string       `json:"agents"`
	Clients     map[string]any `json:"clients"`
}

// newInitCmd: satchel init [DIR] makes a working project: an example store,
// agent and Lua script, the project file naming its database, the
// database, and the MCP client configurations that serve it.
func newInitCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "init [DIR]",
		GroupID: groupAdmin,
		Short:   "Create a project: example store, agent and script, database, client configurations",
		Long: `Init makes DIR (default .) a working satchel project:

  stores/notes.json            an example collection (see "satchel schema store")
  agents/research/agent.json   an agent granted it (read and write)
  scripts/summarize.lua        an example Lua script (satchel run)
  satchel.json                 the project file: {"db": ...}, the project's database
  satchel.db                   the database (SQLite), with its migrations applied

The database is --db (or $SATCHEL_DB) when given, else DIR/satchel.db;
the project file names it (relative to DIR when it lies inside), so that
"--dir DIR" finds it from any working directory. Existing files are left as
they are: running init again creates only what is missing.

It then checks the project as "satchel check" does, and prints the MCP
client configurations (Claude Desktop, Claude Code, Cursor, VS Code) that
serve the agent research and the scripts of DIR/scripts (run_script), with
absolute paths: an MCP client starts the server in a working directory of
its own choosing.

With --json: {"dir", "created", "db", "project_file", "stores", "agents",
"clients"}.`,
		Example: `  satchel init research-project
  satchel init . --db postgres://localhost/satchel`,
		Args: argsBetween(nil, "DIR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			return runInit(cmd, a, dir)
		},
	}
}

func runInit(cmd *cobra.Command, a *app, dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	r := initResult{Dir: abs, ProjectFile: filepath.Join(abs, ProjectFileName)}
	if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
		return refuse("cannot make a project in %s: it is a file", abs)
	}
	if err := writeTemplate(abs, &r.Created); err != nil {
		return err
	}

	// The database: the one the command line names, else the one an
	// existing project file names, else DIR/satchel.db.
	db, explicit := a.explicitDB()
	pf, found, err := ReadProjectFile(abs)
	if err != nil {
		return err
	}
	switch {
	case explicit:
		if found && resolveDB(abs, pf.DB) != resolveDB(abs, db) {
			a.notice("note: %s names the database %s, not %s; it is left as it is", r.ProjectFile, pf.DB, db)
		}
	case found:
		db = resolveDB(abs, pf.DB)
	default:
		db = filepath.Join(abs, "satchel.db")
	}
	if !found {
		b, _ := json.MarshalIndent(ProjectFile{DB: projectDBEntry(abs, db)}, "", "  ")
		if err := createFile(r.ProjectFile, append(b, '\n'), &r.Created); err != nil {
			return err
		}
	}
	r.DB = resolveDB(".", db)
	if !isURLDSN(r.DB) {
		if _, err := os.Stat(strings.TrimPrefix(r.DB, "file:")); errors.Is(err, fs.ErrNotExist) {
			r.Created = append(r.Created, strings.TrimPrefix(r.DB, "file:"))
		}
	}
	st, err := a.openStore(cmd.Context(), r.DB)
	if err != nil {
		return err
	}
	a.store = st

	p, err := satchel.LoadProject(abs)
	if err != nil {
		return err
	}
	r.Stores, r.Agents = nonEmpty(p.Stores()), nonEmpty(p.Agents())
	agent := exampleAgent
	if !contains(r.Agents, agent) {
		agent = ""
		if len(r.Agents) > 0 {
			agent = r.Agents[0]
		}
	}
	scripts := ""
	if fi, err := os.Stat(filepath.Join(abs, "scripts")); err == nil && fi.IsDir() {
		scripts = filepath.Join(abs, "scripts")
	}
	cfg := clientConfigs(satchelCommand(), r.DB, abs, agent, scripts)
	r.Clients = cfg.json()
	r.Created = nonEmpty(r.Created)
	return a.emit(r, func(w io.Writer) error {
		for _, p := range r.Created {
			fmt.Fprintf(w, "created %s\n", p)
		}
		fmt.Fprintf(w, "database %s\n", r.DB)
		fmt.Fprintf(w, "ok: %s (%s), %s (%s)\n\n", nouns(len(r.Stores), "store", "stores"), strings.Join(r.Stores, ", "), nouns(len(r.Agents), "agent", "agents"), strings.Join(r.Agents, ", "))
		if _, err := io.WriteString(w, cfg.text()); err != nil {
			return err
		}
		script := filepath.Join(abs, "scripts", "summarize.lua")
		if _, err := os.Stat(script); err != nil {
			return nil
		}
		_, err := fmt.Fprintf(w, "\nThe example script: %s\n", shellQuote(satchelCommand())+" --db "+shellQuote(r.DB)+" run "+shellQuote(script)+" --input-file FILE")
		return err
	})
}

// explicitDB returns the database the command line or the environment
// names, if any.
func (a *app) explicitDB() (string, bool) {
	if a.root != nil && a.root.PersistentFlags().Changed("db") {
		return a.db, true
	}
	if v := a.getenv("SATCHEL_DB"); v != "" {
		return v, true
	}
	return "", false
}

// writeTemplate writes the files of the template into dir that are not
// there yet, adding each to created.
func writeTemplate(dir string, created *[]string) error {
	return fs.WalkDir(template, "template", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := template.ReadFile(p)
		if err != nil {
			return err
		}
		return createFile(filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(p, "template/"))), b, created)
	})
}

// createFile writes b at name unless a file is there already, making
// its directory; what it creates is added to created.
func createFile(name string, b []byte, created *[]string) error {
	if _, err := os.Lstat(name); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(name)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(name)
		return err
	}
	*created = append(*created, name)
	return nil
}

// satchelCommand is the absolute path of the satchel binary to put in
// client configurations: this one, unless it is a temporary build (go
// run, a test), then the satchel on PATH, else "satchel".
func satchelCommand() string {
	if exe, err := os.Executable(); err == nil {
		if resolved, err := filepath.EvalSymlinks(exe); err == nil {
			exe = resolved
		}
		if filepath.Base(exe) == "satchel" && !strings.Contains(exe, string(filepath.Separator)+"go-build") {
			return exe
		}
	}
	if p, err := exec.LookPath("satchel"); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	return "satchel"
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
