//go:build !linux

package luahost

import (
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

func maxRSS(*os.ProcessState) int64 { return 0 }
