// Package upgradetest holds the test of a rolling upgrade on PostgreSQL
// (upgrade_test.go): a satchel built from an earlier commit and the
// current one serve one database at once, and the contract migration
// waits for the earlier one to stop (docs/operations.md, "Upgrades").
package upgradetest
