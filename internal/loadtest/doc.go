// Package loadtest is the multi-process load on PostgreSQL: processes of
// 16 concurrent clients each, against one database, doing a mix of
// appends, edits, writes and reads on shared and private threads, then a
// check that every acknowledged operation is reflected exactly.
//
// Its test runs the load with 1, 2 and 4 processes and reports the
// throughput of each, with where the CPU went (satchel's processes,
// PostgreSQL, the rest of the machine). It is long: it runs only with
// SATCHEL_LONG_TESTS=1 and SATCHEL_TEST_POSTGRES set (.ci/run sets both).
// SATCHEL_LOADTEST_SECONDS sets the duration of the 4-process run
// (default 60; the 1- and 2-process runs take a third of it). The test
// re-executes its own binary as the client processes; `satchel bench
// --workload w5` re-executes satchel and adds a network delay.
package loadtest
