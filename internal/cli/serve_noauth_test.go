package cli

import "testing"

func TestServeInsecureNoAuthRefusals(t *testing.T) {
	h := newHarness(t)
	h.refused("refusing to listen on 0.0.0.0:0 without authentication: --insecure-no-auth is allowed only on a loopback address (127.0.0.1, [::1] or localhost)",
		"serve", "--http", "0.0.0.0:0", "--insecure-no-auth")
	h.refused("refusing to listen on :0 without authentication: --insecure-no-auth is allowed only on a loopback address (127.0.0.1, [::1] or localhost)",
		"serve", "--http", ":0", "--insecure-no-auth")
	h.usage("--insecure-no-auth applies to --http only", "serve", "--insecure-no-auth")
}
