// Package markdown writes the few Markdown constructs codegenie's
// commands put in a CI job summary (a GitHub Actions step summary): code
// spans and fenced code blocks that hold any text, backticks included,
// without it being read as Markdown or HTML.
package markdown
