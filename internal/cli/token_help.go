package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
)

// globalHelp makes the help and usage of cmd show global flags as cmd
// takes them: with the usage given (by name), and without the default the
// other commands fall back to (token create requires --scope, and binds a
// thread only when --thread is given).
func globalHelp(cmd *cobra.Command, usages map[string]string) {
	with := func(c *cobra.Command, fn func()) {
		inherited := c.InheritedFlags()
		for name, usage := range usages {
			if f := inherited.Lookup(name); f != nil {
				def, use := f.DefValue, f.Usage
				f.DefValue, f.Usage = "", usage
				defer func() { f.DefValue, f.Usage = def, use }()
			}
		}
		fn()
	}
	cmd.SetHelpFunc(func(c *cobra.Command, args []string) {
		// The root's help, run on c (cobra's default prints c's).
		with(c, func() { c.Root().HelpFunc()(c, args) })
	})
	cmd.SetUsageFunc(func(c *cobra.Command) error {
		var err error
		with(c, func() {
			c.SetUsageFunc(nil)
			defer globalHelp(cmd, usages)
			err = c.Usage()
		})
		return err
	})
}

// unknownAgentWarning says, when the project of the working directory
// (the nearest directory up from it holding satchel.json or agents/)
// defines no agent named agent, that serve will refuse the token's
// sessions; "" when it defines it, or when there is no project to ask.
func unknownAgentWarning(agent string) string {
	dir, ok := nearestProject(".")
	if !ok {
		return ""
	}
	p, err := satchel.LoadProject(dir)
	if err != nil || slices.Contains(p.Agents(), agent) {
		return ""
	}
	agents := "none"
	if len(p.Agents()) > 0 {
		agents = strings.Join(p.Agents(), ", ")
	}
	return fmt.Sprintf("warning: the project at %s defines no agent %s (agents: %s); satchel serve --dir %s refuses this token's sessions until agents/%s/agent.json exists",
		dir, agent, agents, dir, agent)
}

// nearestProject finds the project directory of dir: dir or its nearest
// parent holding satchel.json or agents/.
func nearestProject(dir string) (string, bool) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	for {
		for _, name := range []string{ProjectFileName, "agents"} {
			if _, err := os.Stat(filepath.Join(abs, name)); err == nil {
				return abs, true
			}
		}
		parent := filepath.Dir(abs)
		if parent == abs {
			return "", false
		}
		abs = parent
	}
}
