package mcpserver

import (
	"encoding/json"
	"net/http"
)

// ProtectedResourcePath serves the server's OAuth 2.0 protected resource
// metadata (RFC 9728), which the MCP authorization spec has clients read
// when a request is refused with 401: it says that satchel takes bearer
// tokens in the Authorization header and names no authorization server,
// so a client knows there is no interactive OAuth flow to start and asks
// for a token instead (satchel token create).
const ProtectedResourcePath = "/.well-known/oauth-protected-resource"

// protectedResource is the metadata document of RFC 9728 §2.
type protectedResource struct {
	Resource               string   `json:"resource"`
	ResourceName           string   `json:"resource_name"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceDocumentation  string   `json:"resource_documentation,omitempty"`
}

// origin is the scheme and host the request reached the server at.
func origin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// resourceMetadataURL is where the metadata of the server r reached is.
func resourceMetadataURL(r *http.Request) string { return origin(r) + ProtectedResourcePath }

func (s *Server) protectedResource(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	// A public document, read by browser-based clients from their origin.
	w.Header().Set("Access-Control-Allow-Origin", "*")
	_ = json.NewEncoder(w).Encode(protectedResource{
		Resource:               origin(r) + MCPPath,
		ResourceName:           "satchel (bearer tokens made with satchel token create; no OAuth authorization server)",
		BearerMethodsSupported: []string{"header"},
	})
}
