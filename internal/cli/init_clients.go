package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
)

// clients are the MCP client configurations that start `satchel serve`
// on a project over stdio, every path absolute: a client starts the
// server in a working directory of its choosing.
type clients struct {
	command string
	args    []string
}

func clientConfigs(command, db, dir, agent, scripts string) clients {
	args := []string{"serve", "--db", db, "--dir", dir}
	if agent != "" {
		args = append(args, "--agent", agent)
	}
	if scripts != "" {
		args = append(args, "--scripts", scripts)
	}
	return clients{command: command, args: args}
}

// stdioServer is one server entry of a client's configuration, its
// members in the order the clients' documentation shows them.
type stdioServer struct {
	Type    string   `json:"type,omitempty"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// mcpServers is the shape Claude Desktop and Cursor read.
func (c clients) mcpServers() map[string]any {
	return map[string]any{"mcpServers": map[string]any{"satchel": stdioServer{Command: c.command, Args: c.args}}}
}

// vscode is the shape of VS Code's mcp.json.
func (c clients) vscode() map[string]any {
	return map[string]any{"servers": map[string]any{"satchel": stdioServer{Type: "stdio", Command: c.command, Args: c.args}}}
}

// claudeCode is the command that adds the server to Claude Code.
func (c clients) claudeCode() string {
	words := append([]string{"claude", "mcp", "add", "satchel", "--", c.command}, c.args...)
	for i, w := range words {
		words[i] = shellQuote(w)
	}
	return strings.Join(words, " ")
}

func (c clients) json() map[string]any {
	return map[string]any{
		"claude_desktop": c.mcpServers(),
		"cursor":         c.mcpServers(),
		"vscode":         c.vscode(),
		"claude_code":    c.claudeCode(),
	}
}

// text is the configurations as init prints them, ready to paste.
func (c clients) text() string {
	var b strings.Builder
	b.WriteString("Claude Desktop (claude_desktop_config.json) and Cursor (.cursor/mcp.json, or ~/.cursor/mcp.json):\n")
	b.WriteString(indentJSON(c.mcpServers()))
	b.WriteString("\nVS Code (.vscode/mcp.json):\n")
	b.WriteString(indentJSON(c.vscode()))
	b.WriteString("\nClaude Code:\n")
	b.WriteString(c.claudeCode() + "\n")
	if !filepath.IsAbs(c.command) {
		b.WriteString("\n(satchel is not on PATH: install it with go install ./cmd/satchel, or put its absolute path in \"command\".)\n")
	}
	return b.String()
}

func indentJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
	return b.String()
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
