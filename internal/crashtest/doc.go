// Package crashtest holds satchel's multi-process tests, on SQLite (one
// file shared by several processes) and PostgreSQL (one database):
//
//   - the kill loop (kill_test.go): a writer process is killed with
//     SIGKILL at random moments, again and again; after each kill the
//     database must open, every write the writer had acknowledged must be
//     there exactly, and no file may be partial;
//   - cross-process concurrency (crossprocess_test.go): processes appending
//     to one file of one thread, editing anchors that stay unique, racing
//     on a precondition (IfHash), filling a bounded workspace, and writing
//     while another process runs garbage collection.
//
// The tests re-execute the test binary as their child processes (TestMain
// dispatches on SATCHEL_CRASHTEST_ROLE). The kill loop is long: it runs
// only with SATCHEL_LONG_TESTS=1 (set by .ci/run). PostgreSQL variants run
// when SATCHEL_TEST_POSTGRES names a server, each in a schema of its own.
// The package has no non-test code.
package crashtest
