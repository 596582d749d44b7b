package mcpserver

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/satchel-dev/satchel"
)

// Binary files over MCP (docs/decisions/0045-binary-files-over-mcp.md): a
// file that is not valid UTF-8 or holds NUL bytes is never sent as text.
// read_file returns an image as image content and anything else as a
// notice; write_file takes base64; grep skips binary files and says how
// many.

// MaxImageBytes is the largest image read_file returns as image content;
// a larger one gets the notice other binary files get.
const MaxImageBytes = 5 << 20

// binaryRead is read_file's outcome for a binary file.
func binaryRead(path string, res satchel.ReadResult) *outcome {
	structured := map[string]any{"text": "", "binary": true, "type": res.Type, "size": res.Size}
	if satchel.IsImage(res.Type) && res.Size <= MaxImageBytes {
		return &outcome{
			image:      &mcp.ImageContent{Data: []byte(res.Data), MIMEType: res.Type},
			structured: structured,
		}
	}
	why := "read_file returns text and images only"
	if satchel.IsImage(res.Type) {
		why = fmt.Sprintf("images over %d bytes are not returned", MaxImageBytes)
	}
	return &outcome{
		text:       fmt.Sprintf("[%s is a binary file: %d bytes, %s; %s]", path, res.Size, res.Type, why),
		structured: structured,
	}
}

// decodeContent decodes write_file's content as its encoding says.
func decodeContent(content, encoding string) (string, error) {
	switch encoding {
	case "", "utf-8", "utf8", "UTF-8":
		return content, nil
	case "base64":
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(content))
		if err != nil {
			return "", &satchel.Error{Kind: satchel.ErrInvalidArgument, Msg: fmt.Sprintf("content is not valid base64: %v", err)}
		}
		return string(b), nil
	}
	return "", &satchel.Error{Kind: satchel.ErrInvalidArgument, Msg: fmt.Sprintf(`encoding must be "utf-8" or "base64", was %q`, encoding)}
}

func skippedBinaryNotice(n int) string {
	if n == 1 {
		return "[skipped 1 binary file]"
	}
	return fmt.Sprintf("[skipped %d binary files]", n)
}
