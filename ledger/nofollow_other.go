//go:build !unix

package ledger

// oNoFollow is 0 where the system has no O_NOFOLLOW (Windows): an Lstat
// before opening and the identity check after it refuse a link instead.
const oNoFollow = 0
