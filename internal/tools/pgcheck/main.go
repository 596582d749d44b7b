// Command pgcheck exits 0 when the PostgreSQL server at the URL given as its
// argument answers, and 1 otherwise (used by .ci/run).
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: pgcheck URL")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, os.Args[1])
	if err == nil {
		err = conn.Ping(ctx)
		conn.Close(ctx)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgcheck:", err)
		os.Exit(1)
	}
}
