package mcpserver

import (
	"context"
	"errors"
	"mime"
	"net/url"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
)

// Files are also MCP resources. A file's URI is ResourceScheme followed by
// its path, each segment percent-encoded as a URL path segment:
// notes/plan.md is satchel:///notes/plan.md, and "my notes/a b.md" is
// satchel:///my%20notes/a%20b.md. The URI names a file of the session's
// own scope and thread (the scope is never in the URI). resources/list
// lists the files of the thread's head in path order, a page at a time;
// resources/read reads one, through the template ResourceTemplate.
const (
	ResourceScheme   = "satchel:///"
	ResourceTemplate = "satchel:///{+path}"
)

// resourcePageSize is how many files one resources/list page holds.
const resourcePageSize = 500

// FileURI returns the resource URI of a workspace path.
func FileURI(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return ResourceScheme + strings.Join(segs, "/")
}

// uriPath returns the workspace path a resource URI names.
func uriPath(uri string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, ResourceScheme)
	if !ok {
		return "", false
	}
	p, err := url.PathUnescape(rest)
	if err != nil {
		return "", false
	}
	return p, true
}

func (s *Server) addResources(srv *mcp.Server) {
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "file",
		Title:       "A file of the workspace",
		Description: "A file of the workspace by its path, e.g. " + ResourceScheme + "notes/plan.md: its whole content.",
		URITemplate: ResourceTemplate,
	}, s.readResource)
}

// mimeType guesses a file's type from its extension; text/plain when
// unknown, since workspaces hold text.
func mimeType(p string) string {
	if t := mime.TypeByExtension(path.Ext(p)); t != "" {
		return t
	}
	switch path.Ext(p) {
	case ".md", ".markdown":
		return "text/markdown"
	}
	return "text/plain"
}

// listResources serves resources/list: the files of the session's
// workspace, a page at a time; the cursor is the last path of the
// previous page.
func (s *Server) listResources(ctx context.Context, se *session, p *mcp.ListResourcesParams) (*mcp.ListResourcesResult, error) {
	after := ""
	if p != nil && p.Cursor != "" {
		c, ok := uriPath(p.Cursor)
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid cursor"}
		}
		after = c
	}
	ws, err := se.workspace(ctx, &s.cfg)
	if err != nil {
		return nil, err
	}
	paths, err := ws.List(ctx, "", satchel.ListOptions{After: after, Limit: resourcePageSize + 1})
	if err != nil {
		return nil, err
	}
	res := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}}
	res.CacheScope = "private" // served here, not by the SDK's handler (SetCacheable)
	if len(paths) > resourcePageSize {
		paths = paths[:resourcePageSize]
		res.NextCursor = FileURI(paths[len(paths)-1])
	}
	for _, p := range paths {
		name := p
		if s.cfg.WrapUntrusted {
			// A name is one line: escaped as the envelope escapes
			// content, so that it cannot open or close a tag.
			name = strings.ReplaceAll(p, "<", "&lt;")
		}
		res.Resources = append(res.Resources, &mcp.Resource{
			URI: FileURI(p), Name: name, MIMEType: mimeType(p),
		})
	}
	return res, nil
}

// readResource serves resources/read: the whole content of a file of the
// session's workspace. Errors carry satchel's messages.
func (s *Server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	se := sessionFrom(ctx)
	if se == nil {
		return nil, errors.New("mcpserver: resource read outside a session")
	}
	uri := req.Params.URI
	p, ok := uriPath(uri)
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	ws, err := se.workspace(ctx, &s.cfg)
	if err != nil {
		return nil, err
	}
	// A read of a thread the session's header mistyped is refused as a
	// tool's read is (the list stays empty: clients list at connect).
	content, err := "", se.checkNamed(ctx, s.cfg.Store)
	if err == nil {
		content, err = ws.Read(ctx, p)
	}
	if err != nil {
		code := int64(jsonrpc.CodeInvalidParams)
		if !errors.Is(err, satchel.ErrNotFound) && !errors.Is(err, satchel.ErrInvalidPath) && !errors.Is(err, satchel.ErrIsDirectory) {
			code = jsonrpc.CodeInternalError
		}
		return nil, &jsonrpc.Error{Code: code, Message: err.Error()}
	}
	rc := &mcp.ResourceContents{URI: uri, MIMEType: mimeType(p)}
	if utf8.ValidString(content) {
		rc.Text = content
		if s.cfg.WrapUntrusted {
			rc.Text = se.run.Untrusted(content)
		}
	} else {
		rc.Blob = []byte(content)
		rc.MIMEType = "application/octet-stream"
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{rc}}, nil
}
