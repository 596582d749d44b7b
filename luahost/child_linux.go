//go:build linux

package luahost

import (
	"io"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// sysProcAttr makes the kernel kill a child whose parent dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// applyLimits sets the child's own limits before the run: its data
// segment (which counts the runtime's anonymous mappings since Linux
// 4.7) and its CPU time. A binary built with -race leaves the data
// segment alone (race.go).
func applyLimits(lim limits) {
	if !raceDetector {
		data := dataLimit(lim.maxMemory)
		_ = syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: data, Max: data})
	}
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
	exe, err := executable()
	if err != nil {
		return
	}
	_ = syscall.Exec(exe, os.Args, os.Environ()) // returns only if it failed
}

// childPipes are the child's stdin and stdout made non-blocking, so that
// its goroutines wait on them in the runtime's poller rather than in a
// thread each.
func childPipes() (io.Reader, io.Writer) {
	in, out := io.Reader(os.Stdin), io.Writer(os.Stdout)
	if syscall.SetNonblock(0, true) == nil {
		in = os.NewFile(0, "stdin")
	}
	if syscall.SetNonblock(1, true) == nil {
		out = os.NewFile(1, "stdout")
	}
	return in, out
}

// executable is the program to start as a child: the running binary
// itself, even when its file was replaced or removed since it started (an
// upgrade under a running server).
func executable() (string, error) {
	if _, err := os.Stat("/proc/self/exe"); err == nil {
		return "/proc/self/exe", nil
	}
	return os.Executable()
}

// widenPipe makes the pipe r reads from hold up to pipeBytes, where the
// system allows it (best effort: a pipe keeps its size otherwise).
func widenPipe(r io.Reader) {
	f, ok := r.(*os.File)
	if !ok {
		return
	}
	sc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = sc.Control(func(fd uintptr) {
		_, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeBytes)
	})
}
