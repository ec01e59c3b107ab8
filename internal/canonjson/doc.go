// Package canonjson rewrites a JSON text in the canonical form that
// package events specifies for payloads (see events.Canonical): object
// keys sorted by the bytes of their decoded UTF-8, a repeated key keeping
// its last value, no insignificant whitespace, strings escaped exactly as
// encoding/json escapes them with HTML escaping off, integers that fit an
// int64 or uint64 as their exact digits and every other number as
// encoding/json writes a float64.
//
// It works in one pass over the input: it validates, unescapes and
// re-escapes as it copies, and reorders an object's members only when they
// are not already in order. It does not decode into Go values. Nesting is
// limited to MaxDepth, as in encoding/json, so input from other machines
// cannot exhaust the stack.
//
// AppendOmitNull makes the same form without the object members whose
// value is null: the form package cassettes matches request bodies by,
// since to the JSON APIs it serves a member set to null means what the
// member absent means.
//
// It is not a general JSON library; it is the one place where canonical
// bytes are made, shared by package events, the JSON field diff and
// request matching.
package canonjson
