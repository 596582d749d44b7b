//go:build satchel_upgradetest

package postgres

import (
	"fmt"

	"github.com/satchel-dev/satchel/backend/internal/sqlmigrate"
)

// With the build tag satchel_upgradetest (internal/upgradetest builds
// satchel so), two migrations follow the real ones: an expand one that
// adds a table and a contract one that drops a column of it. They prove
// the contract path of a rolling upgrade while satchel has no real
// contract migration.
func init() {
	extraMigrations = func(n int) []sqlmigrate.Migration {
		return []sqlmigrate.Migration{
			{Version: n + 1, Name: fmt.Sprintf("%04d_upgrade_probe.sql", n+1), Kind: sqlmigrate.Expand,
				SQL: "CREATE TABLE upgrade_probe (x integer, y integer)"},
			{Version: n + 2, Name: fmt.Sprintf("%04d_upgrade_probe_drop_y.sql", n+2), Kind: sqlmigrate.Contract,
				SQL: "-- satchel:contract\nALTER TABLE upgrade_probe DROP COLUMN y"},
		}
	}
}
