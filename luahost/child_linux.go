//go:build linux

package luahost

import (
	"os"
	"syscall"
	"time"
)

// sysProcAttr makes the kernel kill a child whose parent dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// applyLimits sets the child's own limits before the run: its data
// segment (which counts the runtime's anonymous mappings since Linux
// 4.7) and its CPU time.
func applyLimits(lim limits) {
	data := uint64(lim.maxMemory) + memoryHeadroom
	_ = syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: data, Max: data})
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	used := uint64(ru.Utime.Sec + ru.Stime.Sec + 1)
	cpu := used + cpuSeconds(lim.timeout)
	_ = syscall.Setrlimit(syscall.RLIMIT_CPU, &syscall.Rlimit{Cur: cpu, Max: cpu})
}

// overCPU says whether a dead child had used its CPU time.
func overCPU(st *os.ProcessState, timeout time.Duration) bool {
	if st == nil {
		return false
	}
	return st.SystemTime()+st.UserTime() >= time.Duration(cpuSeconds(timeout))*time.Second-time.Second
}

// killedBySystem says whether a dead child was killed by the kernel (its
// out-of-memory killer; the parent's kills are told apart before).
func killedBySystem(st *os.ProcessState) bool {
	if st == nil {
		return false
	}
	ws, ok := st.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// threadStack is the stack size of the child's threads. The C library
// gives every thread a stack of RLIMIT_STACK (8 MiB by default), which the
// data limit counts: the child lowers it and starts itself again, so that
// its threads take 1 MiB each.
const threadStack = 1 << 20

func smallStacks() {
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_STACK, &lim) != nil || lim.Cur <= threadStack {
		return
	}
	lim.Cur = threadStack
	if syscall.Setrlimit(syscall.RLIMIT_STACK, &lim) != nil {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	_ = syscall.Exec(exe, os.Args, os.Environ()) // returns only if it failed
}

// maxRSS is the most memory a dead child held, in bytes.
func maxRSS(st *os.ProcessState) int64 {
	if st == nil {
		return 0
	}
	ru, ok := st.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	return ru.Maxrss << 10
}
