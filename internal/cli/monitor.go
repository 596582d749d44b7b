package cli

import (
	"os"
	"strings"
)

// MayReexec is set by the satchel command (cmd/satchel), not by tests
// that run the CLI in their own process: it lets serve --http restart the
// binary it runs in (keepMonitorAwake).
var MayReexec bool

// monitorSetting is the GODEBUG setting serve --http runs with: the
// runtime's scheduler trace every 2^31-1 ms (24.8 days), its largest
// period. A trace period keeps the runtime's monitor thread (sysmon) from
// its deep sleep while the process idles; without one, the first system
// call after an idle moment wakes it and it polls every 20 µs for the
// next millisecond or more, each poll a context switch that a virtual
// machine's hypervisor charges for: a quarter of the server's CPU for an
// agent's calls one at a time over HTTP (decision 0102). The cost: the
// monitor wakes every 10 ms while the process idles, and the runtime
// prints one SCHED line on standard error each 24.8 days of the host's
// uptime.
const monitorSetting = "schedtrace=2147483647"

// monitorEnv returns the environment serve --http restarts with, and
// false when there is nothing to change: GODEBUG names schedtrace already
// (the setting is there, or the user chose another, "schedtrace=0"
// included, which turns it off).
func monitorEnv(env []string) ([]string, bool) {
	out := make([]string, 0, len(env)+1)
	set := false
	for _, kv := range env {
		v, ok := strings.CutPrefix(kv, "GODEBUG=")
		if !ok {
			out = append(out, kv)
			continue
		}
		for _, s := range strings.Split(v, ",") {
			if strings.HasPrefix(strings.TrimSpace(s), "schedtrace=") {
				return env, false
			}
		}
		if v != "" {
			v += ","
		}
		out = append(out, "GODEBUG="+v+monitorSetting)
		set = true
	}
	if !set {
		out = append(out, "GODEBUG="+monitorSetting)
	}
	return out, true
}

// keepMonitorAwake restarts this binary, in this process (same pid, same
// descriptors), with monitorSetting added to GODEBUG, unless it is there
// or the platform cannot. It returns only when it did not restart.
func keepMonitorAwake() {
	if !MayReexec {
		return
	}
	env, change := monitorEnv(os.Environ())
	if !change {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	_ = reexec(exe, os.Args, env) // on failure, serve on as this process is
}
