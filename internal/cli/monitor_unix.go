//go:build unix

package cli

import "syscall"

func reexec(exe string, args, env []string) error { return syscall.Exec(exe, args, env) }
