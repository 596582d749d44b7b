package mcpserver

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
)

// Every mutating tool (file tools and a store's generated tools) takes an
// optional idempotency_key (satchel.IdempotencyKey).

var keyProp = opt("idempotency_key", str("Optional: a key of your choosing (1 to 128 printable ASCII characters, no spaces) that makes this call safe to retry: the same call again with the same key returns the first result and changes nothing; the same key with different arguments is refused."))

const keySentence = " With idempotency_key, a retry (after a lost answer, say) returns the first call's result instead of applying twice."

// keyOpts returns the call's idempotency key as an option (none when the
// call has none).
func (c *call) keyOpts() []satchel.WriteOption {
	k, ok := c.a.str("idempotency_key", false)
	if !ok {
		return nil
	}
	return []satchel.WriteOption{satchel.IdempotencyKey(k)}
}

// clientInfo returns the name and version the client gave in its
// initialize request ("" when it gave none).
func clientInfo(req *mcp.CallToolRequest) (name, version string) {
	if req == nil || req.Session == nil {
		return "", ""
	}
	p := req.Session.InitializeParams()
	if p == nil || p.ClientInfo == nil {
		if req.Params != nil {
			return metaClient(req.Params) // 2026-07-28: in each request
		}
		return "", ""
	}
	return p.ClientInfo.Name, p.ClientInfo.Version
}

// identity is the session's identity with the call's client.
func (c *call) identity() Identity {
	id := c.se.identity()
	id.Client, id.ClientVersion = c.client, c.clientVersion
	return id
}
