// Package loopback tells whether an address or a request stays on this
// machine: the network listeners (the MCP server over HTTP, the inspector)
// serve strangers nothing, and are open without a token only on loopback.
package loopback

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Host reports whether a host (with or without a port) is "localhost" or
// a loopback IP address.
func Host(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// Arrived reports whether r came in on a loopback address of this server.
func Arrived(r *http.Request) bool {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return ok && la != nil && Host(la.String())
}
