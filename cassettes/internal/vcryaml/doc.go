// Package vcryaml decodes go-vcr cassette files (format version 2) as
// gopkg.in/yaml.v3 writes them, which is how go-vcr v3 and v4 save, straight
// into go-vcr v3's types in one pass over the text, without a YAML node
// tree or reflection. It is the cassettes package's fast path: it knows the
// go-vcr v3 schema and nothing else.
//
// It is not a YAML parser. Decode accepts a strict subset of YAML and
// reports any other text as not decoded (ok false), and the caller then
// decodes that text with yaml.v3 instead, which also reports the errors:
// this package never reports one. For every text Decode accepts, yaml.v3
// decodes the same interactions (same field values, nil and empty
// collections alike), the same line for each interaction, and the same
// header values with their lines; a differential fuzz test in package
// cassettes holds the two equal.
//
// The subset, which covers everything yaml.v3's encoder writes for a
// cassette of valid UTF-8 text:
//
//   - the text is valid UTF-8 holding only characters yaml.v3 reads, and no
//     carriage return, byte order mark, or Unicode line or paragraph
//     separator (U+0085, U+2028, U+2029);
//   - an optional first line "---", then one block mapping at column 0 with
//     the keys "version" (exactly 2) and "interactions"; no other document
//     marker, directive, comment, anchor, alias, tag or flow collection
//     except an empty "[]" or "{}";
//   - block mappings and sequences indented with spaces; mapping keys are
//     plain, start with a letter or digit, hold only letters, digits, "_",
//     "." and "-", and appear once per mapping; only go-vcr v3's field
//     names are accepted in interactions, requests and responses;
//   - scalars on one line, plain (not null: "~", "null" or empty), single-
//     or double-quoted (every yaml.v3 escape), or literal block scalars
//     ("|" with optional chomping and indentation indicators) for string
//     fields, whose lines are empty or hold a non-space character;
//   - integers in decimal without a sign or leading zeros other than "-",
//     booleans written true or false (any of yaml.v3's three casings), and
//     durations as time.ParseDuration reads them, with a unit.
package vcryaml
