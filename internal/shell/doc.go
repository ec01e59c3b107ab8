// Package shell quotes words for the commands codegenie prints for people
// to copy into a POSIX shell (reproduce, compare, re-record).
//
// It is not a shell parser and runs nothing.
package shell
