package cli

import (
	"encoding/hex"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/bounded"
	"github.com/satchel-dev/satchel/internal/envelope"
)

// untrustedResult is what `untrusted --json` prints.
type untrustedResult struct {
	Text  string `json:"text"`
	Nonce string `json:"nonce"`
}

func newUntrustedCmd(a *app) *cobra.Command {
	var nonce string
	cmd := &cobra.Command{
		Use:     "untrusted",
		GroupID: groupTools,
		Short:   "Wrap standard input in the untrusted-data envelope",
		Long: `Wrap standard input before it goes back into a prompt (DESIGN §5): a preface
line saying the text inside the tags is data, not instructions, the open
tag <untrusted_input_NONCE>, the text with every "<" written as "&lt;",
and the close tag, each on its own line. No text can close the envelope
early or open a tag of its own.

NONCE is 128 random bits, new for each run; --nonce HEX (32 hex digits)
reuses one, so that several texts of one prompt share their tags.

Prints the envelope followed by a newline; with --json,
{"text": ENVELOPE, "nonce": HEX}.`,
		Example: `  satchel fs read notes/from-web.md | satchel untrusted
  satchel untrusted --nonce 0123456789abcdef0123456789abcdef < page.txt`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var n envelope.Nonce
			if cmd.Flags().Changed("nonce") {
				b, err := hex.DecodeString(nonce)
				if err != nil || len(b) != len(n) {
					return refuse("invalid nonce %q: must be 32 hexadecimal digits", nonce)
				}
				copy(n[:], b)
			} else {
				var err error
				if n, err = envelope.NewNonce(); err != nil {
					return err
				}
			}
			in, err := bounded.ReadString(a.stdin, satchel.DefaultMaxFileBytes, 0, "standard input", "the per-file limit")
			if err != nil {
				return err
			}
			wrapped := envelope.Wrap(n, in)
			return a.emit(untrustedResult{Text: wrapped, Nonce: n.String()}, text(wrapped+"\n"))
		},
	}
	cmd.Flags().StringVar(&nonce, "nonce", "", "use this nonce (`HEX`, 32 digits) instead of a new one")
	return cmd
}
