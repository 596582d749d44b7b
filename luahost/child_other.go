//go:build !linux

package luahost

import (
	"io"
	"os"
	"syscall"
	"time"
)

func sysProcAttr() *syscall.SysProcAttr { return nil }

// applyLimits: outside Linux, the child bounds its memory by its
// runtime's limit only (debug.SetMemoryLimit) and the parent its time.
func applyLimits(limits) {}

func overCPU(*os.ProcessState, time.Duration) bool { return false }

func killedBySystem(*os.ProcessState) bool { return false }

func smallStacks() {}

func childPipes() (io.Reader, io.Writer) { return os.Stdin, os.Stdout }

func executable() (string, error) { return os.Executable() }

func widenPipe(io.Reader) {}
