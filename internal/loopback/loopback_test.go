package loopback

import "testing"

func TestHost(t *testing.T) {
	for in, want := range map[string]bool{
		"127.0.0.1": true, "127.0.0.1:8765": true, "[::1]:80": true, "::1": true,
		"localhost": true, "LOCALHOST:1": true, "127.1.2.3:9": true,
		"0.0.0.0:80": false, "10.0.0.1": false, "example.com": false, "localhost.evil.com": false, "": false,
	} {
		if got := Host(in); got != want {
			t.Errorf("Host(%q) = %v, want %v", in, got, want)
		}
	}
}
