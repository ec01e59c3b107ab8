// Package promptformat holds the fixed text of the prompt format: the
// section headings, the instruction lines and the labels that the User text
// of package prompt is made of. The prompt builder writes them and
// internal/promptparse reads them back, so both sides spell each line from
// one place. It is a package of its own because internal/promptparse
// imports prompt: the lines live below both.
//
// The format itself (the order of the sections, quoting, the fenced blocks
// and their info strings) is specified in the documentation of package
// prompt, which owns it. This package holds no logic and not the System
// text, which nothing parses. Any edit here changes the bytes the builder
// produces: bump prompt.TemplateVersion with it.
package promptformat
