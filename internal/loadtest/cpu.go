package loadtest

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// clockTick is USER_HZ, the unit of /proc's CPU times (100 on Linux).
const clockTick = 100

// CPUSample is the machine's CPU times and PostgreSQL's, from /proc.
type CPUSample struct {
	at         time.Time
	busy, idle float64 // seconds, all cores
	postgres   float64 // seconds, every process named postgres
	satchel    float64 // seconds, the client processes
	self       float64 // seconds, this process (the bench and its proxy)
	ok         bool
}

// CPUShares says where the CPU went during a run, in cores (seconds of
// CPU per second of wall time).
type CPUShares struct {
	Satchel, Postgres, Other, Idle float64
	// Self is this process's share (in W5, the bench and its delay
	// proxy), part of Other.
	Self  float64
	Cores int
	// IdleShare is the machine's idle share of its CPU time, 0 to 1.
	IdleShare float64
	// Seconds is the wall time between the samples.
	Seconds float64
}

// SampleCPU samples the machine, PostgreSQL's processes and the client
// processes (by pid). PostgreSQL's are the backends given by pid, or,
// when backends is nil, every process named postgres.
func SampleCPU(clients, backends []int) CPUSample {
	s := CPUSample{at: time.Now()}
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return s
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
	if len(f) < 9 || f[0] != "cpu" {
		return s
	}
	v := func(i int) float64 { n, _ := strconv.ParseFloat(f[i], 64); return n / clockTick }
	s.busy = v(1) + v(2) + v(3) + v(6) + v(7) + v(8)
	s.idle = v(4) + v(5)
	if backends == nil {
		dirs, _ := filepath.Glob("/proc/[0-9]*")
		for _, d := range dirs {
			name, secs, ok := procCPU(d)
			if ok && name == "postgres" {
				s.postgres += secs
			}
		}
	}
	for _, pid := range backends {
		if _, secs, ok := procCPU("/proc/" + strconv.Itoa(pid)); ok {
			s.postgres += secs
		}
	}
	for _, pid := range clients {
		if _, secs, ok := procCPU("/proc/" + strconv.Itoa(pid)); ok {
			s.satchel += secs
		}
	}
	if _, secs, ok := procCPU("/proc/self"); ok {
		s.self = secs
	}
	s.ok = true
	return s
}

// procCPU reads a process's name and CPU time (user and system) from its
// /proc directory.
func procCPU(dir string) (string, float64, bool) {
	b, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return "", 0, false
	}
	st := string(b)
	open, close := strings.IndexByte(st, '('), strings.LastIndexByte(st, ')')
	if open < 0 || close < open {
		return "", 0, false
	}
	rest := strings.Fields(st[close+1:]) // state ppid ... utime(12) stime(13)
	if len(rest) < 13 {
		return "", 0, false
	}
	ut, _ := strconv.ParseFloat(rest[11], 64)
	stime, _ := strconv.ParseFloat(rest[12], 64)
	return st[open+1 : close], (ut + stime) / clockTick, true
}

// Since returns the shares from s0 to s. Both samples are taken while the
// clients run, so their connections' server processes are alive at both.
func (s CPUSample) Since(s0 CPUSample) CPUShares {
	el := s.at.Sub(s0.at).Seconds()
	out := CPUShares{Cores: runtime.NumCPU(), Seconds: el}
	if !s.ok || !s0.ok || el <= 0 {
		return out
	}
	out.Satchel = max(0, s.satchel-s0.satchel) / el
	out.Postgres = max(0, s.postgres-s0.postgres) / el
	out.Self = max(0, s.self-s0.self) / el
	out.Other = max(0, (s.busy-s0.busy)/el-out.Satchel-out.Postgres)
	out.Idle = (s.idle - s0.idle) / el
	if all := (s.busy + s.idle) - (s0.busy + s0.idle); all > 0 {
		out.IdleShare = (s.idle - s0.idle) / all
	}
	return out
}
