//go:build !linux

package childproc

// marksSupported says whether processes are found by their mark: not
// here, where there is no /proc to read a process's environment from.
const marksSupported = false

// proc is a process a child left running.
type proc struct {
	pid, pgrp int
	comm      string
}

// groupMembers is not known here (no /proc).
func groupMembers(int) []proc { return nil }

// killMarked finds nothing here (no /proc).
func killMarked(string) []proc { return nil }
