package satchel

import (
	"strings"
	"unicode/utf8"
)

// IsBinary reports whether content is binary: not valid UTF-8, or holding
// a NUL byte. Line operations refuse such content; read_file shows it as
// an image or a notice, and grep skips it.
func IsBinary(content string) bool {
	return strings.IndexByte(content, 0) >= 0 || !utf8.ValidString(content)
}

// Content types that FileType reports.
const (
	TypeText   = "text/plain; charset=utf-8"
	TypeBinary = "application/octet-stream"
)

// FileType sniffs content's type from its first bytes: the image types
// an MCP client can show (image/png, image/jpeg, image/gif, image/webp),
// a few other common binary formats, else TypeText for text and
// TypeBinary for other binary content.
func FileType(content string) string {
	for _, s := range sniffers {
		if strings.HasPrefix(content, s.prefix) && (s.at == "" || len(content) >= 12 && content[8:12] == s.at) {
			return s.typ
		}
	}
	if IsBinary(content) {
		return TypeBinary
	}
	return TypeText
}

var sniffers = []struct{ prefix, at, typ string }{
	{"\x89PNG\r\n\x1a\n", "", "image/png"},
	{"\xff\xd8\xff", "", "image/jpeg"},
	{"GIF87a", "", "image/gif"},
	{"GIF89a", "", "image/gif"},
	{"RIFF", "WEBP", "image/webp"},
	{"%PDF-", "", "application/pdf"},
	{"PK\x03\x04", "", "application/zip"},
	{"\x1f\x8b", "", "application/gzip"},
}

// IsImage reports whether a FileType is one of the image types an MCP
// client can show.
func IsImage(typ string) bool {
	switch typ {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return true
	}
	return false
}
