// Command satchel is the command-line interface of satchel, the versioned
// workspace store for AI agents. Run `satchel --help` for its commands.
package main

import (
	"os"

	"github.com/satchel-dev/satchel/internal/cli"
	"github.com/satchel-dev/satchel/luahost"
)

func main() {
	luahost.ChildMain() // a script's run, when started as its child process
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
