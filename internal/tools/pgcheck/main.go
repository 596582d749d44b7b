// Command pgcheck exits 0 when the PostgreSQL server at the URL given as its
// argument answers, and 1 otherwise (used by .ci/run).
//
// With -vacuum-catalogs it also compacts the database's system catalogs
// that creating and dropping schemas leaves full of dead rows: the
// PostgreSQL tests give each test a schema of its own, thousands a run, and
// on a server without autovacuum the catalogs grew by hundreds of MB from
// run to run (pg_attribute 365 MB for 742 live rows, 4 Dec 2026), which
// made every schema's creation several times slower. A role that may not
// vacuum them gets a warning, not a failure.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
)

// catalogs are the system catalogs a schema's creation and drop write.
const catalogs = "pg_catalog.pg_attribute, pg_catalog.pg_class, pg_catalog.pg_depend, pg_catalog.pg_type, " +
	"pg_catalog.pg_index, pg_catalog.pg_constraint, pg_catalog.pg_trigger, pg_catalog.pg_attrdef, " +
	"pg_catalog.pg_statistic, pg_catalog.pg_namespace, pg_catalog.pg_proc, pg_catalog.pg_init_privs"

func main() {
	vacuum := flag.Bool("vacuum-catalogs", false, "also compact the system catalogs that the tests' schemas fill with dead rows")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: pgcheck [-vacuum-catalogs] URL")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, flag.Arg(0))
	if err == nil {
		err = conn.Ping(ctx)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgcheck:", err)
		os.Exit(1)
	}
	defer conn.Close(context.Background())
	if *vacuum {
		vctx, vcancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer vcancel()
		if _, err := conn.Exec(vctx, "VACUUM FULL "+catalogs); err != nil {
			fmt.Fprintln(os.Stderr, "pgcheck: warning: the system catalogs were not vacuumed:", err)
		}
	}
}
