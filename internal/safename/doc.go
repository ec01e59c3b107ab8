// Package safename turns a free-form name (a scenario, a run, a test) into
// one path element that is safe on every file system codegenie writes to:
// no separators, no leading dot, no characters a shell or a file system
// treats specially, bounded length, and distinct names stay distinct.
package safename
