package cli

import (
	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
)

// keyFlag is the --idempotency-key flag of a mutating command.
type keyFlag struct{ key string }

// addKeyFlag gives cmd --idempotency-key.
func addKeyFlag(cmd *cobra.Command) *keyFlag {
	f := &keyFlag{}
	cmd.Flags().StringVar(&f.key, "idempotency-key", "",
		"run once under key `K`: a retry with the same K and arguments within the retention (24 h) returns the first result and changes nothing")
	return f
}

// opts returns the option the flag gives (none when it is unset).
func (f *keyFlag) opts() []satchel.WriteOption {
	if f.key == "" {
		return nil
	}
	return []satchel.WriteOption{satchel.IdempotencyKey(f.key)}
}
